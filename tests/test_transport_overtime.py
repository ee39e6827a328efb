"""A run out of time: the engine stops on its wall-clock budget; the page draws what it saved, with advice."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from polarize import Experiment, simulate
from polarize.budget import within
from polarize.plots import find_trace
from polarize.serve.runner import RunTimeout
from polarize.status import Status
from polarize.web import limited, overtime
from polarize.web.pages import explorer as ex

# 200,000 descent steps on 64 tokens: far longer than any budget below.
SLOW_DESCENT = Experiment(n=64, d=64, method="gd", lr=0.1, horizon=2e4)
# A flow of 64 tokens to t = 1e12 under the KL loss: also far longer.
SLOW_FLOW = Experiment(n=64, d=64, loss="kl", horizon=1e12)


@pytest.mark.parametrize("experiment", [SLOW_DESCENT, SLOW_FLOW], ids=["descent", "flow"])
def test_the_engine_stops_on_its_budget_and_keeps_what_it_saved(experiment):
    full = simulate(Experiment(n=3, d=3, horizon=1e3))
    partial = simulate(experiment, budget=0.5)
    assert full.status == "finished"
    assert partial.status == Status.OUT_OF_TIME and not partial.finished and "out of time" in partial.message
    assert 1 <= len(partial.t) < experiment.samples and partial.t[-1] < experiment.horizon
    assert partial.s.shape == (len(partial.t), 64) and np.all(np.isfinite(partial.s))


def test_the_budget_is_just_under_the_limit():
    assert within(20.0) == 18.0 and 0 < within(1.0) < 1.0


def test_the_explorer_draws_the_partial_run_with_advice_that_fits_it():
    view = ex.explore(SLOW_DESCENT, timeout=2.0)
    assert view.error is None and view.data.status == Status.OUT_OF_TIME
    assert view.passing  # not kept for others as if it were the whole run
    (warning,) = view.warnings
    reached = float(view.data.t[-1])
    assert "did not finish in the 2 s" in warning and "use the flow method" in warning
    assert f"lower the horizon to {ex.format_time(overtime.reachable_horizon(reached))}" in warning
    # The dashboard is drawn up to where the run stopped: its last frame is the last saved time.
    dashboard = go.Figure(view.plots()[0].figure)  # the app builds it as a plain dict
    assert dashboard.layout.meta["frame_times"][-1] == pytest.approx(reached, rel=1e-6)
    assert find_trace(view.plots()[0].figure, "simplex-path") is not None


def test_advice_follows_the_settings():
    flow = overtime.advice(Experiment(n=4, d=4, horizon=1e12), reached=3.7e6)
    assert "lower the horizon to 2e6" in flow and "flow method" not in flow and "fewer tokens" not in flow
    descent = overtime.advice(Experiment(n=4, d=4, method="gd", lr=0.5, horizon=1e5), reached=1234.0)
    assert "use the flow method" in descent and "lower the horizon to 1000" in descent
    assert "raise the learning rate (now 0.5)" in descent
    big = overtime.advice(Experiment(n=40, d=40, horizon=1e8))
    assert "fewer tokens (n = 40, d = 40)" in big and "lower the horizon" in big
    reached = (0.0, 7.0, 10.0, 19.9, 3.7e6)
    assert [overtime.reachable_horizon(x) for x in reached] == [None, 5.0, 10.0, 10.0, 2e6]


def test_a_run_over_the_hard_limit_still_gets_advice(monkeypatch):
    def overran(*args, **kwargs):
        raise RunTimeout(2.0)

    monkeypatch.setattr(limited, "call_with_timeout", overran)
    view = ex.explore(SLOW_FLOW, timeout=2.0)
    assert "took longer than 2 s" in view.error and "fewer tokens (n = 64, d = 64)" in view.error
