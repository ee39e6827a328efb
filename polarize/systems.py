"""The systems the integrator runs: a batch of starts as one state, its vector field, and what is measured.

A system holds ``k`` starts of one experiment (``simulate`` runs a batch of one,
``simulate_many`` batches of many): they differ only in their logits ``a0``, and the
model's right-hand sides (``polarize.model``, ``polarize.normalizers``, batched over
leading axes) evaluate every start in one call. Its state is a (k, m) array, one row
per start, flattened for scipy's steppers (``y0``; ``rows`` reads it back). Each
system says how to march it (``Schedule``: in which variable, with which stepper and
tolerances) and how to read the recorded quantities back in the full coordinates.
``build_system`` picks the cheapest exact one for an experiment from the registry
``SYSTEMS`` (first match among those its model names wins), for one start or many:

- ``TiedSystem``: the tied model's ``(U, a)``;
- ``LogisticClosedSystem``: logistic loss on a target direction, flow: the closed
  ``(a, p)`` system (docs/derivations.md section 3), marched in ``w = log(1 + t)``
  (``dy/dw = (dy/dtau) (1 + t) / (1 + e^z)``), which every start of a batch reaches
  together and in which horizons of ``1e15`` cost a few hundred steps;
- ``ReducedValueSystem``: a loss ``phi(X beta)`` whose design has fewer rows
  than ``V`` (``m < d``), flow: the coordinates ``W = X V`` (section 4);
- ``ValueSystem``: the full ``(V, a)``.

scipy measures a step's error by the root mean square over every variable, so a batch
of k starts would let one start's error grow by ``sqrt(k)``: the tolerances are divided
by ``sqrt(k)``, which keeps each start's error within what one start alone is allowed.
The switches at a normalizer's kinks (``polarize.switching``) are located for a batch of
one only: a batch shares its steps, not its events. ``runs_together`` is the rule for
when many starts run as batches at all.
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
from polarize.stepping import ATOL, RTOL, Schedule
from polarize.switching import kinks_of

__all__ = ["SYSTEMS", "DescentSystem", "System", "build_loss", "build_system", "runs_together"]

STIFF_SIZE = 1500
"""Flows in ``t`` with at most this many state variables per start use LSODA, which switches to
a stiff method once the loss has converged (square and KL losses, over long
horizons); larger ones use DOP853, since LSODA's dense Jacobian would cost
``size**2`` memory."""
STAGES = 16
"""Copies of the state a stepper keeps (DOP853: 13 stages, and the dense output's extras)."""


class System(Protocol):
    """A batch of k starts the integrator can run: a flat state (``y0``), a vector field, and measurements."""

    y0: np.ndarray

    def __len__(self) -> int:
        """The number of starts k."""

    def field(self, x: float, y: np.ndarray, sigma: Normalizer | None = None) -> np.ndarray:
        """The velocity of the state (state,) in the marched variable ``x`` (under the normalizer
        ``sigma`` in place of its own: a kinked one's smooth sides, ``Kinks.sides``)."""

    def schedule(self, t: np.ndarray) -> Schedule:
        """How to march to the saved times ``t`` (K,)."""

    def rows(self, y: np.ndarray) -> np.ndarray:
        """The flat state (state,) as one row per start (k, m)."""

    def flat(self, rows: np.ndarray) -> np.ndarray:
        """Rows (k, m) as the flat state (state,): the inverse of ``rows``."""

    def scores(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Logits and scores (..., n) of rows (..., m)."""

    def floats_per_start(self) -> int:
        """Numbers a start takes in a march (its state in each stage, its part of a Jacobian)."""

    def V(self, y: np.ndarray) -> np.ndarray:
        """The value matrix (d, n) (tied model: ``U``) at the state ``y`` of a batch of one."""

    def record(self, Y: np.ndarray, recorder: Recorder) -> None:
        """Measure each column of ``Y`` (state, K), states of a batch of one, in the full coordinates."""


class DescentSystem(System, Protocol):
    """A system gradient descent can also run, step for step: it exposes the loss gradient."""

    def gradient(self, y: np.ndarray) -> np.ndarray:
        """The gradient of the loss with respect to the state's coordinates (state,)."""


def build_loss(e: Experiment):
    """The loss object of a resolved experiment, as its entry of ``polarize.losses.LOSSES`` builds it."""
    return LOSSES[e.loss].build(e)


def _starts(a0: np.ndarray) -> np.ndarray:
    """Starting logits as a batch (k, n): one start (n,) is a batch of one."""
    a0 = np.asarray(a0, dtype=float)
    return a0[None] if a0.ndim == 1 else a0


def _tolerances(k: int) -> dict[str, float]:
    scale = np.sqrt(k)
    return {"rtol": RTOL / scale, "atol": ATOL / scale}


class _MatrixSystem:
    """Rows ``[W.ravel(), a]`` (k, m): a matrix (``V``, ``X V`` or ``U``) and the logits, marched in ``t``.

    The rows are flattened start by start, so a batch's Jacobian is block diagonal (banded).
    """

    kinks_in_logits = True
    """Whether the normalizer's kinks are hyperplanes of the logits (the last n variables of a row)."""

    def __init__(self, W0: np.ndarray, a0: np.ndarray, loss, normalizer: Normalizer):
        self.loss, self.normalizer = loss, normalizer
        self.shape = W0.shape
        a0 = _starts(a0)
        self.m = W0.size + a0.shape[1]
        W = np.broadcast_to(W0.ravel(), (len(a0), W0.size))
        self.y0 = np.concatenate([W, a0], axis=1).ravel()

    def __len__(self) -> int:
        return len(self.y0) // self.m

    def rows(self, y):
        return y.reshape(-1, self.m)

    def _batch(self, y):
        """``rows(y)``, but a batch of one as its one row (m,): the right-hand sides take any leading
        axes, and numpy runs a single state faster without one (sparsemax's threshold by a third)."""
        return y if len(y) == self.m else self.rows(y)

    def flat(self, rows):
        return rows.ravel()

    def split(self, rows):
        """Matrices (..., *shape) and logits (..., n) of rows (..., m)."""
        k = self.shape[0] * self.shape[1]
        return rows[..., :k].reshape(*rows.shape[:-1], *self.shape), rows[..., k:]

    def V(self, y):
        return self.split(y)[0]

    def _gradients(self, W, a, sigma: Normalizer | None = None) -> Gradients:
        """The loss and its gradients at ``(W, a)``, under ``sigma`` (default: the normalizer)."""
        raise NotImplementedError

    def _full_gradients(self, V, a) -> Gradients:
        raise NotImplementedError

    def gradient(self, y, sigma: Normalizer | None = None):
        R = self._batch(y)
        W, a = self.split(R)
        G = self._gradients(W, a, sigma)
        return np.concatenate([G.grad_V.reshape(*R.shape[:-1], -1), G.grad_a], axis=-1).ravel()

    def field(self, _t, y, sigma: Normalizer | None = None):
        return -self.gradient(y, sigma)

    def scores(self, rows):
        a = self.split(rows)[1]
        return a, self.normalizer.forward(a)

    def floats_per_start(self) -> int:
        """Its state in each stage, and its rows of a banded Jacobian."""
        return STAGES * self.m + (3 * self.m * self.m if self.m <= STIFF_SIZE else 0)

    def schedule(self, t):
        k = len(self)
        options: dict[str, Any] = _tolerances(k)
        if k == 1 and self.kinks_in_logits:
            options.update(kinks=kinks_of(self.normalizer), logits=slice(self.shape[0] * self.shape[1], None))
        elif k == 1 and kinks_of(self.normalizer):
            options["stall_note"] = ("; the normalizer's kinks lie in z = U a here, which the flow does not "
                                     "step across yet: method gd can go on past them")
        if self.m > STIFF_SIZE:
            return Schedule(targets=t, **options)
        if k > 1:
            # One start's variables are contiguous: the batch's Jacobian lies within m - 1 diagonals.
            return Schedule(targets=t, stepper=LSODA, options={"lband": self.m - 1, "uband": self.m - 1},
                            **options)
        return Schedule(targets=t, stepper=LSODA, jacobian=self.flow_jacobian, **options)

    def flow_jacobian(self, _t, y, sigma: Normalizer | None = None):
        """Jacobian of the flow ``-gradient`` of a batch of one, by forward differences, all columns at once.

        LSODA would otherwise make one Python call per column; the batched
        gradients make the whole Jacobian cost about as much as a few calls.
        """
        h = np.sqrt(np.finfo(float).eps) * np.maximum(1.0, np.abs(y))
        Y = y + np.diag(h)  # row j is y + h_j e_j
        k = self.shape[0] * self.shape[1]
        G = self._gradients(Y[:, :k].reshape(len(y), *self.shape), Y[:, k:], sigma)
        F = np.concatenate([G.grad_V.reshape(len(y), k), G.grad_a], axis=1)
        return -((F - self.gradient(y, sigma)) / h[:, None]).T

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

    def _gradients(self, W, a, sigma=None):
        return value_gradients(W, a, self.loss, self.normalizer if sigma is None else sigma)

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

    def _gradients(self, W, a, sigma=None):
        sigma = self.normalizer if sigma is None else sigma
        return value_gradients_reduced(W, a, self.loss, self.gram, sigma)

    def _full_gradients(self, V, a):
        return value_gradients(V, a, self.loss, self.normalizer)


class TiedSystem(_MatrixSystem):
    """The tied model ``beta = U sigma(U a)`` in its own coordinates ``(U, a)``."""

    name = "tied"
    kinks_in_logits = False  # they are in z = U a, which moves with U

    @classmethod
    def applies(cls, e: Experiment, loss) -> bool:
        return True

    def _gradients(self, U, a, sigma=None):
        return tied_gradients(U, a, self.loss, self.normalizer if sigma is None else sigma)

    _full_gradients = _gradients

    def scores(self, rows):
        U, a = self.split(rows)
        return a, self.normalizer.forward((U @ a[..., None])[..., 0])


class LogisticClosedSystem:
    """Logistic loss on a direction: rows ``[a, p]`` (k, 2n) of the closed system, marched in ``log(1 + t)``.

    ``V(t) = V0 + beta_* (p(t) - p(0))^T`` exactly, so ``V`` is never integrated:
    its column norms and singular values at a saved time come from ``p`` and
    quantities of ``V0`` computed once, for a whole batch of saved times at once.
    """

    name = "closed"

    def __init__(self, V0, a0, loss: Logistic, normalizer):
        self.V0, self.normalizer = V0, normalizer
        self.b = loss.target
        a0 = _starts(a0)
        self.n = a0.shape[1]
        self.p0 = V0.T @ self.b
        self.column_sq0 = np.sum(V0 * V0, axis=0)
        d, n = V0.shape
        # Gram matrix of the smaller side of V0, for the singular values of V0 + b q^T.
        self.gram0 = V0 @ V0.T if d <= n else V0.T @ V0
        self.y0 = self.flat(np.concatenate([a0, np.broadcast_to(self.p0, a0.shape)], axis=1))

    @classmethod
    def applies(cls, e: Experiment, loss) -> bool:
        return not METHODS[e.method].stepped and isinstance(loss, Logistic)

    def __len__(self) -> int:
        return len(self.y0) // (2 * self.n)

    def flat(self, rows):
        """Rows (k, 2n) to the flat state, variable by variable: the normalizers' sums over the
        n tokens then run as n long vector operations instead of k short ones (five times faster)."""
        return rows.T.ravel()

    def rows(self, y):
        return y.reshape(2 * self.n, -1).T

    def field(self, w, y, sigma=None):
        n = self.n
        # A batch of one as its one row (2n,), as _MatrixSystem._batch does (``flat`` keeps it as it is).
        R = y if len(y) == 2 * n else self.rows(y)
        sigma = self.normalizer if sigma is None else sigma
        da, dp, z, _ = logistic_closed_field(R[..., :n], R[..., n:], sigma)
        # d tau / dw = (1 + t) / (1 + e^z), written without overflow.
        rate = np.exp(w - np.logaddexp(0.0, z))[..., None]
        return self.flat(np.concatenate([da, dp], axis=-1) * rate)

    def schedule(self, t):
        kinks = {"kinks": kinks_of(self.normalizer), "logits": slice(0, self.n)} if len(self) == 1 else {}
        return Schedule(targets=np.log1p(t), **kinks, **_tolerances(len(self)))

    def scores(self, rows):
        a = rows[..., :self.n]
        return a, self.normalizer.forward(a)

    def floats_per_start(self) -> int:
        """Its state in each of DOP853's stages."""
        return STAGES * 2 * self.n

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


def build_system(e: Experiment, loss, normalizer: Normalizer, a0: np.ndarray | None = None) -> System:
    """The cheapest exact system for the resolved experiment ``e``, for one start or a batch.

    ``a0`` (k, n) are the starting logits of a batch; without it, the batch of one ``e.a0``.
    The same choice for every k: ``simulate`` and ``simulate_many`` run the same system.
    """
    V0 = np.asarray(e.V0)
    names = MODELS[e.model].systems
    kind = next(cls for cls in SYSTEMS if cls.name in names and cls.applies(e, loss))
    return kind(V0, np.asarray(e.a0) if a0 is None else a0, loss, normalizer)


def runs_together(e: Experiment) -> bool:
    """Whether many starts of ``e`` run as batches, or each start alone (by ``simulate``).

    A method runs as a batch when it says so (``Method.stacked``), except the flow of a normalizer
    whose kinks can hold a coordinate (l1's sliding mode): a batch locates no switch (a batch shares
    its steps, not its events), so it would chatter on the kink until it fails and splits, which
    cost ~7x a plain loop.
    """
    method = METHODS[e.method]
    return method.stacked and (method.stepped or not getattr(kinks_of(e.sigma), "slides", False))
