"""One saved-time grid (``Experiment.save_at``) for one start and for many, with one end rule."""

from __future__ import annotations

import numpy as np
import pytest

from polarize import Experiment, simulate, simulate_many


def test_descent_saved_at_two_times_runs_to_its_horizon():
    """samples = 2 is the start and the end: the last step, not the first."""
    r = simulate(Experiment(n=3, d=3, method="gd", lr=0.1, horizon=10.0, samples=2, seed=1))
    assert r.finished and r.n_evaluations == 100 and list(r.t) == [0.0, 10.0]


@pytest.mark.parametrize(("method", "lr", "horizon"), [("gd", 0.1, 0.3), ("gd", 0.3, 1.0), ("flow", 0.1, 0.3),
                                                        ("gd", 0.5, 1e3)])
def test_one_start_and_many_are_saved_at_the_same_times(method, lr, horizon):
    """0.3 / 0.1 is three steps whose sum is 0.30000000000000004: both say t = 0.3; 1 / 0.3 is three steps
    that end at 0.9 + rounding, short of the horizon, and both say so."""
    e = Experiment(n=3, d=3, method=method, lr=lr, horizon=horizon, samples=20, seed=2)
    one = simulate(e)
    many = simulate_many(e, np.asarray(e.resolved().a0)[None], trajectories=True)
    assert np.array_equal(one.t, many.t)
    grid = e.save_at()
    assert np.array_equal(grid.t, one.t) and grid.t[0] == 0.0
    steps = round(horizon / lr)
    assert grid.steps[-1] == steps
    assert grid.t[-1] == (horizon if method == "flow" or abs(steps * lr - horizon) <= 1e-9 * horizon
                          else steps * lr)


def test_the_grid_is_read_only():
    grid = Experiment(n=3, d=3).save_at()
    with pytest.raises(ValueError):
        grid.t[0] = 1.0
