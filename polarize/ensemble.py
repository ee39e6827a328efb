"""Many starting logits of one experiment at once: ``simulate_many`` and its ``Ensemble``.

The starts are run as batches of the system ``simulate`` runs (``polarize.systems.build_system``:
the same choice, a batch of k starts instead of one) in groups of at most ``GROUP_SIZE``. A group
that cannot be marched as one (a failed step, an overflow, a start that needs far more steps than
the rest) is split in two and each half tried again, so that one slow start holds back only the few
it is grouped with; the starts of a small group that fails are run by ``simulate`` itself, which
says why it stopped or refuses the start. Where many starts cannot run as one batch at all
(``polarize.systems.runs_together``: l1's sliding mode, a method that does not batch) every start
is run by ``simulate``. Every entry therefore agrees with ``simulate`` on the same start.
A field that overflows anywhere in a batch splits it at once (a NaN would otherwise trap scipy's
step-size control in an endless loop), and a wall-clock ``budget`` stops the whole ensemble,
keeping the starts done before it ran out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import ArrayLike
from threadpoolctl import ThreadpoolController

from polarize import notebook, stepping
from polarize.budget import OutOfTime, WallClock
from polarize.config import ConfigError, Experiment
from polarize.env import max_starts
from polarize.integrate import simulate
from polarize.methods import METHODS
from polarize.normalizers import DegenerateStateError
from polarize.save_at import SaveAt
from polarize.status import Status
from polarize.stepping import Stopped
from polarize.systems import DescentSystem, System, build_loss, build_system, runs_together

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

__all__ = ["Ensemble", "max_starts", "simulate_many"]

GROUP_STEPS = 2000
"""Adaptive steps a batch may take before it is split (smooth groups need tens to hundreds)."""
GROUP_SIZE = 2048
"""Starts marched together at most: large enough that Python's per-step cost is shared, small
enough that a slow start slows down few others."""
GROUP_FLOATS = 1 << 23
"""A group's stepper holds at most about this many numbers (64 MB): large states make smaller groups."""
TRAJECTORY_FLOATS = 1 << 24
"""Saved trajectories hold at most this many numbers (128 MB); beyond, fewer times are saved."""
SPLIT_ABOVE = 8
"""A failing group of at most this many starts is not split further: each runs alone."""
_THREADPOOLS = ThreadpoolController()


