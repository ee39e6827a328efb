"""The paper's toy experiments: presets against the official loops, and the claims.

The notebook's seeds and draw order are rewritten here, and its loops come from
``tests/support/official_loops.py`` (also the benchmarks' baseline: one copy of them); the
presets' ``gd`` runs are compared with them at short horizons, and the flows
are then held to the paper's claims.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from support import official_loops as official

from polarize import simulate
from polarize.cli.reproduce import PAPER_FIGURES, reproduce
from polarize.plots.static import find_browser
from polarize.presets import NOTEBOOK_EPS, PRESETS, paper_regression, paper_tied
from polarize.science import compare_normalizers, flow_vs_descent, polarization_rate, sweep


def _official_comparison(loss, name, steps):
    np.random.seed(42)
    target = np.random.randn(10)
    target /= np.linalg.norm(target)
    np.random.seed(42)
    V = 0.1 * np.random.randn(10, 10)
    a = 1.0 * (np.ones(10) + np.random.randn(10) * 0.1)
    lr = 0.1 if loss == "square" else 0.5
    V, a = official.comparison(V, a, target, lr, steps, loss, normalizer=name)
    return official.NORMALIZERS[name][0](a), a


@pytest.mark.parametrize("loss", ["square", "logistic"])
@pytest.mark.parametrize("name", ["softmax", "sigmoid", "l2", "l1", "relu", "sum"])
def test_comparison_presets_retrace_the_official_loop(loss, name):
    steps = 300
    preset = PRESETS[f"paper-compare-{loss}"]
    lr = preset.experiment.lr
    r = simulate(preset.with_changes(normalizer=name, method="gd", horizon=steps * lr))
    alpha, a = _official_comparison(loss, name, steps)
    # The presets add the notebook's 1e-10 to the normalizing sums (eps): agreement to rounding.
    np.testing.assert_allclose(r.a[-1], a, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(r.s[-1], alpha, rtol=1e-13, atol=1e-14)


def test_l1_retraces_the_notebook_only_with_its_eps():
    steps = 1000  # until a coordinate comes within 1e-5 of l1's kink at a = 0
    preset = PRESETS["paper-compare-logistic"]
    assert preset.experiment.eps == NOTEBOOK_EPS == 1e-10
    _, a = _official_comparison("logistic", "l1", steps)
    gap = {eps: np.max(np.abs(simulate(preset.with_changes(normalizer="l1", method="gd", eps=eps,
                                                           horizon=steps * preset.experiment.lr)).a[-1] - a))
           for eps in (NOTEBOOK_EPS, 0.0)}
    assert gap[NOTEBOOK_EPS] < 1e-14 < 1e-12 < gap[0.0]


def test_tied_preset_retraces_the_official_loop():
    D, steps, lr = 10, 200, 0.05
    np.random.seed(42)
    target = np.random.randn(D)
    target /= np.linalg.norm(target)
    np.random.seed(42)
    np.random.randn(D, D)
    a = 1.0 * (np.ones(D) + np.random.randn(D) * 0.1)
    U, a = official.tied(np.eye(D, D) * 1.0, a, target, lr, steps)
    r = simulate(PRESETS["paper-tied-10"].with_changes(method="gd", horizon=steps * lr))
    np.testing.assert_allclose(r.a[-1], a, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(r.V_final, U, rtol=1e-10, atol=1e-12)


def test_regression_preset_is_the_official_loop_with_the_half_folded_into_lr():
    steps = 500
    np.random.seed(123)
    W = 0.00001 * np.random.randn(20, 20)
    a = 0.001 * np.random.randn(20)
    left, _, right = np.linalg.svd(np.random.randn(20, 20), full_matrices=False)
    X = left @ np.diag(np.linspace(1, 1 / 3, 20)) @ right
    beta = np.random.randn(20)
    W, a = official.regression(W, a, X, beta, 0.001, steps)
    r = simulate(dataclasses.replace(paper_regression(3), method="gd", horizon=steps * 0.002))
    np.testing.assert_allclose(r.a[-1], a, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(r.V_final, W, rtol=1e-9, atol=1e-14)


def test_larger_condition_numbers_polarize_more():
    entropies = [simulate(paper_regression(k)).entropy[-1] for k in (1, 3, 5)]
    assert entropies[0] > np.log(20) - 0.05  # kappa = 1 stays near uniform
    assert entropies[0] > entropies[1] > entropies[2]


def test_tied_winner_column_grows_while_the_others_stay_near_one():
    r = simulate(paper_tied(20))
    winner = r.winner_column_norm
    assert winner[-1] > 3 * winner[0]
    assert np.all(np.diff(winner[len(winner) // 2:]) > 0)
    others = np.delete(r.column_norms[-1], r.winner)
    assert np.all(np.abs(others - 1) < 0.3)


def test_sigmoid_leaves_alpha_unpolarized_where_softmax_polarizes():
    rows = {row.normalizer: row for row in compare_normalizers(
        PRESETS["paper-compare-logistic"].experiment, ("softmax", "sigmoid"))}
    assert rows["softmax"].max_s > 0.95
    assert rows["sigmoid"].entropy > np.log(10) - 0.01  # as spread as it started
    assert rows["softmax"].stayed_on_simplex and not rows["sigmoid"].stayed_on_simplex


def test_large_steps_change_the_winner_and_huge_ones_diverge_in_words_not_nan():
    preset = PRESETS["paper-compare-square"]
    small, large, unstable = flow_vs_descent(preset.with_changes(horizon=200), [0.1, 16.0, 40.0])
    assert small.same_winner and not small.diverged and small.distance.max() < 0.05
    assert not large.same_winner and not large.diverged and "too large" in large.message
    # lr = 40: the loss explodes (to ~1e8) without overflowing; lr = 400 overflows.
    assert unstable.diverged and "grew" in unstable.message
    (huge,) = flow_vs_descent(preset.with_changes(horizon=1e5), [400.0])
    assert huge.diverged and "diverges" in huge.message
    assert np.all(np.isfinite(huge.descent.s)) and np.all(np.isfinite(huge.distance))


def test_rate_slope_is_about_minus_two_and_the_sharp_asymptotic_fits():
    rate = polarization_rate(simulate(PRESETS["paper-logistic"].with_changes(horizon=1e14, samples=200)))
    assert -3.0 < rate.slope < -1.8
    assert 0.5 < rate.gap[-1] / rate.sharp[-1] < 2.0
    assert np.all(np.diff(rate.gap[rate.t > 1e3]) < 0)


def test_reproduce_writes_every_figure_and_a_summary(tmp_path):
    summary = reproduce(tmp_path, images=False, log=lambda line: None)
    for name in PAPER_FIGURES:
        assert (tmp_path / f"{name}.html").stat().st_size > 10_000
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert set(saved["figures"]) == set(PAPER_FIGURES)
    assert saved["figures"]["logistic"]["softmax"]["max_s"] > 0.95
    assert summary["images"] == "not requested"


def test_every_paper_figure_is_valid_plotly_at_the_export_width():
    """The paper's figures are built without validation (as the pages' are): plotly checks them here."""
    import plotly.graph_objects as go

    from polarize.plots.paper import WIDTH

    for name, figure in PAPER_FIGURES.items():
        fig = go.Figure(figure.draw({label: simulate(e) for label, e in figure.runs().items()}))  # validates
        fig.update_layout(title_text=figure.title)
        checked = go.Figure(fig.to_dict())  # raises on any property plotly does not know
        assert checked.layout.width == WIDTH and checked.layout.title.text == figure.title, name
        assert checked.layout.margin.t >= 70 and checked.layout.title.yanchor == "top", name


@pytest.mark.slow
@pytest.mark.skipif(find_browser() is None, reason="no Chromium for kaleido's static export")
def test_reproduce_exports_png_and_svg_through_the_system_browser(tmp_path, monkeypatch):
    import polarize.cli.reproduce as module

    one = {"logistic": module.PAPER_FIGURES["logistic"]}
    monkeypatch.setattr(module, "PAPER_FIGURES", one)
    summary = reproduce(tmp_path, log=lambda line: None)
    assert summary["images"] == "png, svg"
    assert (tmp_path / "logistic.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (tmp_path / "logistic.svg").read_bytes()[:500]


def test_varied_redraws_exactly_the_arrays_a_change_invalidates():
    e = PRESETS["paper-tied-10"].experiment
    assert e.varied(lr=0.1).a0 == e.a0 and e.varied(lr=0.1).V0 == e.V0
    assert e.varied(a_scale=0.2).a0 is None and e.varied(a_scale=0.2).V0 == e.V0
    assert e.varied(V_scale=2.0).V0 is None and e.varied(V_scale=2.0).target == e.target
    assert all(getattr(e.varied(seed=1), k) is None for k in ("a0", "V0", "target"))
    given = np.linspace(-1.0, 1.0, e.n)  # a numpy array is taken as given, not compared
    assert np.array_equal(e.varied(a0=given).a0, given) and e.varied(a0=given).V0 == e.V0


def test_sweeping_kappa_redraws_the_design_for_each_value():
    results = sweep(paper_regression(1), "kappa", [1.0, 4.0])
    designs = [np.linalg.svd(np.asarray(r.experiment.X), compute_uv=False) for r in results.values()]
    assert [round(float(v[0] / v[-1]), 9) for v in designs] == [1.0, 4.0]
    assert results[4.0].entropy[-1] < results[1.0].entropy[-1]


def test_reproduce_without_a_browser_says_so_and_writes_html_only(tmp_path, monkeypatch):
    import polarize.cli.reproduce as module

    monkeypatch.setattr(module, "PAPER_FIGURES", {"kl": module.PAPER_FIGURES["kl"]})
    monkeypatch.setattr(module, "find_browser", lambda: None)
    said = []
    summary = reproduce(tmp_path, log=said.append)
    assert summary["images"].startswith("skipped")
    assert any("no Chromium" in line for line in said)
    assert (tmp_path / "kl.html").exists() and not (tmp_path / "kl.png").exists()


def test_reproduce_without_kaleido_names_the_extra_to_install(tmp_path, monkeypatch):
    import importlib.util

    import polarize.cli.reproduce as module

    monkeypatch.setattr(module, "PAPER_FIGURES", {"kl": module.PAPER_FIGURES["kl"]})
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *rest: None if name == "kaleido" else real(name, *rest))
    said = []
    summary = reproduce(tmp_path, log=said.append)
    assert "polarize[export]" in summary["images"] and any("polarize[export]" in line for line in said)
    assert (tmp_path / "kl.html").exists() and not (tmp_path / "kl.png").exists()
