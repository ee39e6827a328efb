"""A study out of time: runs cut or left out at the budget; every page draws what finished, with advice.

The budget is made tiny (``study.within``) while the hard limit stays as it is, and each page is
given settings whose first run takes far longer than that budget.
"""

from __future__ import annotations

import time

import numpy as np
import plotly.graph_objects as go
import pytest
from support.app import WHOLE_PAGE_SECONDS

from polarize import Experiment, simulate
from polarize.ensemble import simulate_many
from polarize.science import basins as basins_module
from polarize.science import compare_normalizers
from polarize.science import deadline as deadline_module
from polarize.science.basins import basins
from polarize.science.deadline import Deadline, within_budget
from polarize.serve import runner
from polarize.serve.runner import RunTimeout
from polarize.status import Status
from polarize.web import limited, overtime, pages
from polarize.web.page import Problem
from polarize.web.pages import descent as descent_page
from polarize.web.view import View

TINY = 0.2
"""The study's budget in these tests (seconds)."""
BUDGETS = {"phase": 0.02, "rates": 0.1, "descent": 1.5}
"""Where ``TINY`` does not fit: the first run of the phase portrait and of Rates can take only 0.2 s
(Rates' is halfway, at t = 1e147, after 0.1 s); on Flow vs descent the flow (0.1 s) must finish and the
descent (8 s) be cut: at least this, or five times the flow's time measured just before (a machine at
a load of 19 on 2 cores ran the flow past 1.5 s)."""
SLOW = Experiment(n=32, d=32, method="gd", lr=0.1, horizon=2e4)
"""200,000 descent steps on 32 tokens: far longer than ``TINY``."""

# page -> (settings whose first run is far longer than TINY, the run cut there, advice that fits them)
CASES = {
    "normalizers": ({"method": "gd", "lr": 0.1, "horizon": 2e4}, "softmax",
                    ("use the flow method", "raise the learning rate (now 0.1)")),
    "losses": ({"n": 32, "horizon": 1e8, "kappas": (1, 2)}, None,
               ("choose fewer condition numbers \u03ba (now 1, 2)", "use fewer tokens (n = 32)")),
    "tied": ({"sizes": (150, 100), "horizon": 5e4}, "D=150",
             ("choose fewer sizes D, leaving out the largest (now 150, 100)",)),
    "descent": ({"n": 8, "lrs": (0.01, 0.05), "horizon": 1e3}, "gd lr=0.01",
                ("leave out the smallest learning rate (lr = 0.01 takes 100,000 steps)",)),
    "rates": ({"n": 64, "horizon": 1e300}, "logistic flow", ("lower the horizon",)),
    "phase": ({"loss": "kl", "n": 6, "horizon": 1e6, "tokens": (0, 1, 2)}, "from a(0) = 0",
              ("use a smaller basin grid (now 50 x 50)", "use the logistic loss", "use n = 3")),
}


def view_of(name: str, values: dict) -> View:
    spec = pages.by_name(name)
    job = spec.make_job({**spec.defaults(None), **values})
    assert not isinstance(job, Problem), job
    return spec.view(job)


def test_a_deadline_cuts_the_run_it_is_in_and_leaves_out_the_rest():
    deadline = Deadline(TINY)
    first = deadline.simulate("first", SLOW)
    assert first.status == Status.OUT_OF_TIME and 1 <= len(first.t) and first.t[-1] < SLOW.horizon
    assert deadline.simulate("second", SLOW) is None and not deadline.allows("third")
    partial = deadline.partial("outcome")
    assert partial.cut == ("first",) and partial.left_out == ("second", "third") and not partial.complete
    assert partial.earliest() == partial.earliest("first") == float(first.t[-1])
    assert partial.earliest("second") is None
    deadline.unused("first")  # drawn no more: it counts as left out
    assert deadline.partial(None).cut == () and "first" in deadline.partial(None).left_out


def test_a_part_that_cannot_be_cut_is_left_out_when_the_time_left_would_not_cover_it():
    deadline, made = Deadline(5.0), []

    def part(name):
        made.append(name)
        time.sleep(0.2)  # a pace of 0.2 s per unit of size
        return name

    assert deadline.part("first", 1, lambda: part("first")) == "first"
    assert deadline.part("large", 100, lambda: part("large")) is None  # about 20 s: more than is left
    assert deadline.part("small", 1, lambda: part("small")) == "small"
    assert made == ["first", "small"] and deadline.partial(None).left_out == ("large",)
    assert Deadline().part("any", 10**9, lambda: "made") == "made"  # no budget: never left out


def test_without_a_budget_a_study_is_complete_and_unchanged():
    e = Experiment(n=3, d=3, horizon=100.0, a_init="gaussian")
    partial = within_budget(compare_normalizers, None, e, ("softmax", "l2"))
    plain = compare_normalizers(e, ("softmax", "l2"))
    assert partial.complete and partial.seconds == np.inf
    for mine, theirs in zip(partial.outcome, plain, strict=True):
        assert mine.result.finished and mine.normalizer == theirs.normalizer
        np.testing.assert_allclose(mine.result.s, theirs.result.s, atol=1e-9)


