"""The one march and the one descent loop, for a batch of one start or of many.

``march`` drives a scipy ``OdeSolver`` and reads the state at each saved time off the
step's dense output, so memory stays proportional to what is saved; ``descend`` is
gradient descent, step for step as a plain loop. ``polarize.integrate`` (one start) and
``polarize.ensemble`` (many) run a ``polarize.systems`` system's flat state through them.
Either stops in one of two ways: ``Stopped`` (the run cannot go on; the message says why,
in words) or ``budget.OutOfTime`` (its wall-clock budget ran out).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.integrate import DOP853, OdeSolver

from polarize.budget import MAX_FLOW_STEPS, STALL_STEPS, WallClock, flow_steps_message, stall_message
from polarize.normalizers import Kinks
from polarize.switching import AT_REST, SwitchLog, start_solver

__all__ = ["ATOL", "RTOL", "Schedule", "Stopped", "StepsUsedUp", "descend", "march"]

RTOL = 1e-10
"""Relative tolerance of the flow's adaptive steps (per step, on every state variable)."""
ATOL = 1e-12
"""Absolute tolerance of the flow's adaptive steps."""
CHECK_EVERY = 64
"""Descent looks at its budget every this many steps (a step takes microseconds)."""


class Stopped(Exception):
    """The run cannot go on; the message says why, in words."""


class StepsUsedUp(Stopped):
    """The run used up its integrator steps while still moving: it could go on, so where it stopped says
    nothing about where it ends."""


@dataclass(frozen=True, kw_only=True)
class Schedule:
    """How to march a system to the saved times.

    Attributes
    ----------
    targets : ndarray, shape (K,)
        The saved times in the marched variable (``t`` itself, or ``log(1 + t)``).
    stepper : type of scipy.integrate.OdeSolver
    jacobian : callable or None
        ``jac(x, y)`` of the vector field, for implicit steppers.
    rtol, atol : float
        The stepper's tolerances (a batch of k starts divides them by ``sqrt(k)``).
    options : dict
        More options for the stepper (a banded Jacobian's ``lband``, ``uband``).
    kinks : Kinks or None
        Where the normalizer is not smooth (``polarize.switching``): the
        integrator then locates each switch and restarts there.
    logits : slice or None
        Where the logits sit in the state (needed with ``kinks``).
    stall_note : str
        Appended to the message if the stepper stalls (what is known to cause it).
    """

    targets: np.ndarray
    stepper: type[OdeSolver] = DOP853
    jacobian: Callable | None = None
    rtol: float = RTOL
    atol: float = ATOL
    options: dict[str, Any] = field(default_factory=dict)
    kinks: Kinks | None = None
    logits: slice | None = None
    stall_note: str = ""


