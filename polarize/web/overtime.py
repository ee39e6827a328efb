"""What a page says about a run that ran out of time: how far it got, and advice that fits its settings.

A page gives the engine a wall-clock budget just under the runner's hard limit
(``budget.within``), so a slow run comes back with what it saved (status
``Status.OUT_OF_TIME``) and is drawn up to there. The advice is worked out from
the run's own settings: gradient descent is told to use the exact flow, a flow
to lower its horizon to a round value it did reach, a large run to use fewer
tokens.

The comparison pages and the phase portrait run studies of several runs under
one budget (``science.deadline``): ``study_warning`` says which runs were cut
or left out, and each page words its advice from its own settings with
``to_see`` and the phrases here (``lower_horizon``, ``fewer``, ``fewer_tokens``).
A study whose worker was killed at the hard limit gets that advice too
(``timed_out``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from polarize.config import Experiment
from polarize.diagnostics import Result
from polarize.methods import METHODS
from polarize.science import format_time
from polarize.science.deadline import Partial

__all__ = ["advice", "fewer", "fewer_tokens", "lower_horizon", "nothing_drawn", "partial_warning",
           "reachable_horizon", "study_warning", "timed_out", "to_see"]

MANY_TOKENS = 16
"""Above this many tokens, fewer tokens is part of the advice (the cost grows with n and d)."""


def reachable_horizon(reached: float) -> float | None:
    """The largest 1, 2 or 5 times a power of ten at most ``reached`` (None when ``reached`` <= 0)."""
    if not reached > 0 or not math.isfinite(reached):
        return None
    power = 10.0 ** math.floor(math.log10(reached))
    return max(c * power for c in (1, 2, 5) if c * power <= reached * (1 + 1e-12))


def lower_horizon(horizon: float, reached: float | None, options: Sequence[float] = ()) -> str:
    """Lower the horizon: to a round time the run did reach, when one is known and below ``horizon``.

    With ``options`` (the horizons the page offers), to the largest of them the run did reach.
    """
    target = reachable_horizon(reached or 0.0)
    if target and options:
        target = max((h for h in options if h <= (reached or 0.0) * (1 + 1e-12)), default=None)
    if target and target < horizon:
        return f"lower the horizon to {format_time(target)}"
    return "lower the horizon"


def fewer_tokens(n: int, d: int | None = None) -> str | None:
    """Use fewer tokens, when there are more than ``MANY_TOKENS`` (None otherwise)."""
    if max(n, d or 0) <= MANY_TOKENS:
        return None
    return f"use fewer tokens (n = {n}" + (f", d = {d})" if d is not None else ")")


def fewer(what: str, chosen: Sequence[Any], shown: Callable[[Any], str] = str) -> str | None:
    """Choose fewer of ``what`` (naming the ones chosen), when more than one is (None otherwise)."""
    if len(chosen) < 2:
        return None
    return f"choose fewer {what} (now {', '.join(map(shown, chosen))})"


def to_see(options: Sequence[str | None], whole: str = "it to the end") -> str:
    """The advice sentence: "To see ``whole``, " and the options (the None ones dropped), joined by "or"."""
    kept = [option for option in options if option]
    return f"To see {whole}, " + _either(kept) + "."


def advice(experiment: Experiment, reached: float | None = None, horizons: Sequence[float] = ()) -> str:
    """What to change so that the run finishes in time (a sentence, markdown-free).

    Parameters
    ----------
    experiment : Experiment
        The run's settings.
    reached : float, optional
        The last time the run saved before it stopped; None when nothing is known.
    horizons : sequence of float, optional
        The horizons the page offers (``lower_horizon``).
    """
    e = experiment
    lower = lower_horizon(e.horizon, reached, horizons)
    count = METHODS[e.method].steps(e.horizon, e.lr)
    if count is not None:
        steps = f"{count:,} gradient-descent steps"
        options = [f"use the flow method (exact, with adaptive steps: {steps} are not needed)", lower,
                   f"raise the learning rate (now {e.lr:g})"]
    else:
        options = [lower]
    return to_see([*options, fewer_tokens(e.n, e.d)])


def _either(options: list[str]) -> str:
    return options[0] if len(options) == 1 else ", ".join(options[:-1]) + ", or " + options[-1]


def partial_warning(result: Result, seconds: float) -> str:
    """The warning over a run stopped on its budget (under a limit of ``seconds``): where, then the advice."""
    e = result.experiment
    reached = float(result.t[-1])
    return (f"This run did not finish in the {seconds:g} s a page allows: it is shown up to "
            f"t = {format_time(reached)} of {format_time(e.horizon)}. {advice(e, reached)}")


def study_warning(partial: Partial, seconds: float, advised: str) -> str:
    """The warning over a study its budget did not let finish (under a limit of ``seconds``).

    Parameters
    ----------
    partial : Partial
        What the study cut and left out.
    seconds : float
        The page's time limit.
    advised : str
        The page's advice for its settings.
    """
    parts = [f"These runs did not all finish in the {seconds:g} s a page allows, so they are shown in part."]
    if partial.cut:
        they = "it" if len(partial.cut) == 1 else "they"
        parts.append(f"Stopped at the time limit and drawn up to where {they} got: {', '.join(partial.cut)}.")
    if partial.left_out:
        parts.append(f"Not run: {', '.join(partial.left_out)}.")
    return " ".join([*parts, advised])


def timed_out(seconds: float, advised: str, what: str = "This run") -> str:
    """The error of a run (or runs: ``what``) whose worker was stopped at the hard limit of ``seconds``."""
    were = "were" if what.startswith("These") else "was"
    return f"{what} took longer than {seconds:g} s and {were} stopped. {advised}"


def nothing_drawn(seconds: float, advised: str) -> str:
    """The error of a study that did not get far enough in ``seconds`` to draw anything."""
    return f"These runs did not get far enough to draw in the {seconds:g} s a page allows. {advised}"
