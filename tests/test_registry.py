"""Registries own their entries: a normalizer or a loss registered at run time, in this file only, is
everywhere.

A tempered softmax under a new name, registered with ``monkeypatch.setitem(NORMALIZERS, ...)`` and no
other file changed, is offered by the Explorer's menu (and runs from its link), joins the Normalizers
page, is said to be missing from the comparison computed ahead, and is listed and run by the command line.
An exponential loss on the margin, registered with ``monkeypatch.setitem(LOSSES, ...)`` the same way,
runs as its own flow, is checked as its facts say, joins the Loss page, the Explorer's menu, the command
line and a sweep. So does Heun's method (``METHODS``): its steps, one start or many, the Explorer's
method and learning rate, the command line and a sweep.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from support.app import page as app_page
from support.controls import control

from polarize import Experiment, simulate, simulate_many
from polarize.cli import main
from polarize.config import ConfigError
from polarize.losses import LOSSES, LinearLoss, LossKind
from polarize.methods import METHODS, Method
from polarize.normalizers import NORMALIZERS, Softmax, make_normalizer
from polarize.science import title_lines
from polarize.switching import kinks_of
from polarize.web import pages, precomputed
from polarize.web.links import read_link
from polarize.web.pages import normalizers

LABEL = "softmax at T = 2 (tempered)"


@dataclass(frozen=True, kw_only=True)
class Tempered:
    """softmax(a / 2), under a name of its own."""

    name: ClassVar[str] = "tempered"
    label: ClassVar[str] = LABEL
    short: ClassVar[str] = "tempered"
    on_simplex: ClassVar[bool] = True
    replicator: ClassVar[bool] = True

    def forward(self, a: np.ndarray) -> np.ndarray:
        return Softmax(temperature=2.0).forward(a)

    def vjp(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        return Softmax(temperature=2.0).vjp(a, g)

    def kinks(self) -> None:
        return None


@pytest.fixture
def tempered(monkeypatch):
    """Registered in this process; the pages' runs then run in it too (a worker imports polarize afresh,
    so on a server a new normalizer is a class in polarize/normalizers.py, which every process imports)."""
    monkeypatch.setitem(NORMALIZERS, Tempered.name, Tempered)
    monkeypatch.setenv("POLARIZE_APP_INPROCESS", "1")
    return Tempered.name


def test_the_engine_runs_it_as_softmax_at_that_temperature(tempered, flow_tol):
    e = Experiment(n=3, d=3, horizon=50.0, samples=20, seed=3)
    mine = simulate(Experiment(**{**e.to_dict(), "normalizer": tempered}))
    softmax = simulate(Experiment(**{**e.to_dict(), "temperature": 2.0}))
    assert mine.finished and kinks_of(make_normalizer(tempered)) is None
    assert np.allclose(mine.s, softmax.s, rtol=flow_tol.rtol, atol=flow_tol.atol)


def test_the_explorers_menu_offers_it_and_its_link_runs_it(tempered):
    spec = pages.by_name("explorer")
    (menu,) = [c for c in spec.controls if c.key == "normalizer"]
    assert tempered in menu.options and menu.name(tempered) == LABEL
    values, ignored = read_link(spec, {"normalizer": [tempered], "n": ["3"], "d": ["3"]})
    assert values["normalizer"] == tempered and not ignored
    view = spec.view(spec.make_job(values))
    assert view.error is None and view.data.experiment.normalizer == tempered


def test_the_explorers_widget_lists_it(tempered):
    at = app_page("explorer", timeout=120).run()
    box = control(at, key="explorer_normalizer")
    assert LABEL in box.options and len(box.options) == len(NORMALIZERS)


def test_the_normalizers_page_runs_it_with_the_others(tempered):
    spec = pages.by_name("normalizers")
    view = spec.view(spec.make_job({**spec.defaults(None), "horizon": 100.0}))
    assert view.error is None
    assert [row["normalizer"] for row in view.data.table] == list(NORMALIZERS)
    assert f"the {len(NORMALIZERS)} panels" in str(view.blocks)


def test_the_comparison_computed_ahead_says_it_does_not_hold_it(tempered):
    paper = {**normalizers.defaults("paper-compare-logistic"), "method": "gd"}
    rows = precomputed.stored_rows(normalizers.experiment(paper))
    assert rows is not None and tempered not in {row.normalizer for row in rows}
    words = precomputed.note(rows)
    assert words.startswith(precomputed.NOTE) and f"Not precomputed: {tempered} " in words


def test_the_command_line_lists_and_runs_it(tempered, tmp_path, capsys):
    assert main(["normalizers"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == len(NORMALIZERS) and listed[-1].split()[0] == tempered and LABEL in listed[-1]
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"n": 3, "d": 3, "normalizer": tempered, "horizon": 10.0}))
    assert main(["run", str(config), "-o", str(tmp_path / "out.json")]) == 0
    assert json.loads((tmp_path / "out.json").read_text())["config"]["normalizer"] == tempered


def test_labels_are_read_from_the_registry_when_asked(tempered):
    assert NORMALIZERS.labels[tempered] == LABEL and NORMALIZERS.names[-1] == tempered
    assert dict(LOSSES.labels) == {name: kind.label for name, kind in LOSSES.items()}


@pytest.mark.parametrize("name", list(NORMALIZERS))
def test_each_normalizers_simplex_fact_is_what_its_map_does(name):
    """``on_simplex`` is a fact of the map: on random logits its scores are distributions, or not all are."""
    a = np.random.default_rng(0).normal(scale=3.0, size=(200, 5))
    s = make_normalizer(name).forward(a)
    alive = np.any(s != 0, axis=1)  # relu's dead state (every score 0) is the exception the fact names
    on = np.all(s[alive] >= 0, axis=1) & np.isclose(s[alive].sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert on.all() if NORMALIZERS[name].on_simplex else not on.all()


# ---- a loss registered at run time ---------------------------------------------------------------

EXP_LABEL = "exponential (on the margin)"
EXP_WORDS = "The exponential loss never reaches its floor either: it keeps pushing, as the logistic loss."


@dataclass(frozen=True, eq=False)
class Exponential(LinearLoss):
    """``l = exp(-z)`` on the margin ``z = beta_*^T beta`` (``X`` is the 1 x d matrix ``beta_*^T``)."""

    def outer(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.exp(-w[..., 0]), -np.exp(-w)


EXPONENTIAL = LossKind(name="exponential", label=EXP_LABEL, short="exp",
                       build=lambda e: Exponential(np.asarray(e.target, dtype=float)[None, :]),
                       margin=True, words=EXP_WORDS)


@pytest.fixture
def exponential(monkeypatch):
    """Registered in this process; the pages' runs then run in it too (as ``tempered``'s)."""
    monkeypatch.setitem(LOSSES, EXPONENTIAL.name, EXPONENTIAL)
    monkeypatch.setenv("POLARIZE_APP_INPROCESS", "1")
    return EXPONENTIAL.name


def _exponential_flow(V0: np.ndarray, a0: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Scores (K, n) of the value model's flow under ``exp(-b.V s)``, softmax, by scipy on its own.

    ``dV/dt = e^{-z} b s^T``, ``da/dt = e^{-z} s * (p - s.p)`` with ``p = V^T b``, ``z = b.V s``."""
    d, n = V0.shape

    def field(_t, y):
        V, a = y[:d * n].reshape(d, n), y[d * n:]
        s = np.exp(a - a.max())
        s /= s.sum()
        p = V.T @ b
        c = np.exp(-(p @ s))
        return np.concatenate([(c * np.outer(b, s)).ravel(), c * s * (p - s @ p)])

    y = solve_ivp(field, (0.0, t[-1]), np.concatenate([V0.ravel(), a0]), t_eval=t, method="DOP853",
                  rtol=1e-11, atol=1e-13).y[d * n:].T
    s = np.exp(y - y.max(axis=1, keepdims=True))
    return s / s.sum(axis=1, keepdims=True)


