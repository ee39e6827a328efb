"""Normalizers: maps from logits ``a`` to scores ``s = sigma(a)``.

Each normalizer is a small immutable object with two methods,

- ``forward(a)``: the scores, same shape as ``a``;
- ``vjp(a, g)``: the vector-Jacobian product ``J(a)^T g``,

both acting on the last axis and batched over any leading axes. ``NORMALIZERS``
maps each public name to its class.

Only softmax moves a logit in proportion to its own score: its VJP is
``s * (g - s.g)``, "fitness minus mean fitness" weighted by the share (the
replicator form, docs/derivations.md section 5). Sigmoid has a weighting ``s (1 - s)`` but
no centring; linear has neither. The normalized maps (relu, l1, l2, sum,
sparsemax) keep a centring but not the weighting: relu and sparsemax switch
coordinates off, sum can leave the simplex, l2 polarizes smoothly (section 2).
relu, l1 and sparsemax have kinks, which ``polarize.switching`` steps across.

The four maps that divide by a sum (relu, l1, l2, sum) take an ``eps`` added to
that sum, as the official notebook adds 1e-10. Their VJP uses the same ``eps``,
so it stays the exact derivative of the forward map (whose scores then sum to
slightly less than one).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np
from scipy.special import expit

__all__ = [
    "DegenerateStateError",
    "L1",
    "L2",
    "Linear",
    "Normalizer",
    "NORMALIZERS",
    "ReLU",
    "Sigmoid",
    "Softmax",
    "Sparsemax",
    "Sum",
    "make_normalizer",
]


class DegenerateStateError(ValueError):
    """A normalizer was evaluated where it is undefined (e.g. a zero total)."""


class Normalizer(Protocol):
    """The normalizer protocol: a forward map and its vector-Jacobian product."""

    name: ClassVar[str]
    on_simplex: ClassVar[bool]

    def forward(self, a: np.ndarray) -> np.ndarray:
        """The scores ``sigma(a)``.

        Parameters
        ----------
        a : ndarray, shape (..., n)
            Logits; leading axes are a batch.

        Returns
        -------
        ndarray, shape (..., n)

        Raises
        ------
        DegenerateStateError
            Where the map is undefined (e.g. ``l1`` with every logit zero).
        """

    def vjp(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        """The vector-Jacobian product ``J(a)^T g``.

        Parameters
        ----------
        a, g : ndarray, shape (..., n)

        Returns
        -------
        ndarray, shape (..., n)
        """


def _centred(s: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``g - s.g`` along the last axis: the mean-centring shared by normalized maps."""
    return g - (s * g).sum(axis=-1, keepdims=True)


def _safe_total(total: np.ndarray, name: str, what: str) -> np.ndarray:
    if np.any(total == 0):
        raise DegenerateStateError(
            f"normalizer {name!r} is undefined here: {what} is zero; start from logits where it is not"
        )
    if not np.all(np.isfinite(total)):
        raise DegenerateStateError(f"normalizer {name!r}: {what} overflowed (the logits diverge)")
    return total


