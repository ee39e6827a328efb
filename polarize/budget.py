"""How many steps a run may take, how running out of them is said, and how large its result is.

Gradient descent takes ``round(horizon / lr)`` steps, refused up front beyond
``limits()["max_steps"]`` (``POLARIZE_MAX_STEPS``). The exact flow takes
adaptive steps: at most ``MAX_FLOW_STEPS`` in all; every ``STALL_STEPS`` steps
between two saved times it is looked at: come to rest, still moving at a pace that reaches the next
saved time, or stalled. ``descent_steps_message``, ``flow_steps_message`` and ``stall_message`` phrase
these limits.
``result_bytes`` estimates the size of a result's JSON before the run, so the
command line can refuse one beyond ``MAX_OUTPUT_BYTES`` unless asked.

A run may also have a wall-clock budget (``WallClock``): the pages give the
engine one just under the runner's hard time limit (``within``), so that a slow
run stops by itself and returns what it saved, with status ``Status.OUT_OF_TIME``,
instead of having its worker killed with nothing to show.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from polarize.config import Experiment

__all__ = ["MAX_FLOW_STEPS", "MAX_OUTPUT_BYTES", "STALL_STEPS", "OutOfTime", "WallClock",
           "descent_steps_message", "flow_steps_message", "result_bytes", "stall_message", "within"]

MAX_FLOW_STEPS = 50_000
"""Adaptive steps a flow may take in all (smooth runs to any horizon need a few hundred; a large
stiff state, stepped explicitly, crosses the late stretch of a converging run in small stable steps:
cross-entropy at n = d = 40 needs about 28,000 to t = 1e6)."""
STALL_STEPS = 1000
"""A flow that takes this many steps between two saved times is looked at. If it has converged, its
velocity is rounding noise that the error control keeps chasing, and it is held at rest to the
horizon. If, at the pace of those steps, the next saved time lies within the steps left, it goes on
(a large stiff state crossing a converging stretch in small stable steps), up to ``MAX_FLOW_STEPS``.
Otherwise the stepper cannot make progress, and the run stops there and says so. (The kinks of relu,
l1 and sparsemax are not such a place: ``polarize.switching`` steps across them.)"""


def descent_steps_message(steps: float, cap: float) -> str:
    """Why a gradient descent of ``steps`` steps is refused: beyond ``cap`` (``POLARIZE_MAX_STEPS``)."""
    return (f"horizon / lr = {steps:.3g} gradient-descent steps exceeds the cap of {cap:.3g} "
            "(POLARIZE_MAX_STEPS); use method flow for long horizons")


def flow_steps_message(steps: float) -> str:
    """Why a flow stopped: it used up ``steps`` adaptive steps."""
    return f"gave up after {steps} integrator steps"


def stall_message(steps: float) -> str:
    """Why a flow stopped: ``steps`` steps without reaching the next saved time, nor the pace to."""
    return (f"the flow stalled (over {steps} steps without reaching the next saved time, too slowly to "
            "reach it within the steps left)")


MAX_OUTPUT_BYTES = 100 * 2**20
"""A result the command line writes without ``--allow-large`` (100 MiB)."""
_NUMBER_BYTES = 21
"""A float in the result's JSON: 17 significant digits, the point, a sign or exponent, and ", "."""


def result_bytes(experiment: Experiment) -> int:
    """About how many bytes ``Result.to_dict()`` takes as JSON, before running (an upper estimate).

    Per saved time (at most ``samples``): ``s``, ``a``, ``u``, ``ratio``, ``column_norms``
    and ``p`` (n each), three singular values and seven scalars; once: the
    config's arrays and ``V_final`` (``d x n``).
    """
    n, d, rows = experiment.n, experiment.d, experiment.rows or 0
    per_time = 6 * n + 10
    once = 2 * d * n + n + d + rows * (d + 1)
    return _NUMBER_BYTES * (experiment.samples * per_time + once) + 4096


def within(limit: float) -> float:
    """The engine's wall-clock budget under a hard time limit of ``limit`` seconds.

    A quarter less, and at most 2 s less: the margin covers the last step (a flow
    step takes milliseconds) and sending the result back before the limit strikes.
    """
    return limit - min(2.0, 0.25 * limit)


class OutOfTime(Exception):
    """A run used up its wall-clock budget (``WallClock.check``); the message says which budget."""


class WallClock:
    """A budget of ``seconds`` of wall-clock time, counted from when it is made (inf: none)."""

    def __init__(self, seconds: float = float("inf")):
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def expired(self) -> bool:
        """Whether the budget is used up."""
        return time.monotonic() > self.end

    def check(self) -> None:
        """Raise ``OutOfTime`` once the budget is used up."""
        if self.expired():
            raise OutOfTime(self.message())

    def remaining(self) -> float:
        """Seconds left (0 once used up; inf for no budget)."""
        return max(0.0, self.end - time.monotonic())

    def message(self) -> str:
        """Why a run stopped on this budget, in words."""
        return f"out of time (the run's budget is {self.seconds:.3g} s)"