@pytest.mark.parametrize("name", list(CASES))
def test_each_page_draws_what_finished_in_its_budget_with_advice_that_fits(monkeypatch, name):
    values, cut, advice = CASES[name]
    budget = BUDGETS.get(name, TINY)
    if name == "descent":  # the flow must finish in the budget whatever the machine's load
        start = time.perf_counter()
        simulate(descent_page.experiment({**pages.by_name(name).defaults(None), **values}))
        budget = max(budget, 5 * (time.perf_counter() - start))
    monkeypatch.setattr(limited, "within", lambda limit: budget)
    view = view_of(name, values)
    assert view.error is None, view.error
    assert view.plots() and view.passing  # drawn, but not kept for others: it may finish next time
    warning = view.warnings[0]
    assert "did not all finish in the 20 s a page allows" in warning, warning
    assert "Not run:" in warning or any(f"drawn up to where {it} got" in warning for it in ("it", "they"))
    for phrase in advice:
        assert phrase in warning, (phrase, warning)
    runs = view.data.runs
    stopped = [label for label, r in runs.items() if r.status == Status.OUT_OF_TIME]
    if cut is not None:
        assert cut in stopped, (cut, list(runs))
    for label in stopped:  # each cut run is drawn up to where it got, short of its horizon
        r = runs[label]
        assert r.t[-1] < r.experiment.horizon and np.all(np.isfinite(r.s))
    assert len(view.data.table) >= 1


def test_the_phase_portrait_keeps_the_field_when_its_ensembles_are_left_out(monkeypatch):
    values, _, _ = CASES["phase"]
    monkeypatch.setattr(limited, "within", lambda limit: BUDGETS["phase"])
    view = view_of("phase", values)
    assert [p.key for p in view.plots()] == ["field"]
    assert "Not run:" in view.warnings[0] and "the basin map" in view.warnings[0]


@pytest.mark.parametrize("name", list(CASES))
def test_a_study_over_the_hard_limit_still_gets_the_pages_advice(monkeypatch, name):
    values, _, advice = CASES[name]

    def overran(*args, **kwargs):
        raise RunTimeout(2.0)

    monkeypatch.setattr(limited, "call_with_timeout", overran)
    monkeypatch.setattr(runner, "call_with_timeout", overran)  # a comparison's runs at once (call_all)
    view = view_of(name, values)
    assert view.error.startswith("These runs took longer than 2 s and were stopped. To see ")
    assert advice[0] in view.error, view.error
    assert not view.plots()


def test_a_study_with_nothing_to_draw_says_what_to_change(monkeypatch):
    monkeypatch.setattr(limited, "within", lambda limit: 0.0)  # no time at all: every run is left out
    view = view_of("tied", {"sizes": (150,), "horizon": 5e4})
    assert view.passing and view.error.startswith("These runs did not get far enough to draw")
    assert "lower the horizon" in view.error


def test_the_horizon_advised_is_one_the_page_offers():
    assert overtime.lower_horizon(1e4, 3.7e3) == "lower the horizon to 2000"
    assert overtime.lower_horizon(1e4, 3.7e3, (10.0, 1000.0, 3000.0, 1e4)) == "lower the horizon to 3000"
    assert overtime.lower_horizon(1e4, 7.0, (10.0, 1e4)) == "lower the horizon"  # none it reached
    assert overtime.lower_horizon(1e4, None) == "lower the horizon"
    assert overtime.fewer("sizes", (1,)) is None
    assert overtime.fewer("sizes", (1, 2)) == "choose fewer sizes (now 1, 2)"
    assert overtime.to_see(["a", None, "b"], "all of it") == "To see all of it, a, or b."


def test_through_a_worker_under_the_time_limit_of_the_environment(monkeypatch):
    # No patching of the budget: POLARIZE_APP_TIMEOUT = 2 gives the study 1.5 s in a worker process.
    monkeypatch.setenv("POLARIZE_APP_TIMEOUT", "2")
    monkeypatch.delenv("POLARIZE_APP_INPROCESS", raising=False)
    view = view_of("normalizers", CASES["normalizers"][0])
    assert view.error is None and view.passing
    assert "did not all finish in the 2 s a page allows" in view.warnings[0]
    # The runs go to the workers at once, each with the budget: every one is drawn, up to where it got.
    assert view.data.runs["softmax"].status == Status.OUT_OF_TIME and len(view.data.runs) == 8


def slow_starts(monkeypatch, seconds: float) -> list[int]:
    """Make every start of the phase portrait's ensembles take ``seconds`` more on the clock a deadline
    reads; returns the sizes of the ensembles run, in order."""
    offset, sizes, real = [0.0], [], time.monotonic

    def many(experiment, a0, **options):
        sizes.append(len(a0))
        offset[0] += seconds * len(a0)
        return simulate_many(experiment, a0, **options)

    monkeypatch.setattr(time, "monotonic", lambda: real() + offset[0])
    for module in (deadline_module, basins_module):
        monkeypatch.setattr(module, "simulate_many", many)
    return sizes