@dataclass(frozen=True, kw_only=True)
class Softmax:
    """``s = exp(a / T) / sum exp(a / T)`` with temperature ``T > 0``."""

    temperature: float = 1.0
    name: ClassVar[str] = "softmax"
    on_simplex: ClassVar[bool] = True

    def forward(self, a: np.ndarray) -> np.ndarray:
        # scipy.special.softmax's own steps (the maximum subtracted first, so |a| = 1e4 or 1e300
        # cannot overflow), without its array-API dispatch: a third of a small run's time.
        x = np.asarray(a, dtype=float) / self.temperature
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def vjp(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        s = self.forward(a)
        return s * _centred(s, g) / self.temperature


@dataclass(frozen=True, kw_only=True)
class Sigmoid:
    """``s_i = 1 / (1 + exp(-a_i))``, coordinate-wise; not normalized."""

    name: ClassVar[str] = "sigmoid"
    on_simplex: ClassVar[bool] = False

    def forward(self, a: np.ndarray) -> np.ndarray:
        return expit(np.asarray(a, dtype=float))

    def vjp(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        s = self.forward(a)
        return s * (1.0 - s) * g


@dataclass(frozen=True, kw_only=True)
class ReLU:
    """``s = relu(a) / (sum relu(a) + eps)``.

    When every logit is ``<= 0`` nothing survives the ReLU: the scores are then
    defined as all zeros, with a zero VJP. That "dead" state is a fixed point of
    any gradient flow, which is what the map's derivative says there.
    """

    eps: float = 0.0
    name: ClassVar[str] = "relu"
    on_simplex: ClassVar[bool] = True

    def _parts(self, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = np.maximum(np.asarray(a, dtype=float), 0.0)
        total = np.sum(r, axis=-1, keepdims=True) + self.eps
        return r, np.where(total > 0, total, 1.0)

    def forward(self, a: np.ndarray) -> np.ndarray:
        r, total = self._parts(a)
        return r / total

    def vjp(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        r, total = self._parts(a)
        s = r / total
        return (r > 0) * _centred(s, g) / total


@dataclass(frozen=True, kw_only=True)
class L1:
    """``s = |a| / (sum |a| + eps)``; undefined (an error) when every logit is zero and ``eps = 0``."""

    eps: float = 0.0
    name: ClassVar[str] = "l1"
    on_simplex: ClassVar[bool] = True

    def forward(self, a: np.ndarray) -> np.ndarray:
        m = np.abs(np.asarray(a, dtype=float))
        return m / _safe_total(np.sum(m, axis=-1, keepdims=True) + self.eps, self.name, "sum |a|")

    def vjp(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        a = np.asarray(a, dtype=float)
        total = _safe_total(np.sum(np.abs(a), axis=-1, keepdims=True) + self.eps, self.name, "sum |a|")
        s = np.abs(a) / total
        return np.sign(a) * _centred(s, g) / total


@dataclass(frozen=True, kw_only=True)
class Sum:
    """``s = a / (sum a + eps)``; may leave the simplex, undefined when ``sum a + eps = 0``."""

    eps: float = 0.0
    name: ClassVar[str] = "sum"
    on_simplex: ClassVar[bool] = False

    def forward(self, a: np.ndarray) -> np.ndarray:
        a = np.asarray(a, dtype=float)
        return a / _safe_total(np.sum(a, axis=-1, keepdims=True) + self.eps, self.name, "sum a")

    def vjp(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        a = np.asarray(a, dtype=float)
        total = _safe_total(np.sum(a, axis=-1, keepdims=True) + self.eps, self.name, "sum a")
        return _centred(a / total, g) / total


@dataclass(frozen=True, kw_only=True)
class L2:
    """``s = a^2 / (sum a^2 + eps)``; undefined (an error) when every logit is zero."""

    eps: float = 0.0
    name: ClassVar[str] = "l2"
    on_simplex: ClassVar[bool] = True

    def _scaled(self, a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``b = a / max|a|``, that scale, and ``(sum a^2 + eps) / max|a|^2``."""
        # Divide by max |a| before squaring so that |a| ~ 1e200 cannot overflow.
        a = np.asarray(a, dtype=float)
        scale = _safe_total(np.max(np.abs(a), axis=-1, keepdims=True), self.name, "sum a^2")
        b = a / scale
        total = np.sum(b * b, axis=-1, keepdims=True)
        if self.eps:
            with np.errstate(over="ignore"):  # eps / scale^2 is inf only where b^2 / total is 0 anyway
                total = total + self.eps / scale / scale
        return b, scale, total

    def forward(self, a: np.ndarray) -> np.ndarray:
        b, _, total = self._scaled(a)
        return b * b / total

    def vjp(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        b, scale, total = self._scaled(a)
        q = b * b
        # d s / d a = (2 a / (sum a^2 + eps)) (e - s); with a = scale * b that is 2 b / (scale * total).
        return (2.0 * b / (scale * total)) * _centred(q / total, g)


@dataclass(frozen=True, kw_only=True)
class Linear:
    """The identity map ``s = a``: no normalization at all."""

    name: ClassVar[str] = "linear"
    on_simplex: ClassVar[bool] = False

    def forward(self, a: np.ndarray) -> np.ndarray:
        return np.array(a, dtype=float)

    def vjp(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        return np.array(g, dtype=float)


@dataclass(frozen=True, kw_only=True)
class Sparsemax:
    """Euclidean projection of ``a`` onto the simplex (Martins & Astudillo, 2016).

    Its Jacobian is ``diag(m) - m m^T / |m|_1`` with ``m`` the support indicator:
    mean-centring over the support, without softmax's weighting by the share.
    """

    name: ClassVar[str] = "sparsemax"
    on_simplex: ClassVar[bool] = True

    def threshold(self, a: np.ndarray) -> np.ndarray:
        """The threshold ``tau`` with ``s = max(a - tau, 0)``, shape (..., 1) for ``a`` (..., n)."""
        a = np.asarray(a, dtype=float)
        z = -np.sort(-a, axis=-1)
        k = np.arange(1, a.shape[-1] + 1)
        cumulative = np.cumsum(z, axis=-1)
        support = 1.0 + k * z > cumulative
        # At least 1: only a non-finite row has an empty support, and its tau is then NaN, not a 0/0 warning.
        size = np.maximum(np.sum(support, axis=-1, keepdims=True), 1)
        tau = (np.take_along_axis(cumulative, size - 1, axis=-1) - 1.0) / size
        return tau

    def forward(self, a: np.ndarray) -> np.ndarray:
        a = np.asarray(a, dtype=float)
        return np.maximum(a - self.threshold(a), 0.0)

    def vjp(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        a = np.asarray(a, dtype=float)
        m = (a - self.threshold(a) > 0).astype(float)
        g = np.asarray(g, dtype=float)
        mean = np.sum(m * g, axis=-1, keepdims=True) / np.sum(m, axis=-1, keepdims=True)
        return m * (g - mean)


NORMALIZERS: dict[str, type] = {
    cls.name: cls for cls in (Softmax, Sigmoid, ReLU, L1, Sum, L2, Linear, Sparsemax)
}


def make_normalizer(name: str, *, temperature: float = 1.0, eps: float = 0.0) -> Normalizer:
    """Build the normalizer registered as ``name``.

    ``temperature`` applies to softmax only; ``eps``, added to the normalizing
    sum, to relu, l1, l2 and sum only (the others have no such sum and ignore it).

    Raises
    ------
    ValueError
        For a name not in ``NORMALIZERS``.
    """
    try:
        cls = NORMALIZERS[name]
    except KeyError:
        raise ValueError(
            f"normalizer: must be one of {sorted(NORMALIZERS)}, got {name!r}"
        ) from None
    if cls is Softmax:
        return cls(temperature=temperature)
    takes_eps = any(f.name == "eps" for f in dataclasses.fields(cls))  # relu, l1, l2, sum
    return cls(eps=eps) if takes_eps else cls()
