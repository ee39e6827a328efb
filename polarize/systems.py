"""The systems the integrator runs: a state vector, its vector field, and what is measured from it.

Each system packs the pure right-hand sides of ``polarize.model`` into a flat
state for scipy's steppers and says how to march it (``Schedule``: in which
variable, with which stepper) and how to read the recorded quantities back in
the full coordinates. ``build_system`` picks the cheapest exact one for an
experiment from the registry ``SYSTEMS`` (first match among those its model names wins):

- ``TiedSystem``: the tied model's ``(U, a)``;
- ``LogisticClosedSystem``: logistic loss on a target direction, flow: the
  closed ``(a, p)`` system in the loss-free time ``tau`` (docs/derivations.md section 3),
  with ``log(1 + t)`` carried as one more state variable, so horizons of
  ``1e15`` cost a few hundred steps;
- ``ReducedValueSystem``: a loss ``phi(X beta)`` whose design has fewer rows
  than ``V`` (``m < d``), flow: the coordinates ``W = X V`` (section 4);
- ``ValueSystem``: the full ``(V, a)``.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
from scipy.integrate import LSODA
from scipy.special import expit

from polarize.config import Experiment
from polarize.diagnostics import N_SINGULAR, Recorder, top_singular_values
from polarize.losses import LOSSES, LinearLoss, Logistic
from polarize.methods import METHODS
from polarize.model import (
    Gradients,
    logistic_closed_field,
    tied_gradients,
    value_gradients,
    value_gradients_reduced,
)
from polarize.models import MODELS
from polarize.normalizers import Normalizer
from polarize.stepping import Schedule
from polarize.switching import kinks_of

__all__ = ["SYSTEMS", "DescentSystem", "System", "build_loss", "build_system"]

STIFF_SIZE = 1500
"""Flows in ``t`` with at most this many state variables use LSODA, which switches to
a stiff method once the loss has converged (square and KL losses, over long
horizons); larger ones use DOP853, since LSODA's dense Jacobian would cost
``size**2`` memory."""


class System(Protocol):
    """A system the integrator can run: a flat state (``y0``), a vector field, and measurements."""

    y0: np.ndarray

    def field(self, x: float, y: np.ndarray) -> np.ndarray:
        """The velocity of the state (state,) in the marched variable ``x``."""

    def schedule(self, t: np.ndarray) -> Schedule:
        """How to march to the saved times ``t`` (K,)."""

    def V(self, y: np.ndarray) -> np.ndarray:
        """The value matrix (d, n) (tied model: ``U``) at the state ``y``."""

    def record(self, Y: np.ndarray, recorder: Recorder) -> None:
        """Measure each column of ``Y`` (state, k) in the full coordinates."""


class DescentSystem(System, Protocol):
    """A system gradient descent can also run, step for step: it exposes the loss gradient."""

    def gradient(self, y: np.ndarray) -> np.ndarray:
        """The gradient of the loss with respect to the state's coordinates (state,)."""


def build_loss(e: Experiment):
    """The loss object of a resolved experiment, as its entry of ``polarize.losses.LOSSES`` builds it."""
    return LOSSES[e.loss].build(e)


