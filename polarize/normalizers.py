"""Normalizers: maps from logits ``a`` to scores ``s = sigma(a)``.

Each normalizer is a small immutable object with two methods,

- ``forward(a)``: the scores, same shape as ``a``;
- ``vjp(a, g)``: the vector-Jacobian product ``J(a)^T g``,

both acting on the last axis and batched over any leading axes. ``NORMALIZERS``
(a ``polarize.registry.Registry``) maps each public name to its class, and each class
carries its own facts: ``label`` (its name in menus and tables), ``short`` (its name in a
sentence), ``on_simplex``
(whether its scores are a distribution wherever it is defined), ``replicator`` (whether its
VJP has the replicator form) and ``kinks()`` (where it is not smooth, for ``polarize.switching``).
Adding a normalizer is one class registered there: the menus, the comparison page and the command
line list the registry.

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
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np
from scipy.special import expit

from polarize.registry import Registry

__all__ = [
    "DegenerateStateError",
    "Kinks",
    "L1",
    "L2",
    "Linear",
    "Normalizer",
    "NORMALIZERS",
    "OnSupport",
    "ReLU",
    "Sigmoid",
    "Signed",
    "Softmax",
    "Sparsemax",
    "Sum",
    "make_normalizer",
    "takes",
]

OFF_MARGIN = 1e-10
"""Sparsemax: how far below the threshold (relative) a coordinate leaving the support is
put, so that rounding in ``tau`` over later steps cannot bring it back with a
tiny score. No score depends on the value of ``a_i`` below the threshold."""


class DegenerateStateError(ValueError):
    """A normalizer was evaluated where it is undefined (e.g. a zero total)."""


@dataclass(frozen=True, kw_only=True)
class Kinks:
    """Where a normalizer is not smooth (``polarize.switching`` steps across them).

    Attributes
    ----------
    name : str
        The normalizer's name.
    offset : callable
        ``offset(a)`` (n,) -> (n,): each coordinate's signed distance to its kink.
    place : callable
        ``place(a, i)``: the value of ``a_i`` that puts coordinate ``i`` on (or just past) its kink.
    sides : callable
        ``sides(a)`` (n,) -> a smooth map (``forward``, ``vjp``) equal to this one wherever every
        coordinate is on the side of its kink it is on at ``a`` (one on its kink: where it is held,
        switched off or sliding), continued smoothly past the kinks. A stepper fed it steps across a
        kink in full steps, where the map itself, its velocity jumping there, makes it crawl; the
        crossing is then located and the map's own side taken from there (``polarize.switching``).
    slides : bool
        True when both sides of the kink are live (l1): a coordinate can slide on
        it and be released. False when the far side is off (relu, sparsemax).
    """

    name: str
    offset: Callable[[np.ndarray], np.ndarray]
    place: Callable[[np.ndarray, int], float]
    sides: Callable[[np.ndarray], Signed | OnSupport]
    slides: bool = False


class Normalizer(Protocol):
    """The normalizer protocol: a forward map, its vector-Jacobian product, and its facts.

    Attributes
    ----------
    name : str
        Its key in ``NORMALIZERS`` (and in a configuration or a link).
    label : str
        Its name for people (menus, tables).
    short : str
        Its name for people in a sentence or a panel's title ("L2", where ``label`` gives the formula).
    on_simplex : bool
        Whether its scores lie on the simplex (non-negative, unit sum up to ``eps``) wherever any of
        them is non-zero (relu's "dead" state, every score 0, is the one exception).
    replicator : bool
        Whether its VJP has the replicator form ``s * (g - s.g)`` (over a temperature): each logit
        moves as its share times its fitness minus the mean fitness.
    """

    name: ClassVar[str]
    label: ClassVar[str]
    short: ClassVar[str]
    on_simplex: ClassVar[bool]
    replicator: ClassVar[bool]

    def kinks(self) -> Kinks | None:
        """Where the map is not smooth, or None where it is smooth everywhere."""

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


class _Smooth:
    """A normalizer without kinks."""

    def kinks(self) -> Kinks | None:
        return None


def _at_zero(a: np.ndarray) -> np.ndarray:
    """The kink of relu and l1: each coordinate's distance to ``a_i = 0`` is ``a_i`` itself."""
    return a


def _put_at_zero(a: np.ndarray, i: int) -> float:
    return 0.0


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
class Softmax(_Smooth):
    """``s = exp(a / T) / sum exp(a / T)`` with temperature ``T > 0``."""

    temperature: float = 1.0
    name: ClassVar[str] = "softmax"
    label: ClassVar[str] = "softmax"
    short: ClassVar[str] = "softmax"
    on_simplex: ClassVar[bool] = True
    replicator: ClassVar[bool] = True

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
class Sigmoid(_Smooth):
    """``s_i = 1 / (1 + exp(-a_i))``, coordinate-wise; not normalized."""

    name: ClassVar[str] = "sigmoid"
    label: ClassVar[str] = "sigmoid"
    short: ClassVar[str] = "sigmoid"
    on_simplex: ClassVar[bool] = False
    replicator: ClassVar[bool] = False

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
    label: ClassVar[str] = "ReLU / sum"
    short: ClassVar[str] = "ReLU"
    on_simplex: ClassVar[bool] = True
    replicator: ClassVar[bool] = False

    def kinks(self) -> Kinks:
        """``a_i = 0``: a coordinate that reaches it is switched off (its far side is dead)."""
        return Kinks(name=self.name, offset=_at_zero, place=_put_at_zero,
                     sides=lambda a: Signed(signs=(np.asarray(a) > 0).astype(float), eps=self.eps,
                                            name=self.name, dead=True))

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
    label: ClassVar[str] = "L1: |a| / sum |a|"
    short: ClassVar[str] = "L1"
    on_simplex: ClassVar[bool] = True
    replicator: ClassVar[bool] = False

    def kinks(self) -> Kinks:
        """``a_i = 0``, live on both sides: a coordinate can slide on it (Filippov) and be released."""
        return Kinks(name=self.name, offset=_at_zero, place=_put_at_zero, slides=True,
                     sides=lambda a: Signed(signs=np.sign(np.asarray(a, dtype=float)), eps=self.eps,
                                            name=self.name))

    def forward(self, a: np.ndarray) -> np.ndarray:
        m = np.abs(np.asarray(a, dtype=float))
        return m / _safe_total(np.sum(m, axis=-1, keepdims=True) + self.eps, self.name, "sum |a|")

    def vjp(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        a = np.asarray(a, dtype=float)
        total = _safe_total(np.sum(np.abs(a), axis=-1, keepdims=True) + self.eps, self.name, "sum |a|")
        s = np.abs(a) / total
        return np.sign(a) * _centred(s, g) / total


@dataclass(frozen=True, kw_only=True)
class Sum(_Smooth):
    """``s = a / (sum a + eps)``; may leave the simplex, undefined when ``sum a + eps = 0``."""

    eps: float = 0.0
    name: ClassVar[str] = "sum"
    label: ClassVar[str] = "sum: a / sum a"
    short: ClassVar[str] = "sum"
    on_simplex: ClassVar[bool] = False
    replicator: ClassVar[bool] = False

    def forward(self, a: np.ndarray) -> np.ndarray:
        a = np.asarray(a, dtype=float)
        return a / _safe_total(np.sum(a, axis=-1, keepdims=True) + self.eps, self.name, "sum a")

    def vjp(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        a = np.asarray(a, dtype=float)
        total = _safe_total(np.sum(a, axis=-1, keepdims=True) + self.eps, self.name, "sum a")
        return _centred(a / total, g) / total


@dataclass(frozen=True, kw_only=True)
class L2(_Smooth):
    """``s = a^2 / (sum a^2 + eps)``; undefined (an error) when every logit is zero."""

    eps: float = 0.0
    name: ClassVar[str] = "l2"
    label: ClassVar[str] = "L2: a\u00b2 / sum a\u00b2"
    short: ClassVar[str] = "L2"
    on_simplex: ClassVar[bool] = True
    replicator: ClassVar[bool] = False

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
class Linear(_Smooth):
    """The identity map ``s = a``: no normalization at all."""

    name: ClassVar[str] = "linear"
    label: ClassVar[str] = "linear (identity)"
    short: ClassVar[str] = "linear"
    on_simplex: ClassVar[bool] = False
    replicator: ClassVar[bool] = False

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
    label: ClassVar[str] = "sparsemax"
    short: ClassVar[str] = "sparsemax"
    on_simplex: ClassVar[bool] = True
    replicator: ClassVar[bool] = False

    def kinks(self) -> Kinks:
        """``a_i = tau(a)``, the edge of the support: a coordinate that reaches it is switched off."""
        return Kinks(name=self.name, offset=lambda a: a - self.threshold(a), place=self._place_off,
                     sides=lambda a: OnSupport(support=(a - self.threshold(a) > 0).astype(float)))

    def _place_off(self, a: np.ndarray, i: int) -> float:
        """Just below the threshold of the other coordinates: coordinate ``i`` leaves the support."""
        rest = a.copy()
        rest[i] = np.min(a) - 1.0  # certainly outside the support: max(a) - 1 <= tau
        tau = float(self.threshold(rest)[0])
        return tau - OFF_MARGIN * max(1.0, abs(tau))

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


@dataclass(frozen=True, kw_only=True, eq=False)
class Signed:
    """``s = c a / (sum c a + eps)`` for fixed weights ``c`` (n,): relu's map on one side of its kinks
    (``c_i = 1`` on, 0 off) or l1's (``c = sign a``, 0 on the kink), continued past them.

    ``dead``: a total that is not positive gives zero scores (relu's dead state), instead of an error.
    """

    signs: np.ndarray
    eps: float = 0.0
    name: str = ""
    dead: bool = False

    def _parts(self, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = self.signs * np.asarray(a, dtype=float)
        total = np.sum(r, axis=-1, keepdims=True) + self.eps
        if self.dead:
            return r, np.where(total > 0, total, 1.0)
        return r, _safe_total(total, self.name, "sum |a|")

    def forward(self, a: np.ndarray) -> np.ndarray:
        r, total = self._parts(a)
        return r / total

    def vjp(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        r, total = self._parts(a)
        return self.signs * _centred(r / total, g) / total


@dataclass(frozen=True, kw_only=True, eq=False)
class OnSupport:
    """Sparsemax on a fixed support ``m`` (n,) of 0s and 1s: ``s = m (a - tau)``, ``tau = (m.a - 1) / |m|_1``,
    continued past the edge of the support."""

    support: np.ndarray

    def forward(self, a: np.ndarray) -> np.ndarray:
        a = np.asarray(a, dtype=float)
        m = self.support
        tau = (np.sum(m * a, axis=-1, keepdims=True) - 1.0) / np.sum(m)
        return m * (a - tau)

    def vjp(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        m, g = self.support, np.asarray(g, dtype=float)
        return m * (g - np.sum(m * g, axis=-1, keepdims=True) / np.sum(m))


NORMALIZERS: Registry[type] = Registry({
    cls.name: cls for cls in (Softmax, Sigmoid, ReLU, L1, Sum, L2, Linear, Sparsemax)
})
"""Every normalizer, by name, in the order menus and the comparison list them."""


def takes(name: str, option: str) -> bool:
    """Whether the normalizer registered as ``name`` has the setting ``option`` (``temperature``, ``eps``)."""
    return any(f.name == option for f in dataclasses.fields(NORMALIZERS[name]))


def make_normalizer(name: str, *, temperature: float = 1.0, eps: float = 0.0) -> Normalizer:
    """Build the normalizer registered as ``name``.

    ``temperature`` applies to a normalizer that has one (softmax); ``eps``, added to the
    normalizing sum, to those that have one (relu, l1, l2, sum); the others ignore them.

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
    options = {"temperature": temperature, "eps": eps}
    return cls(**{key: value for key, value in options.items() if takes(name, key)})
