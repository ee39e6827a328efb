"""What a page says about a run that ran out of time: how far it got, and advice that fits its settings.

A page gives the engine a wall-clock budget just under the runner's hard limit
(``budget.within``), so a slow run comes back with what it saved (status
``budget.OUT_OF_TIME``) and is drawn up to there. The advice is worked out from
the run's own settings: gradient descent is told to use the exact flow, a flow
to lower its horizon to a round value it did reach, a large run to use fewer
tokens.
"""

from __future__ import annotations

import math

from polarize.config import Experiment
from polarize.diagnostics import Result
from polarize.science import format_time

__all__ = ["advice", "partial_warning", "reachable_horizon"]

MANY_TOKENS = 16
"""Above this many tokens, fewer tokens is part of the advice (the cost grows with n and d)."""


def reachable_horizon(reached: float) -> float | None:
    """The largest 1, 2 or 5 times a power of ten at most ``reached`` (None when ``reached`` <= 0)."""
    if not reached > 0 or not math.isfinite(reached):
        return None
    power = 10.0 ** math.floor(math.log10(reached))
    return max(c * power for c in (1, 2, 5) if c * power <= reached * (1 + 1e-12))


def advice(experiment: Experiment, reached: float | None = None) -> str:
    """What to change so that the run finishes in time (a sentence, markdown-free).

    Parameters
    ----------
    experiment : Experiment
        The run's settings.
    reached : float, optional
        The last time the run saved before it stopped; None when nothing is known.
    """
    e = experiment
    horizon = reachable_horizon(reached or 0.0)
    lower = (f"lower the horizon to {format_time(horizon)}" if horizon and horizon < e.horizon
             else "lower the horizon")
    if e.method == "gd":
        steps = f"{round(e.horizon / e.lr):,} gradient-descent steps"
        options = [f"use the flow method (exact, with adaptive steps: {steps} are not needed)", lower,
                   f"raise the learning rate (now {e.lr:g})"]
    else:
        options = [lower]
    if max(e.n, e.d) > MANY_TOKENS:
        options.append(f"use fewer tokens (n = {e.n}, d = {e.d})")
    return "To see it to the end, " + _either(options) + "."


def _either(options: list[str]) -> str:
    return options[0] if len(options) == 1 else ", ".join(options[:-1]) + ", or " + options[-1]


def partial_warning(result: Result, seconds: float) -> str:
    """The warning over a run stopped on its budget (under a limit of ``seconds``): where, then the advice."""
    e = result.experiment
    reached = float(result.t[-1])
    return (f"This run did not finish in the {seconds:g} s a page allows: it is shown up to "
            f"t = {format_time(reached)} of {format_time(e.horizon)}. {advice(e, reached)}")