def march(fun: Callable, y0: np.ndarray, plan: Schedule, *, log: SwitchLog | None = None,
          budget: WallClock | None = None, max_steps: int = MAX_FLOW_STEPS,
          stall: int | None = STALL_STEPS) -> Iterator[np.ndarray]:
    """Step a scipy ``OdeSolver`` and yield the states at the targets of ``plan``.

    Parameters
    ----------
    fun : callable
        The vector field ``fun(x, y)`` (state,) in the marched variable.
    y0 : ndarray, shape (state,)
    plan : Schedule
    log : SwitchLog, optional
        Filled in with the switches at the kinks of ``plan.kinks``.
    budget : WallClock, optional
        A step begun after it expired raises ``budget.OutOfTime``.
    max_steps : int
        Steps in all; past them the run stops.
    stall : int or None
        A run that takes this many steps without reaching a target is held at rest if its
        velocity is rounding noise; otherwise it goes on if, at the pace of those steps, the next
        target lies within the steps left (a large stiff state crosses the late stretch of a
        converging run in many small stable steps), and is stopped as stalled if not (with
        ``plan.stall_note``). None: no such rule (a batch is split instead, once past ``max_steps``).

    Yields
    ------
    ndarray, shape (state, k)
        The states at the targets that one step crossed, one per column (first the start, alone).

    Raises
    ------
    Stopped
        A failed step, a state that overflowed, or a stall (no pace to reach the next target).
    StepsUsedUp
        ``max_steps`` used up (with ``plan.stall_note``) before the last target.
    """
    budget = budget or WallClock()
    targets = plan.targets
    options = dict(plan.options)
    if plan.jacobian is not None:
        options["jac"] = plan.jacobian
    solver = start_solver(plan.stepper, fun, targets[0], y0, targets[-1], kinks=plan.kinks,
                          logits=plan.logits, log=log, rtol=plan.rtol, atol=plan.atol, **options)
    yield y0[:, None]
    k, since = 1, 0
    now = solver.t
    mark = now  # where the current stretch of steps without a target began
    for step in range(max_steps):
        budget.check()
        if since == stall:
            if _at_rest(fun, solver):
                yield np.repeat(solver.y[:, None], len(targets) - k, axis=1)
                return
            # On only while, at this stretch's pace, the next target lies within the steps left: a large
            # stiff state crossing a converging stretch in small stable steps does; a stepper stuck at
            # a kink (or going back and forth across it) does not.
            if (now - mark) * (max_steps - step) < (targets[k] - now) * stall:
                raise Stopped(stall_message(stall) + plan.stall_note)
            since, mark = 0, now
        since += 1
        _step(solver)
        now = solver.t
        if now < targets[k]:
            continue
        since, mark = 0, now
        j = int(np.searchsorted(targets, now, side="right"))
        yield solver.dense_output()(targets[k:j]).reshape(len(y0), -1)
        k = j
        if k == len(targets):
            return
    raise StepsUsedUp(flow_steps_message(max_steps) + plan.stall_note)


def descend(gradient: Callable[[np.ndarray], np.ndarray], y0: np.ndarray, lr: float, save_at: np.ndarray, *,
            budget: WallClock | None = None, calls: list[int] | None = None) -> Iterator[np.ndarray]:
    """Gradient descent ``y <- y - lr * gradient(y)``, yielding the state at each step count in ``save_at``.

    Parameters
    ----------
    gradient : callable
        The loss gradient, same shape as its argument.
    y0 : ndarray
        A state of any shape (a batch's flat state: each start then descends on its own).
    lr : float
    save_at : ndarray of int, shape (T,)
        Step counts, the first 0 (the start is yielded first).
    budget : WallClock, optional
        Looked at every ``CHECK_EVERY`` steps; raises ``budget.OutOfTime`` once expired.
    calls : list of one int, optional
        Set to the number of steps taken, at each saved state and when the budget runs out.

    Yields
    ------
    ndarray, the shape of ``y0``

    Raises
    ------
    Stopped
        A state that is no longer finite (the step is too large): the run diverges.
    """
    budget = budget or WallClock()
    calls = calls if calls is not None else [0]
    y = np.array(y0, dtype=float)
    yield y
    step = 0
    for target in save_at[1:]:
        while step < target:
            if step % CHECK_EVERY == 0 and budget.expired():
                calls[0] = step
                budget.check()
            y = y - lr * gradient(y)
            step += 1
        calls[0] = step
        if not np.all(np.isfinite(y)):
            raise Stopped(f"gradient descent diverged before step {step} (lr = {lr:g} is too large)")
        yield y


def _step(solver) -> None:
    """One adaptive step; a failed step or a state that overflowed stops the run."""
    message = solver.step()
    if solver.status == "failed":
        raise Stopped(f"the integrator stopped: {message}")
    if not np.all(np.isfinite(solver.y)):
        raise Stopped("the state overflowed (the flow diverges)")


def _at_rest(fun: Callable, solver) -> bool:
    """Whether the flow's velocity is rounding noise (the error control would chase it forever)."""
    velocity = np.max(np.abs(fun(solver.t, solver.y)))
    return bool(velocity <= AT_REST * max(1.0, np.max(np.abs(solver.y))))
