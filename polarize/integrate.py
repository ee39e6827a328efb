"""Running an experiment: exact gradient flow, or gradient descent.

``simulate(experiment)`` builds the cheapest exact system for it
(``polarize.systems.build_system``: the closed logistic system, the reduced
coordinates ``W = X V``, or the full ``(V, a)`` / ``(U, a)``) and marches it to
the saved times.

Time stepping is scipy's (LSODA or DOP853, with tight tolerances); this module
only drives the stepper and reads each saved time off the step's dense output,
so memory stays proportional to what is saved. Normalizers with kinks (relu,
l1, sparsemax) are stepped by ``polarize.switching``, which locates each switch
and restarts the stepper there. Gradient descent always runs in
the full coordinates, step for step as a plain loop would.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import cast

import numpy as np
from threadpoolctl import ThreadpoolController

from polarize.budget import MAX_FLOW_STEPS, STALL_STEPS, WallClock, steps_message
from polarize.config import ConfigError, Experiment
from polarize.diagnostics import Recorder, Result, ScoresTooSmall
from polarize.normalizers import DegenerateStateError, make_normalizer
from polarize.status import Status
from polarize.switching import AT_REST, SwitchLog, start_solver
from polarize.systems import DescentSystem, Schedule, System, build_loss, build_system

__all__ = ["simulate", "simulate_within", "sample_steps", "RTOL", "ATOL"]

RTOL = 1e-10
"""Relative tolerance of the flow's adaptive steps (per step, on every state variable)."""
ATOL = 1e-12
"""Absolute tolerance of the flow's adaptive steps."""


# The engine's linear algebra is on small matrices and vectors, where threaded BLAS
# only adds synchronization (eight times slower here on a busy 2-core machine).
_THREADPOOLS = ThreadpoolController()


class _Stopped(Exception):
    """The run cannot go on; the message says why, in words."""


class _OutOfTime(_Stopped):
    """The run used up its wall-clock budget."""


def sample_steps(horizon: float, lr: float, samples: int) -> np.ndarray:
    """Step counts at which a run is saved: 0, then log-spaced up to ``round(horizon / lr)``.

    Rounding to whole steps can merge neighbours, so there may be fewer than
    ``samples``. The flow uses the same grid (times ``k * lr``) so that flow and
    descent can be compared time for time.
    """
    total = float(np.round(horizon / lr))  # a float: beyond int64 for a long flow saved from a small lr
    if total < 1:
        return np.array([0.0, horizon / lr])
    steps = np.unique(np.round(np.geomspace(1.0, total, samples - 1)))
    return np.concatenate([[0.0], steps])


def _sample_times(experiment: Experiment) -> np.ndarray:
    horizon = experiment.horizon
    t = sample_steps(horizon, experiment.lr, experiment.samples) * experiment.lr
    # The flow ends exactly at the horizon; descent ends after whole steps, which is the
    # horizon itself unless horizon / lr is not a whole number.
    if experiment.method == "flow" or abs(t[-1] - horizon) <= 1e-9 * horizon:
        t[-1] = horizon
    return t


def _march(fun: Callable, y0: np.ndarray, plan: Schedule, log: SwitchLog | None = None,
           clock_budget: WallClock | None = None) -> Iterator[np.ndarray]:
    """Step a scipy ``OdeSolver`` and yield the states at the targets of ``plan``.

    Yields arrays of shape (state, k): the states at the targets that one step
    crossed, one per column (first the start, alone).

    Without ``plan.clock`` the targets are values of the independent variable.
    With it, they are values of the monotone function ``clock(y)`` of the state,
    and each is located inside the step that crosses it by Newton's method on
    the step's dense output.

    A run that takes ``STALL_STEPS`` steps without reaching a target is held at
    rest if its velocity is rounding noise, and stopped otherwise (with
    ``plan.stall_note``). With ``plan.kinks`` the stepper restarts at each
    switch, recorded in ``log``. A step begun after ``clock_budget`` expired stops the run.
    """
    budget = clock_budget or WallClock()
    targets, clock = plan.targets, plan.clock
    bound = targets[-1] if clock is None else np.inf
    options = {"jac": plan.jacobian} if plan.jacobian is not None else {}
    solver = start_solver(plan.stepper, fun, 0.0, y0, bound, kinks=plan.kinks, logits=plan.logits, log=log,
                          rtol=RTOL, atol=ATOL, **options)
    yield y0[:, None]
    k, since = 1, 0
    now = clock(y0) if clock else 0.0
    for _ in range(MAX_FLOW_STEPS):
        if budget.expired():
            raise _OutOfTime(budget.message())
        if since == STALL_STEPS:
            yield _held_at_rest(fun, solver, len(targets) - k, plan.stall_note)
            return
        start, before = solver.t, now
        since += 1
        _step(solver)
        now = clock(solver.y) if clock else solver.t
        if now < targets[k]:
            continue
        since = 0
        j = int(np.searchsorted(targets, now, side="right"))
        local = solver.dense_output()
        where = targets[k:j] if clock is None else _locate(
            local, clock, plan.clock_rate, targets[k:j], start, solver.t, before, now)
        yield local(where).reshape(len(y0), -1)
        k = j
        if k == len(targets):
            return
    raise _Stopped(steps_message("flow", MAX_FLOW_STEPS))