def test_the_engine_runs_the_loss_as_its_own_flow(exponential, flow_tol):
    result = simulate(Experiment(n=3, d=3, loss=exponential, horizon=50.0, samples=20, seed=3,
                                 a_init="gaussian", a_scale=0.5))
    e = result.experiment
    assert result.finished and np.isclose(np.linalg.norm(e.target), 1.0)  # a direction, as its Target says
    mine = _exponential_flow(np.asarray(e.V0), np.asarray(e.a0), np.asarray(e.target), result.t)
    assert np.allclose(result.s, mine, rtol=flow_tol.rtol, atol=flow_tol.atol)
    z = np.asarray(e.target) @ result.V_final @ result.s[-1]
    assert result.loss[-1] == pytest.approx(np.exp(-z), rel=1e-9)


def test_the_configuration_checks_it_as_its_facts_say(exponential):
    for field, bad in (("kappa", {"kappa": 2.0}), ("X", {"X": [[1.0, 0.0, 0.0]], "y": [1.0]})):
        with pytest.raises(ConfigError) as caught:
            Experiment(n=3, d=3, loss=exponential, **bad)
        assert caught.value.field == field
    with pytest.raises(ConfigError, match="kappa: applies to the square loss only"):
        Experiment(n=3, d=3, loss=exponential, kappa=2.0)


