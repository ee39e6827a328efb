"""Many starts of one experiment as one stacked state: the vector fields, the flow and descent.

The starts differ only in their logits ``a0``; everything else (``V0``, the
loss, the normalizer) is shared, so the model's batched right-hand sides
(``polarize.model``, ``polarize.normalizers``) evaluate every start in one call.
A stack is a (k, m) array, one row per start, flattened for scipy's steppers.

- ``ClosedStack``: logistic loss on a target direction, flow: the closed
  ``(a, p)`` system of docs/derivations.md section 3, marched in the common clock
  ``w = log(1 + t)`` (``dy/dw = (dy/dtau) (1 + t) / (1 + e^z)``), so that every
  start reaches the horizon at the same value of the independent variable
  (in ``tau`` each start would end at its own ``tau``).
- ``MatrixStack``: any other case, in the full coordinates ``(V, a)`` or
  ``(U, a)``, marched in ``t`` (LSODA with a banded Jacobian: the stack's
  Jacobian is block diagonal) or stepped by gradient descent.

scipy measures a step's error by the root mean square over every variable, so a
stack of k starts would let one start's error grow by ``sqrt(k)``: the
tolerances are divided by ``sqrt(k)``, which keeps each start's error within
what ``simulate`` allows it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import DOP853, LSODA

from polarize import stepping
from polarize.budget import WallClock
from polarize.losses import Logistic, Loss
from polarize.methods import METHODS
from polarize.model import logistic_closed_field, tied_gradients, value_gradients
from polarize.models import MODELS
from polarize.normalizers import Normalizer
from polarize.stepping import ATOL, RTOL, Schedule, Stopped
from polarize.systems import STIFF_SIZE

__all__ = ["ClosedStack", "GroupFailed", "MatrixStack", "descend", "march"]

GROUP_STEPS = 2000
"""Adaptive steps a stack may take before it is split (smooth groups need tens to hundreds)."""


STAGES = 16
"""Copies of the state a stepper keeps (DOP853: 13 stages, and the dense output's extras)."""


class GroupFailed(Exception):
    """The stack could not be marched as one (failed step, overflow, too many steps)."""


def _finite_field(stack, clock: WallClock):
    """``stack.field``, stopping the march at the first value that is not finite or once time is up.

    Time is looked at in every evaluation, not only between steps: one step of a large stack
    with LSODA's banded Jacobian makes many of them.

    scipy's steppers shrink a step by a factor computed from its error: a NaN error makes
    the step size NaN, which no test of "too small" catches, and the step then loops for ever
    inside ``solver.step()`` (an overflow at one start of a stack is enough). So the stack
    is split at once, and the start that overflows is judged by ``simulate`` alone.
    """
    def field(t, y):
        clock.check()
        out = stack.field(t, y)
        if not np.all(np.isfinite(out)):
            raise GroupFailed("the field overflowed")
        return out
    return field


@dataclass(frozen=True, eq=False)
class ClosedStack:
    """Logistic loss on ``beta_*``: rows ``[a, p]`` (k, 2n), marched in ``w = log(1 + t)``."""

    p0: np.ndarray
    normalizer: Normalizer

    @classmethod
    def applies(cls, e, loss) -> bool:
        return ("closed" in MODELS[e.model].systems and not METHODS[e.method].stepped
                and isinstance(loss, Logistic))

    @classmethod
    def build(cls, e, loss, normalizer) -> ClosedStack:
        return cls(np.asarray(e.V0).T @ loss.target, normalizer)

    def start(self, a0: np.ndarray) -> np.ndarray:
        return np.concatenate([a0, np.broadcast_to(self.p0, a0.shape)], axis=1)

    def clock(self, t: np.ndarray) -> np.ndarray:
        return np.log1p(t)

    def pack(self, Y: np.ndarray) -> np.ndarray:
        """Rows (k, 2n) to the flat state, variable by variable: the normalizers' sums over the
        n tokens then run as n long vector operations instead of k short ones (five times faster)."""
        return Y.T.ravel()

    def unpack(self, y: np.ndarray) -> np.ndarray:
        return y.reshape(2 * len(self.p0), -1).T

    def field(self, w: float, y: np.ndarray) -> np.ndarray:
        n = len(self.p0)
        Y = self.unpack(y)
        da, dp, z, _ = logistic_closed_field(Y[:, :n], Y[:, n:], self.normalizer)
        # d tau / dw = (1 + t) / (1 + e^z), written without overflow.
        rate = np.exp(w - np.logaddexp(0.0, z))[:, None]
        return self.pack(np.concatenate([da, dp], axis=1) * rate)

    def stepper(self, size: int):
        return DOP853, {}

    def floats_per_start(self) -> int:
        """Memory a start takes in a march: its state in each of DOP853's stages."""
        return STAGES * 2 * len(self.p0)

    def scores(self, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Logits and scores (..., n) of the rows ``Y`` (..., 2n)."""
        a = Y[..., :len(self.p0)]
        return a, self.normalizer.forward(a)


@dataclass(frozen=True, eq=False)
class MatrixStack:
    """Rows ``[W.ravel(), a]`` (k, d n + n): the value model's ``V`` or the tied model's ``U``."""

    W0: np.ndarray
    loss: Loss
    normalizer: Normalizer
    tied: bool

    @classmethod
    def build(cls, e, loss, normalizer) -> MatrixStack:
        return cls(np.asarray(e.V0), loss, normalizer, MODELS[e.model].tied)

    def start(self, a0: np.ndarray) -> np.ndarray:
        W = np.broadcast_to(self.W0.ravel(), (len(a0), self.W0.size))
        return np.concatenate([W, a0], axis=1)

    def clock(self, t: np.ndarray) -> np.ndarray:
        return t

    def split(self, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = self.W0.size
        return Y[..., :k].reshape(*Y.shape[:-1], *self.W0.shape), Y[..., k:]

    def gradient(self, Y: np.ndarray) -> np.ndarray:
        """The loss gradient of every row of ``Y`` (k, m), same shape."""
        W, a = self.split(Y)
        grads = (tied_gradients if self.tied else value_gradients)(W, a, self.loss, self.normalizer)
        return np.concatenate([grads.grad_V.reshape(len(Y), -1), grads.grad_a], axis=1)

    def pack(self, Y: np.ndarray) -> np.ndarray:
        """Rows (k, m) to the flat state, start by start (so the Jacobian is banded)."""
        return Y.ravel()

    def unpack(self, y: np.ndarray) -> np.ndarray:
        return y.reshape(-1, self.W0.size + self.W0.shape[1])

    def field(self, _t: float, y: np.ndarray) -> np.ndarray:
        return -self.gradient(self.unpack(y)).ravel()

    def floats_per_start(self) -> int:
        """Memory a start takes in a march: its state in each stage, and its rows of a banded Jacobian."""
        m = self.W0.size + self.W0.shape[1]
        return STAGES * m + (3 * m * m if m <= STIFF_SIZE else 0)

    def stepper(self, size: int):
        m = self.W0.size + self.W0.shape[1]
        if m <= STIFF_SIZE:
            # One start's variables are contiguous: the stack's Jacobian lies within m - 1 diagonals.
            return LSODA, {"lband": m - 1, "uband": m - 1}
        return DOP853, {}

    def scores(self, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Logits and scores (..., n) of the rows ``Y`` (..., m)."""
        W, a = self.split(Y)
        if self.tied:
            return a, self.normalizer.forward((W @ a[..., None])[..., 0])
        return a, self.normalizer.forward(a)


def march(stack, Y0: np.ndarray, targets: np.ndarray, clock: WallClock | None = None) -> np.ndarray:
    """March the rows ``Y0`` (k, m) of ``stack`` through the clock values ``targets`` (T,).

    The march of ``polarize.stepping`` (``simulate``'s), on the stack's flat state, with the
    tolerances divided by ``sqrt(k)`` and at most ``GROUP_STEPS`` steps. ``clock`` is the
    wall-clock budget (none when not given), looked at at every evaluation of the field.

    Returns
    -------
    ndarray, shape (k, T, m)
        The rows at each target (the first is ``Y0``).

    Raises
    ------
    GroupFailed
        A failed step, a field or state that overflowed, or more than ``GROUP_STEPS`` steps.
    budget.OutOfTime
        The budget ran out first.
    """
    k, m = Y0.shape
    clock = clock or WallClock()
    stepper, options = stack.stepper(m)
    scale = np.sqrt(k)
    plan = Schedule(targets=targets, stepper=stepper)
    field = _finite_field(stack, clock)
    states = stepping.march(field, stack.pack(Y0), plan, budget=clock, rtol=RTOL / scale, atol=ATOL / scale,
                            max_steps=GROUP_STEPS, stall=None, **options)
    return _gathered((stack.unpack(y) for columns in states for y in columns.T), (k, len(targets), m))


def descend(stack: MatrixStack, Y0: np.ndarray, lr: float, save_at: np.ndarray,
            clock: WallClock | None = None) -> np.ndarray:
    """Gradient descent on every row of ``Y0`` (k, m), saved at the step counts ``save_at`` (T,).

    The descent loop of ``polarize.stepping`` (``simulate``'s) on the stack's rows. Returns an
    array (k, T, m); raises ``GroupFailed`` when a row diverges (``simulate`` then says where,
    for that start alone), ``budget.OutOfTime`` when the budget ``clock`` runs out.
    """
    rows = stepping.descend(stack.gradient, Y0, lr, save_at, budget=clock)
    return _gathered(rows, (len(Y0), len(save_at), Y0.shape[1]))


def _gathered(rows, shape: tuple[int, int, int]) -> np.ndarray:
    """The stacks ``rows`` (each (k, m)) a loop yields, one per saved time, as one array (k, T, m)."""
    out = np.empty(shape)
    try:
        for j, Y in enumerate(rows):
            out[:, j] = Y
    except Stopped as exc:
        raise GroupFailed(str(exc)) from None
    return out
