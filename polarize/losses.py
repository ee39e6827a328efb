"""Losses ``l(beta)`` on the model output ``beta`` (d), with value and gradient.

Every loss here has the method ``value_and_grad(beta) -> (l, grad l(beta))``,
batched over any leading axes of ``beta`` (the value then has those axes).
Those that see ``beta`` only through a linear map ``w = X beta`` (``X`` is m x d)
also expose that *design* ``X`` and ``outer(w) -> (l, grad_w)``: the flow then
depends on ``V`` only through ``X V`` (m x n), which is what lets the integrator
work in those smaller coordinates (docs/derivations.md sections 3 and 4).

``LOSSES`` (a ``polarize.registry.Registry``) names each loss a configuration can ask for, with
its labels, how to build it from an experiment's arrays, and its facts: what it accepts, its target
(``Target``: drawn, normalized, checked), its floor, its naive winner and its words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import entr, expit, softmax

from polarize.registry import Registry

__all__ = [
    "DIRECTION",
    "DISTRIBUTION",
    "LOSSES",
    "Loss",
    "KL",
    "LinearLoss",
    "Logistic",
    "LogisticData",
    "LossKind",
    "Square",
    "Target",
    "conditioned_matrix",
    "entropy",
]


def entropy(p: np.ndarray) -> np.ndarray:
    """Shannon entropy (nats) along the last axis, with ``0 log 0 = 0``.

    Negative entries (possible for the ``sum`` and ``linear`` maps, which leave
    the simplex) are taken in absolute value after normalising to total mass one,
    so the result is always a finite number for a non-zero input.
    """
    p = np.abs(np.asarray(p, dtype=float))
    total = np.sum(p, axis=-1, keepdims=True)
    q = np.divide(p, total, out=np.zeros_like(p), where=total > 0)
    return np.sum(entr(q), axis=-1)  # entr(q) = -q log q, and 0 at q = 0


@dataclass(frozen=True, eq=False)
class LinearLoss:
    """A loss ``l(beta) = phi(X beta)``; subclasses define ``outer``."""

    X: np.ndarray

    def outer(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
        """``phi(w)`` (batch shape) and its gradient in ``w`` (..., m), for ``w = X beta`` (..., m)."""
        raise NotImplementedError

    def value_and_grad(self, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The loss (batch shape) and its gradient ``X^T grad phi`` (..., d) at ``beta`` (..., d)."""
        value, h = self.outer(beta @ self.X.T)
        return value, h @ self.X