class _MatrixSystem:
    """State ``[W.ravel(), a]``: a matrix (``V``, ``X V`` or ``U``) and the logits, marched in ``t``."""

    kinks_in_logits = True
    """Whether the normalizer's kinks are hyperplanes of the logits (the last n state variables)."""

    def __init__(self, W0: np.ndarray, a0: np.ndarray, loss, normalizer: Normalizer):
        self.loss, self.normalizer = loss, normalizer
        self.shape = W0.shape
        self.y0 = np.concatenate([W0.ravel(), a0])

    def split(self, y):
        k = self.shape[0] * self.shape[1]
        return y[:k].reshape(self.shape), y[k:]

    def V(self, y):
        return self.split(y)[0]

    def _gradients(self, W, a) -> Gradients:
        raise NotImplementedError

    def _full_gradients(self, V, a) -> Gradients:
        raise NotImplementedError

    def gradient(self, y):
        G = self._gradients(*self.split(y))
        return np.concatenate([G.grad_V.ravel(), G.grad_a])

    def field(self, _t, y):
        return -self.gradient(y)

    def schedule(self, t):
        if self.kinks_in_logits:
            kinks = {"kinks": kinks_of(self.normalizer), "logits": slice(self.shape[0] * self.shape[1], None)}
        else:
            kinks = {"stall_note": "; the normalizer's kinks lie in z = U a here, which the flow does not "
                     "step across yet: method gd can go on past them"} if kinks_of(self.normalizer) else {}
        if self.y0.size <= STIFF_SIZE:
            return Schedule(targets=t, stepper=LSODA, jacobian=self.flow_jacobian, **kinks)
        return Schedule(targets=t, **kinks)

    def flow_jacobian(self, _t, y):
        """Jacobian of the flow ``-gradient`` by forward differences, all columns in one batch.

        LSODA would otherwise make one Python call per column; the batched
        gradients make the whole Jacobian cost about as much as a few calls.
        """
        h = np.sqrt(np.finfo(float).eps) * np.maximum(1.0, np.abs(y))
        Y = y + np.diag(h)  # row j is y + h_j e_j
        k = self.shape[0] * self.shape[1]
        G = self._gradients(Y[:, :k].reshape(len(y), *self.shape), Y[:, k:])
        F = np.concatenate([G.grad_V.reshape(len(y), k), G.grad_a], axis=1)
        return -((F - self.gradient(y)) / h[:, None]).T

    def record(self, Y, recorder: Recorder) -> None:
        for y in Y.T:
            V, a = self.V(y), self.split(y)[1]
            G = self._full_gradients(V, a)
            recorder.add(
                s=G.s, a=a, u=G.u, loss=float(G.loss),
                p=V.T @ self.loss.target if isinstance(self.loss, Logistic) else None,
                grad_norm_V=float(np.linalg.norm(G.grad_V)), grad_norm_a=float(np.linalg.norm(G.grad_a)),
                singular_values=top_singular_values(V), column_norms=np.linalg.norm(V, axis=0),
            )


class ValueSystem(_MatrixSystem):
    """The value model ``beta = V sigma(a)`` in its own coordinates ``(V, a)``."""

    name = "value"

    @classmethod
    def applies(cls, e: Experiment, loss) -> bool:
        return True

    def _gradients(self, W, a):
        return value_gradients(W, a, self.loss, self.normalizer)

    _full_gradients = _gradients


class ReducedValueSystem(ValueSystem):
    """The value model's flow in the coordinates ``W = X V`` of a loss ``phi(X beta)`` with ``m < d``."""

    name = "reduced"

    def __init__(self, V0, a0, loss: LinearLoss, normalizer):
        X = loss.X
        self.V0 = V0
        self.gram = X @ X.T
        # V - V0 = X^T Lambda with X X^T Lambda = W - W0, so V = V0 + pinv(X) (W - W0).
        self.pinv = np.linalg.pinv(X)
        self.W0 = X @ V0
        super().__init__(self.W0, a0, loss, normalizer)

    @classmethod
    def applies(cls, e: Experiment, loss) -> bool:
        return not METHODS[e.method].stepped and isinstance(loss, LinearLoss) and loss.X.shape[0] < e.d

    def V(self, y):
        return self.V0 + self.pinv @ (self.split(y)[0] - self.W0)

    def _gradients(self, W, a):
        return value_gradients_reduced(W, a, self.loss, self.gram, self.normalizer)

    def _full_gradients(self, V, a):
        return value_gradients(V, a, self.loss, self.normalizer)


class TiedSystem(_MatrixSystem):
    """The tied model ``beta = U sigma(U a)`` in its own coordinates ``(U, a)``."""

    name = "tied"
    kinks_in_logits = False  # they are in z = U a, which moves with U

    @classmethod
    def applies(cls, e: Experiment, loss) -> bool:
        return True

    def _gradients(self, U, a):
        return tied_gradients(U, a, self.loss, self.normalizer)

    _full_gradients = _gradients


