"""Where a run is saved: one grid of times for one start (``simulate``) and for many (``simulate_many``).

The grid is whole steps of ``lr``: 0, then log-spaced up to ``round(horizon / lr)``, so that the
flow and gradient descent are saved at the same times and can be compared time for time
(``Experiment.save_at`` gives an experiment's). Its end rule, one for every run:

- the flow (a method not ``stepped``, ``polarize.methods``) ends at the horizon exactly;
- descent ends after ``round(horizon / lr)`` whole steps, at ``steps * lr``, and that time is
  written as the horizon when it differs from it by rounding only (within ``1e-9`` of it,
  relative): ``t[-1] == horizon`` then holds for every run that reached its horizon, as
  ``Result.t`` says. The steps taken are the same either way (they come from ``steps``, not
  from the times), so no state changes; only the label of the last time does, by rounding.
  When ``horizon / lr`` is not whole (``horizon = 1, lr = 0.3``) descent ends at ``1.2``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from polarize.methods import METHODS

__all__ = ["SNAP", "SaveAt", "sample_steps", "save_at"]

SNAP = 1e-9
"""A descent's last time within this of the horizon (relative) is the horizon: the rest is rounding."""


@dataclass(frozen=True, kw_only=True, eq=False)
class SaveAt:
    """The saved times of a run, and the step counts of ``lr`` they are.

    Attributes
    ----------
    t : ndarray, shape (K,)
        Saved times, ``t[0] = 0``.
    steps : ndarray, shape (K,)
        Whole steps of ``lr`` at each saved time (gradient descent takes exactly these; floats,
        since a long flow saved from a small ``lr`` counts beyond int64).
    """

    t: np.ndarray
    steps: np.ndarray

    def __post_init__(self) -> None:
        for array in (self.t, self.steps):
            array.setflags(write=False)


def sample_steps(horizon: float, lr: float, samples: int) -> np.ndarray:
    """Step counts at which a run is saved: 0, then log-spaced up to ``round(horizon / lr)``.

    Rounding to whole steps can merge neighbours, so there may be fewer than
    ``samples``. With ``samples = 2``: the start and the last step.
    """
    total = float(np.round(horizon / lr))  # a float: beyond int64 for a long flow saved from a small lr
    if total < 1:
        return np.array([0.0, horizon / lr])
    steps = np.unique(np.round(np.geomspace(1.0, total, samples - 1))) if samples > 2 else np.array([total])
    return np.concatenate([[0.0], steps])


def save_at(horizon: float, lr: float, samples: int, method: str) -> SaveAt:
    """The saved times of a run of ``method`` (a key of ``METHODS``), at most ``samples`` (end rule above)."""
    steps = sample_steps(horizon, lr, samples)
    t = steps * lr
    if not METHODS[method].stepped or abs(t[-1] - horizon) <= SNAP * horizon:
        t[-1] = horizon
    return SaveAt(t=t, steps=steps)