def _step(solver) -> None:
    """One adaptive step; a failed step or a state that overflowed stops the run."""
    message = solver.step()
    if solver.status == "failed":
        raise _Stopped(f"the integrator stopped: {message}")
    if not np.all(np.isfinite(solver.y)):
        raise _Stopped("the state overflowed (the flow diverges)")


def _held_at_rest(fun: Callable, solver, remaining: int, note: str) -> np.ndarray:
    """The current state for each of the ``remaining`` targets if the flow is at rest; else stop."""
    velocity = np.max(np.abs(fun(solver.t, solver.y)))
    if velocity <= AT_REST * max(1.0, np.max(np.abs(solver.y))):
        return np.repeat(solver.y[:, None], remaining, axis=1)
    raise _Stopped(steps_message("stall", STALL_STEPS) + note)


def _locate(local, clock, clock_rate, want, lo, hi, clock_lo, clock_hi):
    """Solve ``clock(local(x)) = want`` for each entry of ``want`` on ``[lo, hi]``.

    Newton's method from the linear-interpolation guess, with the derivative
    ``clock_rate`` (d clock / dx) and every iterate kept inside the step; the clock is monotone
    and smooth over one accurate step, so three or four iterations reach rounding.
    """
    x = lo + (hi - lo) * (want - clock_lo) / (clock_hi - clock_lo)
    tolerance = 8 * np.finfo(float).eps * np.maximum(1.0, np.abs(want))
    for _ in range(20):
        y = local(x)
        miss = clock(y) - want
        if np.all(np.abs(miss) <= tolerance):
            break
        x = np.clip(x - miss / clock_rate(y), lo, hi)
    return x


def simulate(experiment: Experiment, *, progress: Callable[[int, int], None] | None = None,
             budget: float | None = None) -> Result:
    """Run an experiment and measure it at every saved time.

    Parameters
    ----------
    experiment : Experiment
        Drawn arrays (``a0``, ``V0``, ``target``, ...) are filled in from its
        seed where not given; the result's ``experiment`` holds them all.
    progress : callable, optional
        Called as ``progress(saved, total)`` after each batch of saved times.
    budget : float, optional
        Seconds of wall-clock time the run may take; past them it stops with
        ``status == Status.OUT_OF_TIME`` and keeps what it saved.

    Returns
    -------
    Result
        Arrays over the K saved times: ``t`` (K), ``s``, ``a``, ``u`` (K x n),
        ``loss``, ``entropy`` (K) and more. A run that cannot go on (descent
        diverging, a normalizer reaching a state where it is undefined) stops
        early with ``status == Status.STOPPED`` and a ``message`` saying why; what
        was saved until then is kept.

    Raises
    ------
    ConfigError
        Naming ``a0`` or ``a_init`` when the normalizer is undefined at the
        starting logits (e.g. ``l1`` or ``l2`` with every logit zero), or the
        explicit array with the largest entry when the start overflows a float.
    """
    # Overflow is detected where it matters (a state or a measurement not finite), not warned about.
    with _THREADPOOLS.limit(limits=1, user_api="blas"), np.errstate(over="ignore", invalid="ignore",
                                                                      divide="ignore"):
        return _simulate(experiment, progress, WallClock() if budget is None else WallClock(budget))


def simulate_within(experiment: Experiment, seconds: float) -> Result:
    """``simulate(experiment, budget=seconds)``, by position (for ``runner.call_with_timeout``)."""
    return simulate(experiment, budget=seconds)


