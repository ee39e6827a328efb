"""Piecewise-smooth flows: switches located on the stepper's dense output, a restart at each.

relu, l1 and sparsemax are smooth except on their *kinks*, where a coordinate
of ``a`` meets a hyperplane: ``a_i = 0`` (relu, l1) or ``a_i = tau(a)``, the
sparsemax threshold (the edge of its support). Between kinks the flow is as
smooth as softmax's; a smooth stepper fed the kink steps into it and crawls.
``SwitchingSolver`` steps a scipy ``OdeSolver`` through the map's *sides*
(``Kinks.sides``: the map as it is on the side of each kink where the restart
found every coordinate, continued smoothly past it), so a step over a kink is a
full step, and, after each step, checks
the signed distance of every live coordinate to its kink; when one changed
sign, the crossing is located on the step's dense output (Brent's method, as
``solve_ivp``'s event location does; a coordinate creeping up to its kink within
the stepper's ``atol`` counts as arrived), the coordinate is put on its kink
exactly, and a fresh stepper restarts there. What happens on the kink:

- relu and sparsemax: the velocity of a coordinate past the kink is zero, so a
  coordinate that reaches it stays there, switched off (Filippov's convex
  combination with weight 0 on the far side). The near side would pull it back
  only in the degenerate case where the flow is tangent; descent, which lands
  strictly past the kink, keeps it off too, and so does this solver.
- l1: ``da_i/dt = sign(a_i) (u_i - s.u) / |a|_1`` points *towards* ``a_i = 0``
  from both sides whenever ``u_i < s.u``: a sliding mode. The coordinate is held
  on the kink, where ``sign(0) = 0`` gives exactly Filippov's velocity (weights
  1/2, 1/2; the other coordinates' fields agree on both sides). It is released
  to the side it came from when ``u_i - s.u`` turns positive (located like a
  crossing), where descent, chattering around zero, leaves too.

The log (``SwitchLog``) counts the switches and says which coordinates ended on
a kink, for the result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from polarize.normalizers import Kinks, Normalizer

__all__ = ["SwitchLog", "SwitchingSolver", "kinks_of", "start_solver"]

EPS = np.finfo(float).eps
AT_REST = 64 * EPS
"""A velocity below this, relative to the state's size, is rounding noise."""
RELEASE_SPEED = np.sqrt(EPS)
"""l1: a held coordinate is released once the flow pulls it off the kink faster than this
fraction of the run's starting speed (slower pulls are rounding noise after convergence;
a real one passes it within a sliver of time)."""
RELEASE = 1e-300
"""l1: a coordinate released from the kink starts this far from it, on its side
(the flow then carries it away at a speed independent of this value)."""


def kinks_of(normalizer: Normalizer | type) -> Kinks | None:
    """The kinks of a normalizer (a class is asked through its default instance), None for a smooth one.

    The normalizer says (``Normalizer.kinks``): this module knows no normalizer by name.
    """
    instance: Normalizer = normalizer() if isinstance(normalizer, type) else normalizer
    return instance.kinks()


@dataclass
class SwitchLog:
    """What the switching solver did: switches located, and the coordinates on a kink at the end."""

    switches: int = 0
    released: int = 0
    sliding: tuple[int, ...] = ()
    off: tuple[int, ...] = ()

    def note(self) -> str:
        """In words, for the result; empty when the flow met no kink."""
        if not self.switches:
            return ""
        words = [f"{self.switches} switch{'es' if self.switches > 1 else ''} at a kink, each located "
                 "and stepped across"]
        if self.released:
            words.append(f"{self.released} release{'s' if self.released > 1 else ''} from the kink")
        if self.off:
            words.append(f"switched off at the end: token{'s' if len(self.off) > 1 else ''} "
                         + ", ".join(map(str, self.off)))
        if self.sliding:
            words.append("held on the kink a = 0 (sliding mode, Filippov) at the end: token"
                         + ("s " if len(self.sliding) > 1 else " ") + ", ".join(map(str, self.sliding)))
        return "; ".join(words)


def start_solver(stepper, fun, x0, y0, bound, *, kinks: Kinks | None, logits: slice | None,
                 log: SwitchLog | None = None, **options):
    """A scipy ``OdeSolver`` from ``x0``, wrapped in a ``SwitchingSolver`` when there are kinks."""
    if kinks is None or logits is None:
        return stepper(fun, x0, y0, bound, **options)
    return SwitchingSolver(stepper, fun, x0, y0, bound, kinks=kinks, logits=logits,
                           log=log if log is not None else SwitchLog(), **options)


