"""Running an experiment: exact gradient flow, or gradient descent.

``simulate(experiment)`` builds the cheapest exact system for it, a batch of one
(``polarize.systems.build_system``: the closed logistic system, the reduced
coordinates ``W = X V``, or the full ``(V, a)`` / ``(U, a)``) and marches it to
the saved times (``Experiment.save_at``) through ``polarize.stepping``: the same
systems, the same choice and the same loops ``simulate_many`` runs its batches through.

Time stepping is scipy's (LSODA or DOP853, with tight tolerances), read at each saved
time off the step's dense output. Normalizers with kinks (relu, l1, sparsemax) are
stepped by ``polarize.switching``, which locates each switch and restarts the stepper
there. Gradient descent always runs in the full coordinates, step for step as a plain
loop would.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import numpy as np
from threadpoolctl import ThreadpoolController

from polarize.budget import OutOfTime, WallClock
from polarize.config import ConfigError, Experiment
from polarize.diagnostics import Recorder, Result, ScoresTooSmall
from polarize.methods import METHODS
from polarize.normalizers import DegenerateStateError
from polarize.save_at import SaveAt
from polarize.status import Status
from polarize.stepping import ATOL, RTOL, StepsUsedUp, Stopped
from polarize.switching import SwitchLog
from polarize.systems import System, build_loss, build_system

__all__ = ["simulate", "simulate_within", "RTOL", "ATOL"]

# The engine's linear algebra is on small matrices and vectors, where threaded BLAS
# only adds synchronization (eight times slower here on a busy 2-core machine).
_THREADPOOLS = ThreadpoolController()


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
        was saved until then is kept. A flow still moving when it has used up its integrator steps
        stops with ``status == Status.OUT_OF_STEPS``.

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
    system = build_system(e, build_loss(e), e.sigma)
    grid = e.save_at()
    t = grid.t
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
            states = _states(e, system, grid, calls, log, clock)
            next(states)  # the start, measured above
            for Y in states:
                system.record(Y, recorder)
                last = Y[:, -1]
                if progress is not None:
                    progress(len(recorder), len(t))
        except (DegenerateStateError, FloatingPointError, Stopped, OutOfTime) as exc:
            status = (Status.OUT_OF_TIME if isinstance(exc, OutOfTime) else
                      Status.OUT_OF_STEPS if isinstance(exc, StepsUsedUp) else Status.STOPPED)
            message = _stopped_message(e, t, len(recorder), str(exc))
        except np.linalg.LinAlgError:
            status = Status.STOPPED
            message = _stopped_message(e, t, len(recorder), "the state overflowed: the singular values "
                                       "of V can no longer be computed (the run diverges)")
    return recorder.result(e, t, system.V(last), status=status, message=message,
                           n_evaluations=calls[0], switches=log.switches + log.released, note=log.note())


def _states(e: Experiment, system: System, grid: SaveAt, calls: list[int],
            log: SwitchLog, clock: WallClock) -> Iterator[np.ndarray]:
    """The states at the saved times (columns of (state, k) arrays), by the experiment's method."""
    return METHODS[e.method].states(system, grid, e.lr, calls=calls, log=log, clock=clock)


def _stopped_message(e: Experiment, t: np.ndarray, saved: int, why: str) -> str:
    when = f"t = {t[saved - 1]:.3g}" if saved else "the start"
    return f"stopped after {when} of {e.horizon:.3g}: {why}"


def _starts_at_unit_temperature(e: Experiment) -> bool:
    """Whether a start that overflows would not at temperature 1: then the temperature is at fault."""
    if e.temperature == 1.0:
        return False
    one = dataclasses.replace(e, temperature=1.0)
    system = build_system(one, build_loss(one), one.sigma)
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