@dataclass(frozen=True, kw_only=True, eq=False)
class Ensemble:
    """The outcome of one experiment from K starting logits.

    Attributes
    ----------
    experiment : Experiment
        The resolved experiment (its ``a0`` is not used: the starts are ``a0`` below).
    a0 : ndarray, shape (K, n)
        The starting logits.
    s, a : ndarray, shape (K, n)
        Scores and logits at the horizon (or where a stopped run stopped).
    winner : ndarray of int, shape (K,)
        ``argmax s`` at the horizon.
    one_minus_max : ndarray, shape (K,)
    finished : ndarray of bool, shape (K,)
        False where the run stopped early (``simulate`` says why for that start).
    t : ndarray, shape (T,) or None
        Saved times, with ``trajectories=True``.
    s_path : ndarray, shape (K, T, n) or None
        The scores at the saved times, with ``trajectories=True``.
    alone : int
        How many starts had to be run one by one.
    status : Status
        ``Status.OUT_OF_TIME`` when the budget ran out: the ensemble then holds only the first starts,
        those done in time (``len(ensemble)`` is less than the number asked for).
    """

    experiment: Experiment
    a0: np.ndarray
    s: np.ndarray
    a: np.ndarray
    winner: np.ndarray
    one_minus_max: np.ndarray
    finished: np.ndarray
    t: np.ndarray | None = None
    s_path: np.ndarray | None = None
    alone: int = 0
    status: Status = Status.FINISHED

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status(self.status))
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                value.setflags(write=False)

    def __len__(self) -> int:
        return len(self.a0)

    def __repr__(self) -> str:
        # One line for notebooks: the settings, how many starts ran how far, who won how often.
        return notebook.ensemble_repr(self)

    def _repr_html_(self) -> str:
        return notebook.ensemble_html(self)

    def figure(self, tokens: Sequence[int] = (0, 1, 2), **options: Any) -> go.Figure:
        """Where each start ends: the starts on the triangle of three tokens, coloured by their winner.

        Parameters
        ----------
        tokens : three ints
            The tokens at the triangle's vertices; each start is placed by their shares among
            themselves in its starting scores (for n = 2 the starts lie on a segment).
        **options
            ``title``, ``height``.

        Returns
        -------
        plotly.graph_objects.Figure
            Paler markers where the naive prediction (the largest fitness at uniform scores) wins.
            For a grid of starts with the line where that prediction fails, see ``polarize.basins`` and
            ``polarize.basin_figure``.
        """
        return notebook.ensemble_figure(self, tokens, **options)

    def to_pandas(self, per: str = "start") -> pd.DataFrame:
        """The outcome as a tidy ``pandas.DataFrame``.

        Parameters
        ----------
        per : {"start", "token", "path"}
            ``"start"``: one row per start (``start, winner, one_minus_max, finished, a0_i, s_i``);
            ``"token"``: per start and token (``start, token, a0, s, a, won``); ``"path"``: per start,
            saved time and token (``start, step, t, token, s``; needs ``trajectories=True``).

        Returns
        -------
        pandas.DataFrame
        """
        return notebook.ensemble_frame(self, per)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the resolved config and every array as nested lists."""
        return notebook.as_dict(self)


def simulate_many(experiment: Experiment, a0: ArrayLike, *, trajectories: bool = False,
                  budget: float | None = None) -> Ensemble:
    """Run ``experiment`` from each row of ``a0`` at once.

    Parameters
    ----------
    experiment : Experiment
        Everything but the starting logits (``V0``, target, loss, normalizer, method,
        horizon); arrays not given are drawn from its seed, once, for every start.
    a0 : array_like, shape (K, n)
        Starting logits, one start per row.
    trajectories : bool
        Also keep the scores at the saved times (``Ensemble.t``, ``Ensemble.s_path``);
        when K * samples * n would exceed ``TRAJECTORY_FLOATS`` fewer times are saved.
    budget : float, optional
        Seconds of wall-clock time the ensemble may take (none when not given). Past
        them it stops, with ``status == Status.OUT_OF_TIME``, and holds the first starts,
        those it finished in time.

    Returns
    -------
    Ensemble

    Raises
    ------
    ConfigError
        Naming ``a0``: not a (K, n) array of finite numbers, more starts than the cap
        (``POLARIZE_MAX_STARTS``), or a start that ``simulate`` refuses (one where the
        normalizer is undefined, or whose loss or gradient overflows a float); the
        message says which row.
    """
    e = experiment.resolved()
    starts = _checked_starts(e, a0)
    clock = WallClock() if budget is None else WallClock(budget)
    loss = build_loss(e)
    system = build_system(e, loss, e.sigma, starts)
    _check_defined(system, starts)
    grid = e.save_at(_samples(e, len(starts), trajectories))
    t = grid.t
    rows = np.empty((len(starts), len(t), e.n)) if trajectories else None
    a_end, s_end = np.empty_like(starts), np.empty_like(starts)
    finished = np.ones(len(starts), dtype=bool)
    alone = done = 0
    status = Status.FINISHED
    together = runs_together(e)
    with _THREADPOOLS.limit(limits=1, user_api="blas"), np.errstate(over="ignore", invalid="ignore",
                                                                      divide="ignore"):
        size = min(GROUP_SIZE, max(1, GROUP_FLOATS // system.floats_per_start())) if together else 1
        try:
            for begin in range(0, len(starts), size):
                group = np.arange(begin, min(begin + size, len(starts)))
                parts = (_run_group(e, loss, starts, group, grid, clock) if together
                         else [_alone(e, starts[begin], group, t, clock)])
                for index, a, s, ok, single in parts:
                    a_end[index], s_end[index] = a[:, -1], s[:, -1]
                    finished[index] = ok
                    alone += single
                    done = index[-1] + 1  # the parts of a group come in order
                    if rows is not None:
                        rows[index] = s
        except OutOfTime:
            status = Status.OUT_OF_TIME
    s_end, winner = s_end[:done], np.argmax(s_end[:done], axis=1)
    return Ensemble(experiment=e, a0=starts[:done], s=s_end, a=a_end[:done], winner=winner,
                    one_minus_max=1.0 - s_end[np.arange(done), winner], finished=finished[:done],
                    t=t if trajectories else None, s_path=None if rows is None else rows[:done], alone=alone,
                    status=status)


def _checked_starts(e: Experiment, a0) -> np.ndarray:
    try:
        starts = np.array(a0, dtype=float)
    except OverflowError:
        raise ConfigError("a0", "holds a number too large for a float") from None
    except (TypeError, ValueError):
        raise ConfigError("a0", "must be a (K, n) array of numbers") from None
    if starts.ndim != 2 or starts.shape[1] != e.n or len(starts) == 0:
        raise ConfigError("a0", f"must have shape (K, {e.n}) with K >= 1, got {starts.shape}")
    if not np.all(np.isfinite(starts)):
        raise ConfigError("a0", "must hold finite numbers only (no NaN or infinity)")
    cap = max_starts()
    if len(starts) > cap:
        raise ConfigError("a0", f"{len(starts)} starts exceed the cap of {cap} (POLARIZE_MAX_STARTS)")
    return starts


def _check_defined(system: System, starts: np.ndarray) -> None:
    """Refuse, as bad input, a start where the normalizer is undefined (``simulate`` does the same)."""
    try:
        system.scores(system.rows(system.y0))
    except DegenerateStateError:
        rows = system.rows(system.y0)
        for k in range(len(starts)):
            try:
                system.scores(rows[k:k + 1])
            except DegenerateStateError as exc:
                raise ConfigError("a0", f"cannot start from row {k}: {exc}") from None


def _samples(e: Experiment, K: int, trajectories: bool) -> int:
    """How many times to save: the start and the end only, unless trajectories are kept (then as
    ``simulate`` saves them, fewer if K trajectories would not fit)."""
    if not trajectories:
        return 2
    return int(min(e.samples, max(2, TRAJECTORY_FLOATS // (K * e.n))))


class GroupFailed(Exception):
    """The batch could not be marched as one (failed step, overflow, too many steps)."""


def _run_group(e: Experiment, loss, starts: np.ndarray, index: np.ndarray, grid: SaveAt, clock: WallClock):
    """Yield ``(index, a, s, finished, alone)`` for parts of a group, splitting it where it cannot run as one.

    ``a`` and ``s`` are (k, T, n) at the saved times ``grid.t``. Raises ``OutOfTime`` once ``clock``
    has run out.
    """
    system = build_system(e, loss, e.sigma, starts[index])
    try:
        if METHODS[e.method].stepped:  # a matrix system: the closed and reduced ones run the flow only
            Y = descend(cast(DescentSystem, system), e.lr, grid.steps, clock)
        else:
            Y = march(system, grid.t, clock)
        a, s = system.scores(Y)
        # simulate stops a run whose measurements (loss, gradients) overflow, even if its state did not.
        velocity = system.field(system.schedule(grid.t).targets[-1], system.flat(Y[:, -1]))
        if not (np.all(np.isfinite(s)) and np.all(np.isfinite(velocity))):
            raise GroupFailed("the run diverges")
    except (GroupFailed, DegenerateStateError, FloatingPointError):
        if len(index) <= SPLIT_ABOVE:
            for k in index:
                yield _alone(e, starts[k], np.array([k]), grid.t, clock)
            return
        half = len(index) // 2
        yield from _run_group(e, loss, starts, index[:half], grid, clock)
        yield from _run_group(e, loss, starts, index[half:], grid, clock)
        return
    yield index, a, s, True, False


def march(system: System, t: np.ndarray, clock: WallClock | None = None) -> np.ndarray:
    """March a batch through the saved times ``t`` (T,): its rows (k, T, m) at each (the first its start).

    ``simulate``'s march (``polarize.stepping``) on the batch, with the tolerances of its schedule (divided
    by ``sqrt(k)``), at most ``GROUP_STEPS`` steps and no stall rule; ``clock`` (none when not given)
    is looked at at every evaluation of the field. Raises ``GroupFailed`` on a failed step, a field or
    state that overflowed or more than ``GROUP_STEPS`` steps; ``budget.OutOfTime`` when ``clock`` runs out.
    """
    clock = clock or WallClock()
    states = stepping.march(_finite_field(system, clock), system.y0, system.schedule(t), budget=clock,
                            max_steps=GROUP_STEPS, stall=None)
    return _gathered(system, (y for columns in states for y in columns.T), len(t))


def descend(system: DescentSystem, lr: float, steps: np.ndarray,
            clock: WallClock | None = None) -> np.ndarray:
    """Gradient descent on a batch, saved at the step counts ``steps`` (T,): its rows (k, T, m).

    ``simulate``'s descent loop (``polarize.stepping``) on the batch's flat state. Raises ``GroupFailed``
    when a start diverges (``simulate`` then says where, for that start alone), ``budget.OutOfTime``
    when the budget ``clock`` runs out.
    """
    states = stepping.descend(system.gradient, system.y0, lr, steps, budget=clock)
    return _gathered(system, states, len(steps))


def _finite_field(system: System, clock: WallClock):
    """``system.field``, stopping the march at the first value that is not finite or once time is up.

    Time is looked at in every evaluation, not only between steps: one step of a large batch
    with LSODA's banded Jacobian makes many of them.

    scipy's steppers shrink a step by a factor computed from its error: a NaN error makes
    the step size NaN, which no test of "too small" catches, and the step then loops for ever
    inside ``solver.step()`` (an overflow at one start of a batch is enough). So the batch
    is split at once, and the start that overflows is judged by ``simulate`` alone.
    """
    def field(x, y, sigma=None):
        clock.check()
        out = system.field(x, y, sigma)
        if not np.all(np.isfinite(out)):
            raise GroupFailed("the field overflowed")
        return out
    return field


def _gathered(system: System, states: Iterable[np.ndarray], T: int) -> np.ndarray:
    """The flat states a loop yields, one per saved time, as the batch's rows (k, T, m)."""
    k, m = system.rows(system.y0).shape
    out = np.empty((k, T, m))
    try:
        for j, y in enumerate(states):
            out[:, j] = system.rows(y)
    except Stopped as exc:
        raise GroupFailed(str(exc)) from None
    return out


def _alone(e: Experiment, a0: np.ndarray, index: np.ndarray, t: np.ndarray, clock: WallClock):
    """One start by ``simulate`` (in the time left), its saved scores read at ``t`` (held at the last
    one if it stopped); a start ``simulate`` refuses is refused, naming its row."""
    try:
        result = simulate(dataclasses.replace(e, a0=a0, samples=max(e.samples, 2)), budget=clock.remaining())
    except ConfigError as exc:
        why = str(exc).split(": ", 1)[-1].removeprefix("cannot start there: ")
        raise ConfigError("a0", f"cannot start from row {index[0]}: {why}") from None
    if result.status is Status.OUT_OF_TIME:
        raise OutOfTime(clock.message())
    where = np.clip(np.searchsorted(result.t, t * (1 - 1e-12)), 0, len(result.t) - 1)
    ok = result.finished
    return index, np.asarray(result.a)[where][None], np.asarray(result.s)[where][None], ok, True