def _simulate(experiment: Experiment, progress: Callable[[int, int], None] | None,
              clock: WallClock) -> Result:
    e = experiment.resolved()
    normalizer = e.sigma
    system = build_system(e, build_loss(e), normalizer)
    t = _sample_times(e)
    recorder = Recorder()
    try:
        # Measured before anything runs, so that a start where the normalizer is undefined is
        # refused as bad input rather than reported as a run that stopped at t = 0.
        system.record(system.y0[:, None], recorder)
    except (DegenerateStateError, ScoresTooSmall) as exc:
        name = "a0" if experiment.a0 is not None else "a_init"
        raise ConfigError(name, f"cannot start there: {exc}") from None
    except (FloatingPointError, np.linalg.LinAlgError):
        if _starts_at_unit_temperature(e):
            raise ConfigError("temperature", f"{e.temperature:g} is too small: the gradients, divided by it, "
                              "overflow a float at the start") from None
        raise ConfigError(_largest_given(experiment), "cannot start there: the loss, its gradient or the "
                          "singular values of V overflow a float at the start (entries too large)") from None

    calls, log = [0], SwitchLog()
    status, message = Status.FINISHED, ""
    last = system.y0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        try:
            states = _states(e, system, t, calls, log, clock)
            next(states)  # the start, measured above
            for Y in states:
                system.record(Y, recorder)
                last = Y[:, -1]
                if progress is not None:
                    progress(len(recorder), len(t))
        except (DegenerateStateError, FloatingPointError, _Stopped) as exc:
            status = Status.OUT_OF_TIME if isinstance(exc, _OutOfTime) else Status.STOPPED
            message = _stopped_message(e, t, len(recorder), str(exc))
        except np.linalg.LinAlgError:
            status = Status.STOPPED
            message = _stopped_message(e, t, len(recorder), "the state overflowed: the singular values "
                                       "of V can no longer be computed (the run diverges)")
    return recorder.result(e, t, system.V(last), status=status, message=message,
                           n_evaluations=calls[0], switches=log.switches + log.released, note=log.note())


def _states(e: Experiment, system: System, t: np.ndarray, calls: list[int],
            log: SwitchLog, clock: WallClock) -> Iterator[np.ndarray]:
    """The states at the saved times ``t`` (columns of (state, k) arrays), by descent or by the flow."""
    if e.method == "gd":
        return _descend(cast(DescentSystem, system), e.lr, np.rint(t / e.lr).astype(np.int64), calls, clock)
    return _march(_counted(system.field, calls), system.y0, system.schedule(t), log=log, clock_budget=clock)


def _counted(fun, calls):
    def wrapped(tau, y):
        calls[0] += 1
        return fun(tau, y)
    return wrapped


def _descend(system: DescentSystem, lr: float, save_at: np.ndarray, calls,
             clock: WallClock) -> Iterator[np.ndarray]:
    """Gradient descent ``y <- y - lr * grad``, yielding the state at each step count in ``save_at``.

    The budget is looked at every 64 steps (a step takes microseconds).
    """
    y = system.y0.copy()
    yield y[:, None]
    step = 0
    for target in save_at[1:]:
        while step < target:
            if step % 64 == 0 and clock.expired():
                calls[0] = step
                raise _OutOfTime(clock.message())
            y = y - lr * system.gradient(y)
            step += 1
        calls[0] = step
        if not np.all(np.isfinite(y)):
            raise _Stopped(f"gradient descent diverged before step {step} (lr = {lr:g} is too large)")
        yield y[:, None]


def _stopped_message(e: Experiment, t: np.ndarray, saved: int, why: str) -> str:
    when = f"t = {t[saved - 1]:.3g}" if saved else "the start"
    return f"stopped after {when} of {e.horizon:.3g}: {why}"


def _starts_at_unit_temperature(e: Experiment) -> bool:
    """Whether a start that overflows would not at temperature 1: then the temperature is at fault."""
    if e.temperature == 1.0:
        return False
    one = dataclasses.replace(e, temperature=1.0)
    system = build_system(one, build_loss(one), make_normalizer(one.normalizer, eps=one.eps))
    try:
        system.record(system.y0[:, None], Recorder())
    except (FloatingPointError, np.linalg.LinAlgError, DegenerateStateError):
        return False
    return True


def _largest_given(experiment: Experiment) -> str:
    """The explicit array with the largest entry (the likely cause of an overflow), else ``V_scale``."""
    given = {name: float(np.max(np.abs(getattr(experiment, name))))
             for name in ("V0", "X", "a0", "y", "target") if getattr(experiment, name) is not None}
    return max(given, key=lambda name: given[name]) if given else "V_scale"