class LogisticClosedSystem:
    """Logistic loss on a direction: the closed ``(a, p, log(1 + t))`` system in ``tau``.

    ``V(t) = V0 + beta_* (p(t) - p(0))^T`` exactly, so ``V`` is never integrated:
    its column norms and singular values at a saved time come from ``p`` and
    quantities of ``V0`` computed once, for a whole batch of saved times at once.
    """

    name = "closed"

    def __init__(self, V0, a0, loss: Logistic, normalizer):
        self.V0, self.normalizer = V0, normalizer
        self.b = loss.target
        self.n = len(a0)
        self.p0 = V0.T @ self.b
        self.column_sq0 = np.sum(V0 * V0, axis=0)
        d, n = V0.shape
        # Gram matrix of the smaller side of V0, for the singular values of V0 + b q^T.
        self.gram0 = V0 @ V0.T if d <= n else V0.T @ V0
        self.y0 = np.concatenate([a0, self.p0, [0.0]])

    @classmethod
    def applies(cls, e: Experiment, loss) -> bool:
        return not METHODS[e.method].stepped and isinstance(loss, Logistic)

    def field(self, tau, y):
        n = self.n
        da, dp, z, _ = logistic_closed_field(y[:n], y[n:2 * n], self.normalizer)
        # dt/dtau = 1 + e^z, carried as d log(1 + t)/dtau without overflow.
        return np.concatenate([da, dp, [np.exp(np.logaddexp(0.0, z) - y[2 * n])]])

    def schedule(self, t):
        return Schedule(targets=np.log1p(t), clock=self.clock, clock_rate=self.clock_rate,
                        kinks=kinks_of(self.normalizer), logits=slice(0, self.n))

    def clock(self, y):
        """``log(1 + t)``, the last state variable (also on a batch of columns)."""
        return y[-1]

    def clock_rate(self, y):
        """``d log(1 + t) / d tau = (1 + e^z) / (1 + t)``, on a batch of columns."""
        n = self.n
        z = np.sum(y[n:2 * n] * self.normalizer.forward(y[:n].T).T, axis=0)
        return np.exp(np.logaddexp(0.0, z) - y[-1])

    def V(self, y):
        return self.V0 + np.outer(self.b, y[self.n:2 * self.n] - self.p0)

    def record(self, Y, recorder: Recorder) -> None:
        n = self.n
        a, p = Y[:n].T, Y[n:2 * n].T  # (K, n)
        s = self.normalizer.forward(a)
        z = np.sum(p * s, axis=1)
        c = expit(-z)
        recorder.add(
            s=s, a=a, u=c[:, None] * p, p=p, loss=np.logaddexp(0.0, -z),
            # |dL/dV| = |g| |s| with g = -c beta_*, |beta_*| = 1.
            grad_norm_V=c * np.linalg.norm(s, axis=1),
            grad_norm_a=c * np.linalg.norm(self.normalizer.vjp(a, p), axis=1),
            singular_values=self._singular_values(p - self.p0),
            # |v_i|^2 = |v_i(0)|^2 + 2 q_i b.v_i(0) + q_i^2, and b.v_i(0) = p_i(0).
            column_norms=np.sqrt(np.maximum(self.column_sq0 - self.p0**2 + p**2, 0.0)),
            batch=True,
        )

    def _singular_values(self, q):
        """Leading singular values of ``V0 + b q_k^T`` for each row ``q_k`` of ``q`` (K, n): (K, 3)."""
        d, n = self.V0.shape
        side = min(d, n)
        out = np.zeros((len(q), N_SINGULAR))
        chunk = max(1, (1 << 22) // (side * side))  # bound the stack of Gram matrices
        for start in range(0, len(q), chunk):
            gram = self._grams(q[start:start + chunk])
            top = np.linalg.eigvalsh(gram)[:, ::-1][:, :N_SINGULAR]
            out[start:start + len(gram), :top.shape[1]] = np.sqrt(np.maximum(top, 0.0))
        return out

    def _grams(self, qs):
        """Gram matrices (k, side, side) of ``V0 + b q^T`` on V0's smaller side, for rows ``q`` of ``qs``."""
        d, n = self.V0.shape
        if d <= n:
            r = qs @ self.V0.T  # V0 q, (k, d)
            b = self.b
            return (self.gram0 + r[:, :, None] * b[None, None, :] + b[None, :, None] * r[:, None, :]
                    + np.sum(qs * qs, axis=1)[:, None, None] * np.outer(b, b))
        p0 = self.p0
        return (self.gram0 + p0[None, :, None] * qs[:, None, :] + qs[:, :, None] * p0[None, None, :]
                + qs[:, :, None] * qs[:, None, :])


SYSTEMS: tuple[Any, ...] = (TiedSystem, LogisticClosedSystem, ReducedValueSystem, ValueSystem)
"""The registry, in order of preference: the first that the experiment's model names
(``Model.systems``, by ``name``) and whose ``applies(experiment, loss)`` holds runs it."""


def build_system(e: Experiment, loss, normalizer: Normalizer) -> System:
    """The cheapest exact system for the resolved experiment ``e``, at its start ``(V0, a0)``."""
    V0, a0 = np.asarray(e.V0), np.asarray(e.a0)
    names = MODELS[e.model].systems
    kind = next(cls for cls in SYSTEMS if cls.name in names and cls.applies(e, loss))
    return kind(V0, a0, loss, normalizer)
