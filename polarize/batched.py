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

from polarize.budget import WallClock
from polarize.integrate import ATOL, RTOL
from polarize.losses import Logistic, Loss
from polarize.model import tied_gradients, value_gradients
from polarize.normalizers import Normalizer
from polarize.systems import STIFF_SIZE

__all__ = ["ClosedStack", "GroupFailed", "MatrixStack", "OutOfTime", "descend", "march"]

GROUP_STEPS = 2000
"""Adaptive steps a stack may take before it is split (smooth groups need tens to hundreds)."""


STAGES = 16
"""Copies of the state a stepper keeps (DOP853: 13 stages, and the dense output's extras)."""


class GroupFailed(Exception):
    """The stack could not be marched as one (failed step, overflow, too many steps)."""


class OutOfTime(Exception):
    """The wall-clock budget ran out before the stack reached its last target."""


def _finite_field(stack, clock: WallClock):
    """``stack.field``, stopping the march at the first value that is not finite or once time is up.

    scipy's steppers shrink a step by a factor computed from its error: a NaN error makes
    the step size NaN, which no test of "too small" catches, and the step then loops for ever
    inside ``solver.step()`` (an overflow at one start of a stack is enough). So the stack
    is split at once, and the start that overflows is judged by ``simulate`` alone.
    """
    def field(t, y):
        if clock.expired():
            raise OutOfTime(clock.message())
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
        return e.model == "value" and e.method == "flow" and isinstance(loss, Logistic)

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
        a, p = Y[:, :n], Y[:, n:]
        s = self.normalizer.forward(a)
        z = np.sum(p * s, axis=1, keepdims=True)
        # d tau / dw = (1 + t) / (1 + e^z), written without overflow.
        rate = np.exp(w - np.logaddexp(0.0, z))
        return self.pack(np.concatenate([self.normalizer.vjp(a, p), s], axis=1) * rate)

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
        return cls(np.asarray(e.V0), loss, normalizer, e.model == "tied")

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

    ``clock`` is the wall-clock budget (none when not given), looked at at every evaluation
    of the field.

    Returns
    -------
    ndarray, shape (k, T, m)
        The rows at each target (the first is ``Y0``).

    Raises
    ------
    GroupFailed
        A failed step, a field or state that overflowed, or more than ``GROUP_STEPS`` steps.
    OutOfTime
        The budget ran out first.
    """
    k, m = Y0.shape
    stepper, options = stack.stepper(m)
    scale = np.sqrt(k)
    solver = stepper(_finite_field(stack, clock or WallClock()), targets[0], stack.pack(Y0), targets[-1],
                     rtol=RTOL / scale, atol=ATOL / scale, **options)
    out = np.empty((k, len(targets), m))
    out[:, 0] = Y0
    done = 1
    for _ in range(GROUP_STEPS):
        solver.step()
        if solver.status == "failed" or not np.all(np.isfinite(solver.y)):
            raise GroupFailed("failed step or overflow")
        reached = int(np.searchsorted(targets, solver.t, side="right"))
        if reached > done:
            local = solver.dense_output()
            for j in range(done, reached):
                out[:, j] = stack.unpack(local(targets[j]))
            done = reached
        if done == len(targets):
            return out
    raise GroupFailed(f"more than {GROUP_STEPS} steps")


def descend(stack: MatrixStack, Y0: np.ndarray, lr: float, save_at: np.ndarray,
            clock: WallClock | None = None) -> np.ndarray:
    """Gradient descent on every row of ``Y0`` (k, m), saved at the step counts ``save_at`` (T,).

    Returns an array (k, T, m); raises ``GroupFailed`` when a row diverges (``simulate`` then
    says where, for that start alone), ``OutOfTime`` when the budget ``clock`` runs out
    (looked at every 64 steps, as ``simulate`` does).
    """
    clock = clock or WallClock()
    Y = Y0.copy()
    out = np.empty((len(Y0), len(save_at), Y0.shape[1]))
    out[:, 0] = Y
    step = 0
    for j, target in enumerate(save_at[1:], start=1):
        while step < target:
            if step % 64 == 0 and clock.expired():
                raise OutOfTime(clock.message())
            Y = Y - lr * stack.gradient(Y)
            step += 1
        if not np.all(np.isfinite(Y)):
            raise GroupFailed(f"gradient descent diverged before step {step}")
        out[:, j] = Y
    return out