class SwitchingSolver:
    """Steps like an ``OdeSolver`` (``step``, ``t``, ``y``, ``status``, ``dense_output``); restarts at kinks.

    Parameters
    ----------
    stepper : type of scipy.integrate.OdeSolver
    fun : callable
        The vector field ``fun(x, y)`` (state,), and ``fun(x, y, sigma)`` under the normalizer ``sigma``
        (the sides of its kinks, ``Kinks.sides``), which the steps between switches march; a ``jac``
        among the options takes ``sigma`` too.
    x0, y0, bound : float, ndarray (state,), float
        Start and end of the marched variable, as for an ``OdeSolver``.
    kinks : Kinks
    logits : slice
        Where the logits ``a`` (n,) sit in the state.
    log : SwitchLog
        Filled in as the run goes.
    **options
        Passed to each stepper (tolerances, Jacobian).
    """

    def __init__(self, stepper, fun, x0, y0, bound, *, kinks: Kinks, logits: slice, log: SwitchLog,
                 **options):
        jac = options.pop("jac", None)

        def make(x: float, y: np.ndarray):
            # Steps under the map's sides at the restart (``Kinks.sides``): smooth across a kink, so a
            # step over it is a full step, and the crossing is found on its dense output.
            sides = kinks.sides(y[logits])
            smooth = {"jac": lambda x, y: jac(x, y, sides)} if jac is not None else {}
            return stepper(lambda x, y: fun(x, y, sides), x, y, bound, **smooth, **options)

        self._make = make
        self.fun, self.kinks, self.logits, self.log = fun, kinks, logits, log
        a = np.asarray(y0, dtype=float)[logits]
        self._side = np.where(a < 0, -1.0, 1.0)  # l1: the side a held coordinate returns to
        self._speed = float(np.max(np.abs(fun(x0, np.asarray(y0, dtype=float)))))
        self._near = float(np.max(options.get("atol", 0.0)))
        self._dense: Callable[[float], np.ndarray] | None = None
        self._restart(x0, np.asarray(y0, dtype=float))

    def _restart(self, x: float, y: np.ndarray) -> None:
        self.t, self.y, self.status = x, y, "running"
        self._solver = self._make(x, y)
        offset = self.kinks.offset(y[self.logits])
        live = offset != 0 if self.kinks.slides else offset > 0
        self._watch = np.where(live, np.sign(offset), 0.0)
        self._held = np.flatnonzero(offset == 0) if self.kinks.slides else np.array([], dtype=int)
        self.log.sliding = tuple(int(i) for i in self._held)
        self.log.off = () if self.kinks.slides else tuple(int(i) for i in np.flatnonzero(~live))

    def dense_output(self):
        """The last step's interpolant (valid up to ``t``; a step cut at a switch ends there)."""
        return self._dense

    def step(self) -> str | None:
        """One step of the stepper; if it met a kink, end it there and restart on the kink."""
        solver = self._solver
        lo = solver.t
        message = solver.step()
        self.status = solver.status
        if solver.status == "failed":
            return message
        self._dense = dense = solver.dense_output()
        hit = self._first_switch(dense, lo, solver.t, solver.y)
        if hit is None:
            self.t, self.y = solver.t, solver.y
            return message
        x, i, release = hit
        y = np.array(dense(x), dtype=float)
        a = y[self.logits]
        if release:
            a[i] = self._side[i] * RELEASE
            self.log.released += 1
        else:
            crossed = np.flatnonzero((self._watch != 0) & (self._watch * self.kinks.offset(a) <= 0))
            for j in {int(i), *map(int, crossed)}:
                self._side[j] = self._watch[j]
                a[j] = self.kinks.place(a, j)
            self.log.switches += 1
        y[self.logits] = a
        self._restart(x, y)
        return message

    def _first_switch(self, dense, lo: float, hi: float, y_hi: np.ndarray):
        """The earliest ``(x, i, release)`` in ``(lo, hi]`` where coordinate ``i`` meets or leaves a kink."""
        distance = self._watch * self.kinks.offset(y_hi[self.logits])
        crossing = np.flatnonzero((self._watch != 0) & (distance <= 0))
        # A crossing is located below (an arrival, only where nothing crossed, is at the step's end).
        arriving = self._arriving(hi, y_hi, distance) if not len(crossing) else crossing[:0]
        if len(arriving):
            return hi, int(arriving[0]), False
        # A pull within noise of zero is no reason to leave: once the loss has converged every
        # fitness gap is rounding noise, and releasing on it would chatter. Noise is judged against
        # the state's size and against the run's starting speed (in units of the marched variable).
        noise = max(AT_REST * max(1.0, float(np.max(np.abs(y_hi)))), RELEASE_SPEED * self._speed)
        releasing = self._held[self._pull(hi, y_hi) > noise] if len(self._held) else self._held
        if not len(crossing) and not len(releasing):
            return None
        hits = []
        for i in crossing:
            def distance_at(x: float, i: int = int(i)) -> float:
                return float(self._watch[i] * self.kinks.offset(dense(x)[self.logits])[i])
            hits.append((_root(distance_at, lo, hi), i, False))
        for i in releasing:
            def gap(x: float, where: int = int(np.searchsorted(self._held, i))) -> float:
                return float(noise - self._pull(x, dense(x))[where])
            hits.append((_root(gap, lo, hi), i, True))
        return min(hits, key=lambda hit: hit[0]) if hits else None

    def _arriving(self, x: float, y: np.ndarray, distance: np.ndarray) -> np.ndarray:
        """Live coordinates within the stepper's tolerance of their kink and moving onto it.

        An implicit stepper (LSODA's BDF) cannot take a step across such a kink, where the
        velocity jumps (its corrector has no solution there): its steps shrink as it creeps
        up to it. Within ``atol`` of the kink a coordinate is on it, to the accuracy asked.
        """
        near = np.flatnonzero((self._watch != 0) & (distance <= self._near))
        if not len(near):
            return near
        velocity = self.fun(x, y)[self.logits]
        return near[self._watch[near] * velocity[near] < 0]

    def _pull(self, x: float, y: np.ndarray) -> np.ndarray:
        """The velocity of each held coordinate just above its kink (> 0: the flow leaves it)."""
        probe = np.array(y, dtype=float)
        probe[self.logits][self._held] = RELEASE  # a view: this sets the held logits in probe
        return self.fun(x, probe)[self.logits][self._held]


def _root(f: Callable[[float], float], lo: float, hi: float) -> float:
    """Where ``f`` (> 0 at ``lo``, <= 0 at ``hi``) reaches zero, to rounding (``lo`` if it starts there)."""
    if f(lo) <= 0.0:
        return lo
    if f(hi) == 0.0:
        return hi
    return brentq(f, lo, hi, xtol=4 * EPS * max(1.0, abs(hi)), rtol=4 * EPS)