def test_a_basin_map_out_of_time_keeps_its_first_rows_and_names_the_starts_not_run(monkeypatch, flow_tol):
    e = Experiment(n=3, d=3, seed=2, horizon=100.0)
    full = basins(e, 20)
    sizes = slow_starts(monkeypatch, 0.01)  # 400 starts: 4 s, in a budget of 1 s
    deadline = Deadline(1.0)
    part = basins(e, 20, deadline=deadline)
    run = len(part.ensemble)
    assert sizes[0] == 20 and 0 < run < 400 and run % 20 == 0 and part.missing == 400 - run
    assert deadline.partial(part).left_out == (f"the basin map's last {part.missing:,} of 400 starts",)
    np.testing.assert_array_equal(part.ensemble.winner, full.ensemble.winner[:run])
    flow_tol.assert_close(part.ensemble.s, full.ensemble.s[:run])
    assert len(part.boundary()) <= len(full.boundary())


def test_the_phase_portrait_draws_the_rows_of_its_basin_map_done_in_time(monkeypatch):
    monkeypatch.setenv("POLARIZE_APP_INPROCESS", "1")  # the slow clock is this process's
    slow_starts(monkeypatch, 0.01)  # the odds' 960 starts take 9.6 s; the 2,500 of the basin map 25 s
    monkeypatch.setattr(limited, "within", lambda limit: 20.0)
    view = view_of("phase", {})
    assert view.error is None and [p.key for p in view.plots()] == ["field", "basins", "odds"]
    traces = {t.uid: t for t in go.Figure(view.plots()[1].figure).data}
    run, missing = len(traces["basin-starts"].x), len(traces["basin-missing"].x)
    assert run > 0 and missing > 0 and run + missing == 2500
    # (On a loaded machine the odds may be cut too; they are then named first, in the same sentence.)
    assert f"the basin map's last {missing:,} of 2,500 starts." in view.warnings[0]
    assert f"Grey: the {missing:,} starts not run" in view.plots()[1].caption


@pytest.mark.parametrize("name", ["tied", "explorer"])
def test_a_view_that_timed_out_is_computed_again_for_the_next_visitor(monkeypatch, name):
    """Issue 31: a phase portrait cut by the time limit on a busy server was served as an error to
    every visitor for 38 minutes. Through the renderer's shared cache, a second session opening the
    same job after a timeout gets it computed again, never the first visitor's error."""
    from polarize.plots.display import Display
    from polarize.serve.cache import SharedCache
    from ui import renderer

    monkeypatch.setattr(renderer, "VIEWS", SharedCache(4))
    monkeypatch.setenv("POLARIZE_APP_TIMEOUT", WHOLE_PAGE_SECONDS)  # "in time" below, whatever the load
    spec = pages.by_name(name)
    job = spec.make_job(spec.defaults(None))
    calls = []

    def overran(function, *args, timeout=None):
        calls.append("stopped")
        raise RunTimeout(2.0)

    for module in (limited, runner):  # runner: a comparison's runs go at once (call_all)
        monkeypatch.setattr(module, "call_with_timeout", overran)
    first = renderer.shared_view(spec, job, Display())
    assert first.passing and "took longer than 2 s" in first.error
    runs = len(calls)  # one a run of the page (the Tied page's four sizes at once)

    def in_time(function, *args, timeout=None):  # a quieter server: the same job now finishes
        calls.append("ran")
        return function(*args)

    for module in (limited, runner):
        monkeypatch.setattr(module, "call_with_timeout", in_time)
    second = renderer.shared_view(spec, job, Display())
    assert calls == ["stopped"] * runs + ["ran"] * runs
    assert second.error is None and second.plots() and not second.passing
    assert renderer.shared_view(spec, job, Display()) is second  # complete: now kept for everyone
    assert calls == ["stopped"] * runs + ["ran"] * runs


def test_every_failure_of_a_run_is_a_view_never_kept(monkeypatch):
    from polarize.serve.runner import ServerBusy, WorkerCrashed

    for failure in (RunTimeout(2.0), WorkerCrashed("killed"), ServerBusy("full"), ValueError("a bug")):
        def failing(function, *args, timeout=None, failure=failure):
            raise failure

        monkeypatch.setattr(limited, "call_with_timeout", failing)
        view = limited.run_limited(sum, (1, 2), timeout=2.0, advice=lambda: "Do less.")
        assert isinstance(view, View) and view.error and view.passing, failure
    monkeypatch.undo()
    monkeypatch.setenv("POLARIZE_APP_INPROCESS", "1")
    seen = []

    def budgeted(budget, *args):
        seen.append((budget, args))
        return "done"

    ran = limited.run_limited(budgeted, limited.BUDGET, "a", timeout=8.0, advice=lambda: "")
    assert ran == limited.Ran("done", 8.0) and seen == [(6.0, ("a",))]  # within(8) = 6: a quarter less
