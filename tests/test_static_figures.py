"""The static figures (the paper's, the small-multiples grid drawn still, the maths page's), tested without
Streamlit, against the science's numbers."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import plotly.graph_objects as go
import pytest
from support.figures import run

from polarize import simulate
from polarize.losses import KL, entropy
from polarize.plots import (
    comparison_figure,
    comparisons,
    gap_figure,
    paper,
    round_significant,
    scores_figure,
    token_colors,
)
from polarize.plots.numbers import rounded
from polarize.presets import paper_regression, paper_tied
from polarize.science import format_time, kl_floor, polarization_rate


def curves(fig: go.Figure) -> dict[tuple[str, str], tuple[list, list]]:
    """(subplot title, curve name) -> its points, for the curves (not the riding markers)."""
    titles = {f"x{'' if i == 0 else i + 1}": a.text for i, a in enumerate(fig.layout.annotations)
              if a.xref == "paper"}
    return {(titles[t.xaxis], t.name): (list(t.x), list(t.y)) for t in fig.data if t.name != "now"}


@cache
def tied_runs() -> dict[int, object]:
    return {D: simulate(paper_tied(D).varied(horizon=20.0, samples=30)) for D in (10, 20)}


def test_the_papers_tied_figure_is_the_pages_drawn_static():
    runs = tied_runs()
    page = go.Figure(comparisons.tied_figure(runs, frames=12))
    exported = go.Figure(paper.tied_figure({f"D = {D}": r for D, r in runs.items()}))
    assert page.frames and not exported.frames and not exported.layout.updatemenus
    # Two rows: the columns titled once, each row labelled with its D (the figure's y titles).
    drawn = [{(t.xaxis, t.name): (list(t.x), list(t.y)) for t in fig.data if t.name != "now"}
             for fig in (page, exported)]
    assert drawn[1] == drawn[0] and ("x4", "loss") in drawn[0]
    assert page.layout.yaxis4.title.text == exported.layout.yaxis4.title.text == "D = 20"
    assert exported.layout.width == paper.WIDTH


def test_the_papers_regression_figure_is_the_pages_with_the_kappa_summary():
    runs = {k: simulate(paper_regression(k).varied(horizon=5.0, samples=20)) for k in (1.0, 4.0)}
    page = curves(go.Figure(comparisons.regression_figure(runs, frames=12)))
    exported = curves(go.Figure(paper.regression_figure({f"kappa = {k:g}": r for k, r in runs.items()})))
    assert {key: exported[key] for key in page} == page
    summary = {name: points for (title, name), points in exported.items() if title.startswith("final")}
    assert summary["entropy H(s)"] == ([1.0, 4.0], rounded([r.entropy[-1] for r in runs.values()]))
    assert summary["max s"][1] == rounded([r.s[-1].max() for r in runs.values()])


def test_a_static_grid_has_no_markers_frames_or_controls():
    t = np.array([0.0, 0.1, 1.0, 10.0])
    panels = [comparisons.Panel(title="a", lines=(comparisons.Line(x=t, y=t + 1, name="u"),))]
    animated = go.Figure(comparisons.animated_grid(panels, cols=1, frames=4))
    static = go.Figure(comparisons.animated_grid(panels, cols=1, animated=False))
    assert [tr.uid for tr in animated.data] == ["panel0-line0", "panel0-now"]
    assert [tr.uid for tr in static.data] == ["panel0-line0"]
    assert not static.frames and not static.layout.updatemenus and static.layout.meta["animated"] == []
    assert list(static.data[0].y) == list(animated.data[0].y) == [1.1, 2.0, 11.0]  # t = 0 left out


def test_the_kl_floor_comes_from_the_loss():
    result = run(loss="kl")
    target = np.asarray(result.experiment.target)
    assert kl_floor(result.experiment) == KL(target).floor == pytest.approx(float(entropy(target)))
    assert kl_floor(run().experiment) is None
    fig = go.Figure(comparisons.losses_figure({"logistic": run(), "kl": result}, frames=5))
    (floor,) = [t for t in fig.data if t.name.startswith("H(p*)")]
    assert list(floor.y) == rounded([KL(target).floor] * 2)
    # On a phone the legend's entries are short (plotly sets its columns as wide as the widest): the
    # floor's value is in its hover, the cross-entropy is "KL".
    phone = go.Figure(comparisons.losses_figure({"logistic": run(), "kl": result}, frames=5, narrow=True))
    names = {t.name for t in phone.data if t.showlegend is not False}
    assert "KL" in names and "H(p*)" in names and max(map(len, names)) <= 8, names
    (phone_floor,) = [t for t in phone.data if t.name == "H(p*)"]
    assert list(phone_floor.y) == list(floor.y)


# ---- helpers and static figures ------------------------------------------------------------


def test_round_significant_gives_short_numbers():
    x = np.array([0.123456789, 123456.789, -9.87654321e-12, 0.0, np.inf])
    r = round_significant(x, 5)
    assert [repr(v) for v in r.tolist()[:4]] == ["0.12346", "123460.0", "-9.8765e-12", "0.0"]
    assert np.isinf(r[4])


def test_format_time():
    assert [format_time(v) for v in (0, 0.1, 250, 1000, 1e4, 1.25e12, 2e-3)] == \
        ["0", "0.1", "250", "1000", "1e4", "1.25e12", "2e-3"]


def test_scores_figure_draws_each_score():
    result = run()
    fig = go.Figure(scores_figure(result, log_y=True))
    assert [t.name for t in fig.data] == [f"token {i}" for i in range(8)]
    assert [t.line.color for t in fig.data] == token_colors(8)
    keep = result.t > 0
    (third,) = [t for t in fig.data if t.name == "token 3"]
    assert list(third.y) == rounded(result.s[keep, 3]) and list(third.x) == rounded(result.t[keep])
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "log"


def test_comparison_figure_draws_each_run_and_the_references():
    a, b = run(), run(loss="square")
    fig = go.Figure(comparison_figure({"a": a, "b": b}, "entropy", reference=[math.log(8)]))
    assert [t.name for t in fig.data] == ["a", "b", f"{math.log(8):.3g}"]
    b_line, reference = fig.data[1:]
    assert list(b_line.y) == rounded(b.entropy[b.t > 0])
    assert list(reference.y) == rounded([math.log(8)] * 2) and reference.line.dash == "dash"
    assert fig.layout.xaxis.type == "log"
    empty = go.Figure(comparison_figure({}, "one_minus_max", log_y=True))  # the maths page adds its curves
    assert not empty.data and empty.layout.xaxis.range is None


def test_gap_figure_for_the_maths_page():
    result = run(n=5, d=5, horizon=1e8, seed=1)
    rate = polarization_rate(result)
    fig = go.Figure(gap_figure(rate))
    gap, sharp, theorem = fig.data
    assert list(gap.y) == rounded(rate.gap) and sharp.line.dash == "dash" and theorem.line.dash == "dot"
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.range[1] == 0.3
    assert fig.layout.yaxis.range[0] == pytest.approx(math.log10(rate.gap.min()) - 0.3)


def test_rate_figure_draws_the_corrected_asymptotics_and_it_meets_the_run():
    result = run(n=5, d=5, horizon=1e12, seed=1, a_init="zeros", a_scale=1.0)  # the Rates page's default
    rate = polarization_rate(result)
    fig = go.Figure(comparisons.rate_figure(result, rate, animated=False))
    gap, corrected = (next(tr for tr in fig.data if tr.name == name and tr.xaxis == "x")
                      for name in ("1 \u2212 max s (run)", "2(n\u22121)/(n (z \u2212 q\u0304)\u00b2)"))
    past = (rate.margin > rate.qbar) & (rate.corrected < 10)
    assert past.sum() > len(rate.t) // 2 and corrected.line.dash == "longdash"
    # The drawn curve is the science's numbers, at the science's times.
    assert list(corrected.x) == rounded(rate.t[past]) and list(corrected.y) == rounded(rate.corrected[past])
    # ... and it meets the run's own 1 - max s within 2.5% from t = 1e6 on (2.1% here; the issue measured
    # 1.8% on its run), where the uncorrected 2(n-1)/(n z^2) is still 30% off at t = 1e12.
    x, y_run, y_fit = (np.asarray(v, dtype=float) for v in (gap.x, gap.y, corrected.y))
    late = np.asarray(corrected.x) >= 1e6
    at = np.searchsorted(x, np.asarray(corrected.x)[late])
    assert np.allclose(x[at], np.asarray(corrected.x)[late])
    assert np.max(np.abs(y_run[at] / y_fit[late] - 1)) < 0.025
    assert rate.gap[-1] / rate.sharp[-1] > 1.3