def test_the_loss_page_runs_it_with_the_others(exponential):
    spec = pages.by_name("losses")
    view = spec.view(spec.make_job({**spec.defaults(None), "n": 3, "horizon": 100.0, "kappas": [1]}))
    assert view.error is None, view.error
    runs = [row["run"] for row in view.data.table if row["run"].startswith("loss=")]
    assert runs == [f"loss={name}" for name in LOSSES] and runs[-1] == f"loss={exponential}"
    losses = view.plots()[0]
    assert f"Same start, {len(LOSSES)} losses." in losses.caption and EXP_WORDS in losses.caption
    titles = [note["text"].replace("<br>", " ") for note in losses.figure["layout"]["annotations"]]
    assert f"{EXPONENTIAL.short}: scores" in titles  # its own panel of scores (short: the legend beside)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # a NaN logit from a probe outside the triangle
def test_the_phase_page_runs_it_with_its_facts(exponential):
    spec = pages.by_name("phase")
    values = {**spec.defaults(None), "loss": exponential, "resolution": 30, "horizon": 100.0}
    view = spec.view(spec.make_job(values))
    assert view.error is None, view.error
    basins = {plot.key: plot for plot in view.plots()}["basins"].caption
    assert f"({EXPONENTIAL.naive})" in basins  # its naive winner in words
    assert f"Under {EXP_LABEL} loss, a start that favours another token" in basins  # a margin loss's words


def test_the_explorers_loss_menu_offers_it_and_its_link_runs_it(exponential):
    spec = pages.by_name("explorer")
    (menu,) = [c for c in spec.controls if c.key == "loss"]
    assert exponential in menu.options and menu.name(exponential) == EXP_LABEL
    values, ignored = read_link(spec, {"loss": [exponential], "n": ["3"], "d": ["3"]})
    assert values["loss"] == exponential and not ignored
    view = spec.view(spec.make_job(values))
    assert view.error is None and view.data.experiment.loss == exponential


def test_the_command_line_lists_and_runs_the_loss(exponential, tmp_path, capsys):
    assert main(["losses"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed] == list(LOSSES) and EXP_LABEL in listed[-1]
    assert "takes kappa" not in listed[-1] and "data set" not in listed[-1]
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"n": 3, "d": 3, "loss": exponential, "horizon": 10.0}))
    assert main(["run", str(config), "-o", str(tmp_path / "out.json")]) == 0
    assert json.loads((tmp_path / "out.json").read_text())["config"]["loss"] == exponential


def test_a_sweep_runs_it_as_a_grid_axis(exponential, tmp_path):
    pytest.importorskip("distributed")
    from polarize.sweeps import load, read_sweep, run_sweep

    path = tmp_path / "losses.toml"
    path.write_text('kind = "runs"\n[base]\nn = 3\nd = 3\nhorizon = 10\n'
                    f'[grid]\nloss = ["logistic", "{exponential}"]\n')
    folder = tmp_path / "results"
    progress = run_sweep(read_sweep(path), folder)  # two tasks: both run here, as the sample
    assert (progress.done, progress.errors, progress.failed) == (2, 0, 0)
    frame = load(folder)
    assert sorted(frame["loss"]) == sorted(["logistic", exponential])
    assert set(frame["status"]) == {"finished"}


# ---- a method registered at run time -------------------------------------------------------------


def _heun_states(system, grid, lr, *, calls, log, clock):
    """Heun's steps of ``lr`` on the system's gradient, the state (state, 1) at each saved step count."""
    def run():
        y, done = system.y0, 0
        for target in grid.steps:
            while done < target:
                clock.check()
                g = system.gradient(y)
                y = y - 0.5 * lr * (g + system.gradient(y - lr * g))
                calls[0] += 2
                done += 1
            yield y[:, None]
    return run()