@dataclass(frozen=True, eq=False)
class Logistic(LinearLoss):
    """``l = log(1 + exp(-z))`` with the margin ``z = beta_*^T beta``, ``|beta_*| = 1``.

    ``X`` is the 1 x d matrix ``beta_*^T``.
    """

    @classmethod
    def from_target(cls, target: np.ndarray) -> Logistic:
        return cls(np.asarray(target, dtype=float)[None, :])

    @property
    def target(self) -> np.ndarray:
        return self.X[0]

    def outer(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.logaddexp(0.0, -w[..., 0]), -expit(-w)


@dataclass(frozen=True, eq=False)
class LogisticData(LinearLoss):
    """``l = mean_i log(1 + exp(-y_i x_i^T beta))`` on a labelled set, ``y_i = +-1``."""

    y: np.ndarray

    def outer(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        margins = self.y * w
        m = len(self.y)
        return np.mean(np.logaddexp(0.0, -margins), axis=-1), -self.y * expit(-margins) / m


@dataclass(frozen=True, eq=False)
class Square(LinearLoss):
    """``l = 1/2 |X beta - y|^2``; the default ``X = I``, ``y = beta_*``."""

    y: np.ndarray

    def outer(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = w - self.y
        return 0.5 * np.sum(r * r, axis=-1), r


@dataclass(frozen=True, eq=False)
class KL:
    """Cross-entropy ``l = -sum_k p*_k log softmax(beta)_k``; its floor is ``H(p*)``."""

    p_star: np.ndarray

    def value_and_grad(self, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The loss (batch shape) and its gradient ``softmax(beta) - p*`` (shape of ``beta``, (..., d))."""
        # log-sum-exp after subtracting the maximum: no overflow for any finite beta. Written out
        # rather than scipy.special.logsumexp + softmax: one exp serves both value and gradient,
        # and scipy >= 1.15's logsumexp differs in the last bits and costs ~25x more per call,
        # which the flow pays at every evaluation.
        top = beta.max(axis=-1, keepdims=True)
        e = np.exp(beta - top)
        total = e.sum(axis=-1, keepdims=True)
        value = (top + np.log(total))[..., 0] - beta @ self.p_star
        return value, e / total - self.p_star

    @property
    def floor(self) -> float:
        """The infimum of the loss, the entropy ``H(p*)``."""
        return float(entropy(self.p_star))


Loss = LinearLoss | KL
"""What the gradients take: a loss object with ``value_and_grad(beta)`` (value, gradient in ``beta``)."""


@dataclass(frozen=True, kw_only=True)
class Target:
    """What a loss's ``target`` is: how it is drawn from the seed, normalized and checked.

    Attributes
    ----------
    what : str
        Its name in words, plain ASCII for a terminal (``"a direction beta*"``).
    draw : callable
        ``draw(rng, d)``: the target (d,) drawn from a ``numpy.random.RandomState`` (one draw, in
        ``polarize.draws``'s order, whether or not a target was given).
    size : callable
        ``size(v)``: the size it is normalized to 1 in (the length, or the sum).
    admits : callable
        ``admits(v)``: whether ``v`` (d,) can be normalized into one.
    needs : str
        What ``admits`` asks, for the error that names ``target``.
    """

    what: str
    draw: Callable[[np.random.RandomState, int], np.ndarray]
    size: Callable[[np.ndarray], Any]
    admits: Callable[[np.ndarray], bool]
    needs: str


DIRECTION = Target(what="a direction beta*", draw=lambda rng, d: rng.randn(d), size=np.linalg.norm,
                   admits=lambda v: bool(np.any(v)), needs="a non-zero vector (it is normalized to length 1)")
"""A unit vector ``beta_*``, drawn Gaussian."""
DISTRIBUTION = Target(
    what="a distribution p*", draw=lambda rng, d: softmax(10.0 * rng.rand(d)), size=np.sum,
    admits=lambda v: not (np.any(v < 0) or not np.any(v > 0)),
    needs="a probability vector (non-negative, sum > 0)")
"""A probability vector ``p*``, drawn as ``softmax(10 u)`` with ``u`` uniform on [0, 1)."""


@dataclass(frozen=True, kw_only=True)
class LossKind:
    """A loss a configuration names: its labels, how it is built, and the facts the rest of polarize asks.

    Attributes
    ----------
    name : str
        Its key in ``LOSSES`` (``Experiment.loss``).
    label : str
        Its name for people (menus, legends).
    short : str
        A shorter label, for a phone's legends.
    build : callable
        ``build(experiment)``: the loss object of a resolved experiment (its ``target``, ``X``, ``y``).
    target : Target
        What its ``target`` is (``DIRECTION`` or ``DISTRIBUTION``): drawn, normalized, checked.
    data : str or None
        What ``y`` holds on a data set ``X`` (``"targets y (one per row)"``); None: it takes no data set.
    labels : tuple of float or None
        The values ``y`` may take on a data set (logistic: -1 and +1); None: any.
    takes_kappa : bool
        Whether ``kappa`` (a drawn design of that condition number, with drawn ``y``) applies.
    floor : callable or None
        ``floor(target)``: the infimum of the loss for a target (d,), where the theory knows one
        above 0; None otherwise.
    floor_name : str
        The floor's symbol in words and legends (``"H(p*)"``).
    margin : bool
        Whether, on a direction ``beta_*`` (no ``X``), the loss is a decreasing function of the margin
        ``beta_*^T beta``: its fitness is then ``u = c p`` with ``c > 0`` and ``p = V^T beta_*``.
    naive : str
        Which token the naive guess names (the largest fitness at ``a(0) = 0``), in words.
    words : str
        What a run of it does, in one sentence (the Loss page's caption); observed on that page's
        setting (n = d = 8, ``a(0) = 0.5 randn``).
    """

    name: str
    label: str
    short: str
    build: Callable[[Any], Loss]
    target: Target = DIRECTION
    data: str | None = None
    labels: tuple[float, ...] | None = None
    takes_kappa: bool = False
    floor: Callable[[np.ndarray], float] | None = None
    floor_name: str = ""
    margin: bool = False
    naive: str = "with the largest fitness u\u1d62 at a(0) = 0"
    words: str = ""


def _logistic(e: Any) -> Loss:
    if e.X is None:
        return Logistic.from_target(np.asarray(e.target))
    return LogisticData(np.asarray(e.X), np.asarray(e.y))


def _square(e: Any) -> Loss:
    if e.X is None:
        return Square(np.eye(e.d), np.asarray(e.target))
    return Square(np.asarray(e.X), np.asarray(e.y))


LOSSES: Registry[LossKind] = Registry({kind.name: kind for kind in (
    LossKind(name="logistic", label="logistic", short="logistic", build=_logistic,
             data="labels y in {-1, +1}", labels=(-1.0, 1.0), margin=True,
             naive="with the largest p\u1d62(0) = v\u1d62\u00b7\u03b2*",
             words="The logistic loss never reaches its floor, so it keeps pushing and s(t) goes on "
                   "polarizing (1 \u2212 max s keeps falling)."),
    LossKind(name="square", label="square", short="square", build=_square,
             data="targets y (one per row)", takes_kappa=True,
             words="The square loss decays exponentially toward its floor (never reaching it in finite "
                   "time), its gradient vanishing as fast, and the scores settle: how near a vertex "
                   "depends on the setting."),
    LossKind(name="kl", label="cross-entropy (KL)", short="KL", build=lambda e: KL(np.asarray(e.target)),
             target=DISTRIBUTION, floor=lambda target: KL(target).floor, floor_name="H(p*)",
             words="The cross-entropy approaches its floor, where its gradient vanishes, and the scores "
                   "settle: how near a vertex depends on the setting."),
)})
"""Every loss a configuration can name, in the order menus and the Loss page list them."""


def conditioned_matrix(
    m: int, d: int, kappa: float, rng: np.random.RandomState
) -> np.ndarray:
    """A random m x d matrix whose singular values are ``linspace(1, 1/kappa)``.

    Draws a Gaussian matrix, keeps its singular vectors and replaces its
    singular values, as the paper's regression experiment does.

    Parameters
    ----------
    m, d : int
        Shape of the matrix.
    kappa : float
        Condition number, at least 1.
    rng : numpy.random.RandomState
        Source of the Gaussian draw (``rng.randn(m, d)``).

    Returns
    -------
    ndarray, shape (m, d)
    """
    left, _, right = np.linalg.svd(rng.randn(m, d), full_matrices=False)
    values = np.linspace(1.0, 1.0 / kappa, min(m, d))
    return (left * values) @ right