HEUN = Method(name="heun", label="Heun's method", doing="Heun's method", stepped=True,
              words=lambda lr: f"Heun's method (lr = {lr:g})", states=_heun_states)


@pytest.fixture
def heun(monkeypatch):
    monkeypatch.setitem(METHODS, HEUN.name, HEUN)
    monkeypatch.setenv("POLARIZE_APP_INPROCESS", "1")
    return HEUN.name


def _heun_scores(V: np.ndarray, a: np.ndarray, b: np.ndarray, lr: float, steps: np.ndarray) -> np.ndarray:
    """Scores (K, n) of Heun's method on the value model under the logistic loss on ``b``, softmax,
    written out here: ``dL/dV = g s^T``, ``dL/da = s * (w - s.w)``, ``w = V^T g``, ``g = -sigma(-z) b``."""
    def softmax(x):
        e = np.exp(x - x.max())
        return e / e.sum()

    def gradient(V, a):
        s = softmax(a)
        g = -b / (1.0 + np.exp(b @ V @ s))
        w = V.T @ g
        return np.outer(g, s), s * (w - s @ w)

    out, done = [], 0
    for target in steps:
        while done < target:
            gV, ga = gradient(V, a)
            hV, ha = gradient(V - lr * gV, a - lr * ga)
            V, a = V - 0.5 * lr * (gV + hV), a - 0.5 * lr * (ga + ha)
            done += 1
        out.append(softmax(a))
    return np.array(out)


def test_the_engine_takes_its_steps(heun):
    result = simulate(Experiment(n=3, d=3, method=heun, lr=0.05, horizon=5.0, samples=20, seed=3,
                                 a_init="gaussian", a_scale=0.5))
    e = result.experiment
    assert result.finished and result.t[-1] == 5.0 and result.n_evaluations == 2 * 100
    mine = _heun_scores(np.asarray(e.V0), np.asarray(e.a0), np.asarray(e.target), e.lr, e.save_at().steps)
    assert np.allclose(result.s, mine, rtol=0, atol=1e-12)
    with pytest.raises(ConfigError, match="horizon"):  # its steps are capped, as a stepped method's
        Experiment(method=heun, lr=1e-3, horizon=1e5)


def test_many_starts_run_each_alone_by_its_steps(heun):
    e = Experiment(n=3, d=3, method=heun, lr=0.1, horizon=3.0, seed=1)
    starts = np.random.default_rng(0).normal(size=(3, 3))
    many = simulate_many(e, starts)
    assert many.alone == 3  # the stacks do not run it (Method.stacked): each start through its states
    for k, a0 in enumerate(starts):
        assert np.array_equal(many.s[k], simulate(Experiment(**{**e.to_dict(), "a0": a0})).s[-1])


def test_the_explorer_offers_it_with_its_learning_rate(heun):
    spec = pages.by_name("explorer")
    (menu,) = [c for c in spec.controls if c.key == "method"]
    assert heun in menu.options and menu.name(heun) == HEUN.label
    values, ignored = read_link(spec, {"method": [heun], "lr": ["0.05"], "horizon": ["10"], "n": ["3"],
                                       "d": ["3"]})
    assert values["method"] == heun and not ignored
    (lr,) = [c for c in spec.controls if c.key == "lr"]
    assert lr.enabled(values) and not lr.enabled({**values, "method": "flow"})
    view = spec.view(spec.make_job(values))
    assert view.error is None and view.data.experiment.method == heun
    assert "Heun's method (lr = 0.05)" in title_lines(view.data)[0]


def test_the_command_line_and_a_sweep_run_it(heun, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"n": 3, "d": 3, "method": heun, "lr": 0.1, "horizon": 1.0}))
    assert main(["run", str(config), "-o", str(tmp_path / "out.json")]) == 0
    assert json.loads((tmp_path / "out.json").read_text())["config"]["method"] == heun
    pytest.importorskip("distributed")
    from polarize.sweeps import load, read_sweep, run_sweep

    path = tmp_path / "methods.toml"
    path.write_text('kind = "runs"\n[base]\nn = 3\nd = 3\nlr = 0.1\nhorizon = 1\n'
                    f'[grid]\nmethod = ["gd", "{heun}"]\n')
    progress = run_sweep(read_sweep(path), tmp_path / "results")
    assert (progress.done, progress.errors, progress.failed) == (2, 0, 0)
    assert sorted(load(tmp_path / "results")["method"]) == sorted(["gd", heun])
