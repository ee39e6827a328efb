"""The experiment: one frozen, validated, hashable description of a run.

``Experiment`` is checked once, on the way in; every error is a ``ConfigError``
naming the field and what it accepts. It round-trips through JSON
(``to_dict``/``from_dict``) and through a flat mapping of strings
(``to_flat``/``from_flat``), which is what the app keeps in its URL.

Random draws use numpy's legacy ``RandomState(seed)``, always in the order
``V0`` (``randn(d, n)``), ``a0`` (``randn(n)``), ``target``, then for the square
loss ``X`` and ``y``. Every draw is made whatever the initialization mode (a zero
start still consumes its ``randn(n)``, as the official code's ``0 * randn``
does), so changing one mode never changes the others' values. ``resolved()``
returns the same experiment with every drawn array written in explicitly: that
object alone reproduces the run.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import softmax

from polarize.losses import conditioned_matrix
from polarize.normalizers import NORMALIZERS

__all__ = ["ConfigError", "Experiment", "FrozenArray", "limits"]

MODELS = ("value", "tied")
LOSSES = ("logistic", "square", "kl")
METHODS = ("flow", "gd")
A_INITS = ("zeros", "gaussian", "shifted", "vertex")
V_INITS = ("gaussian", "zeros", "identity")

# Caps sized for a hosted demo; each can be raised through its environment variable.
_LIMIT_DEFAULTS = {
    "max_n": ("POLARIZE_MAX_N", 4096),
    "max_d": ("POLARIZE_MAX_D", 4096),
    "max_size": ("POLARIZE_MAX_SIZE", 1 << 20),
    "max_horizon": ("POLARIZE_MAX_HORIZON", 1e15),
    "max_steps": ("POLARIZE_MAX_STEPS", 2_000_000),
    "max_samples": ("POLARIZE_MAX_SAMPLES", 2000),
}


class ConfigError(ValueError):
    """An invalid experiment field; ``field`` names it, the message says why."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


def limits() -> dict[str, float]:
    """The caps in force now (read from the environment at each call)."""
    out = {}
    for key, (var, default) in _LIMIT_DEFAULTS.items():
        raw = os.environ.get(var)
        try:
            out[key] = type(default)(float(raw)) if raw else default
        except ValueError:
            raise ConfigError(var, f"environment variable must be a number, got {raw!r}") from None
    return out


class FrozenArray:
    """A read-only float array that compares and hashes by value.

    Holds the explicit arrays of an ``Experiment`` (``a0``, ``V0``, ...), so the
    experiment stays hashable without turning a 4096 x 128 matrix into nested
    tuples. ``np.asarray(x)`` gives the (read-only) array without a copy.
    """

    __slots__ = ("_array", "_hash")

    def __init__(self, array: Any):
        arr = np.array(array, dtype=float)
        arr.setflags(write=False)
        self._array = arr
        self._hash = hash((arr.shape, arr.tobytes()))

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        if dtype is not None and np.dtype(dtype) != self._array.dtype:
            return self._array.astype(dtype)
        return self._array.copy() if copy else self._array

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FrozenArray):
            return NotImplemented
        return self._hash == other._hash and np.array_equal(self._array, other._array)

    def __hash__(self) -> int:
        return self._hash

    def __len__(self) -> int:
        return len(self._array)

    def __iter__(self):
        return iter(self._array)

    def __getitem__(self, index):
        return self._array[index]

    @property
    def shape(self) -> tuple[int, ...]:
        return self._array.shape

    def tolist(self) -> list:
        return self._array.tolist()

    def __repr__(self) -> str:
        return f"FrozenArray(shape={self._array.shape})"


def _vector(name: str, value: Any, length: int | None = None) -> FrozenArray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(name, "must be a list of numbers") from None
    if arr.ndim != 1:
        raise ConfigError(name, f"must be a flat list of numbers, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ConfigError(name, f"must have {length} entries, got {arr.shape[0]}")
    if not np.all(np.isfinite(arr)):
        raise ConfigError(name, "must hold finite numbers only (no NaN or infinity)")
    return FrozenArray(arr)


def _matrix(name: str, value: Any, shape: tuple[int | None, int]) -> FrozenArray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(name, "must be a list of equal-length rows of numbers") from None
    rows, cols = shape
    if arr.ndim != 2 or (rows is not None and arr.shape[0] != rows) or arr.shape[1] != cols:
        want = f"{rows if rows is not None else 'm'} rows of {cols}"
        raise ConfigError(name, f"must be {want} numbers, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ConfigError(name, "must hold finite numbers only (no NaN or infinity)")
    return FrozenArray(arr)


def _integer(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ConfigError(name, f"must be an integer in [{low}, {high}], got {value!r}")
    if not low <= value <= high:
        raise ConfigError(name, f"must be an integer in [{low}, {high}], got {value}")
    return int(value)


def _real(name: str, value: Any, low: float, high: float, *, open_low: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ConfigError(name, f"must be a number in {_interval(low, high, open_low)}, got {value!r}")
    value = float(value)
    too_low = value <= low if open_low else value < low
    if not math.isfinite(value) or too_low or value > high:
        raise ConfigError(name, f"must be a number in {_interval(low, high, open_low)}, got {value!r}")
    return value


def _interval(low: float, high: float, open_low: bool) -> str:
    return f"{'(' if open_low else '['}{low:g}, {high:g}]"


def _choice(name: str, value: Any, options: tuple[str, ...]) -> str:
    if value not in options:
        raise ConfigError(name, f"must be one of {', '.join(options)}; got {value!r}")
    return value


@dataclass(frozen=True, kw_only=True)
class Experiment:
    """A complete, validated description of one run.

    Parameters
    ----------
    model : {"value", "tied"}
        ``beta = V sigma(a)``, or the tied ``beta = U sigma(U a)`` (needs ``d == n``).
    n : int
        Number of tokens (logits).
    d : int
        Output dimension (rows of ``V``; classes for ``kl``).
    loss : {"logistic", "square", "kl"}
        Logistic on the margin ``beta_*^T beta`` (or on a labelled set ``X, y``);
        square ``1/2 |X beta - y|^2`` (default ``X = I``, ``y = beta_*``);
        cross-entropy ``-sum p* log softmax(beta)``.
    normalizer : str
        A key of ``polarize.NORMALIZERS``.
    temperature : float
        Softmax temperature (softmax only).
    method : {"flow", "gd"}
        Exact gradient flow, or gradient descent with step ``lr``.
    lr : float
        Learning rate of ``gd``. Both methods also save their first positive
        time at ``lr`` (one step), so that flow and descent share time grids.
    horizon : float
        Final time; ``gd`` takes ``round(horizon / lr)`` steps (and so ends at
        that many steps of ``lr`` when ``horizon / lr`` is not whole).
    samples : int
        Number of saved times, log-spaced between ``lr`` and ``horizon``, plus ``t = 0``.
    seed : int
        Seed of the ``RandomState`` that draws every random array.
    a_init : {"zeros", "gaussian", "shifted", "vertex"}
        Logits ``0``, ``a_scale * randn``, ``a_shift + a_scale * randn``, or
        ``a_scale * randn + a_shift * e_{a_vertex}`` (near a vertex).
    a_scale, a_shift : float
    a_vertex : int
    V_init : {"gaussian", "zeros", "identity"}
        ``V_scale * randn``, zeros, or ``V_scale * I`` (``eye(d, n)``).
    V_scale : float
    kappa : float or None
        Square loss only: draw ``X`` (``m x d``) with condition number ``kappa`` and ``y = randn(m)``.
    m : int or None
        Rows of the drawn ``X`` (default ``d``).
    a0 : array of n floats, optional
        Explicit arrays (lists or numpy arrays) override the drawn ones; they are
        stored as read-only ``FrozenArray`` so the experiment stays hashable.
    V0 : array of d rows of n floats, optional
    target : array of d floats, optional
        ``beta_*`` (normalized to unit length) for logistic and square; the
        distribution ``p*`` (normalized to sum one) for kl.
    X : array of m rows of d floats, optional
        Explicit design: square loss, or logistic on the labelled set ``(X, y)``.
    y : array of m floats, optional
        Regression targets (square) or labels in {-1, +1} (logistic).
    """

    model: str = "value"
    n: int = 8
    d: int = 8
    loss: str = "logistic"
    normalizer: str = "softmax"
    temperature: float = 1.0
    method: str = "flow"
    lr: float = 0.1
    horizon: float = 1e5
    samples: int = 200
    seed: int = 0
    a_init: str = "zeros"
    a_scale: float = 0.1
    a_shift: float = 1.0
    a_vertex: int = 0
    V_init: str = "gaussian"
    V_scale: float = 0.1
    kappa: float | None = None
    m: int | None = None
    a0: FrozenArray | None = field(default=None, repr=False)
    V0: FrozenArray | None = field(default=None, repr=False)
    target: FrozenArray | None = field(default=None, repr=False)
    X: FrozenArray | None = field(default=None, repr=False)
    y: FrozenArray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        lim = limits()
        put = object.__setattr__
        put(self, "model", _choice("model", self.model, MODELS))
        put(self, "n", _integer("n", self.n, 2, lim["max_n"]))
        put(self, "d", _integer("d", self.d, 1, lim["max_d"]))
        n, d = self.n, self.d
        if self.model == "tied" and d != n:
            raise ConfigError("d", f"must equal n for the tied model (U is n x n), got d={d}, n={n}")
        size = d * n
        if size > lim["max_size"]:
            raise ConfigError(
                "d", f"n * d = {size} exceeds the cap of {lim['max_size']} (POLARIZE_MAX_SIZE)"
            )
        put(self, "loss", _choice("loss", self.loss, LOSSES))
        put(self, "normalizer", _choice("normalizer", self.normalizer, tuple(NORMALIZERS)))
        put(self, "temperature", _real("temperature", self.temperature, 0.0, 1e3, open_low=True))
        if self.normalizer != "softmax" and self.temperature != 1.0:
            raise ConfigError("temperature", "applies to the softmax normalizer only; leave it at 1")
        put(self, "method", _choice("method", self.method, METHODS))
        put(self, "lr", _real("lr", self.lr, 0.0, 1e3, open_low=True))
        put(self, "horizon", _real("horizon", self.horizon, 0.0, lim["max_horizon"], open_low=True))
        if self.method == "gd":
            steps = round(self.horizon / self.lr)
            if steps < 1:
                raise ConfigError("horizon", f"must be at least one step (lr = {self.lr:g}) for gd")
            if steps > lim["max_steps"]:
                raise ConfigError(
                    "horizon",
                    f"horizon / lr = {steps:.3g} gradient-descent steps exceeds the cap of "
                    f"{lim['max_steps']:.3g} (POLARIZE_MAX_STEPS); use method flow for long horizons",
                )
        put(self, "samples", _integer("samples", self.samples, 2, lim["max_samples"]))
        put(self, "seed", _integer("seed", self.seed, 0, 2**32 - 1))
        put(self, "a_init", _choice("a_init", self.a_init, A_INITS))
        put(self, "a_scale", _real("a_scale", self.a_scale, 0.0, 1e3))
        put(self, "a_shift", _real("a_shift", self.a_shift, -1e3, 1e3))
        put(self, "a_vertex", _integer("a_vertex", self.a_vertex, 0, n - 1))
        put(self, "V_init", _choice("V_init", self.V_init, V_INITS))
        put(self, "V_scale", _real("V_scale", self.V_scale, 0.0, 1e3))
        self._check_arrays(lim)

    def _check_arrays(self, lim: dict[str, float]) -> None:
        put = object.__setattr__
        n, d = self.n, self.d
        if self.kappa is not None:
            if self.loss != "square":
                raise ConfigError("kappa", "applies to the square loss only")
            put(self, "kappa", _real("kappa", self.kappa, 1.0, 1e6))
        if self.m is not None:
            if self.kappa is None:
                raise ConfigError("m", "sets the rows of the drawn X: give kappa too")
            put(self, "m", _integer("m", self.m, 1, lim["max_d"]))
        if self.a0 is not None:
            put(self, "a0", _vector("a0", self.a0, n))
        if self.V0 is not None:
            put(self, "V0", _matrix("V0", self.V0, (d, n)))
        if self.target is not None:
            target = np.array(_vector("target", self.target, d))
            if self.loss == "kl":
                if np.any(target < 0) or target.sum() <= 0:
                    raise ConfigError("target", "must be a probability vector for kl (non-negative, sum > 0)")
                if abs(target.sum() - 1.0) > 1e-12:  # keep a normalized input bit for bit
                    target = target / target.sum()
            else:
                norm = np.linalg.norm(target)
                if norm == 0:
                    raise ConfigError("target", "must be a non-zero vector (it is normalized to length 1)")
                if abs(norm - 1.0) > 1e-12:
                    target = target / norm
            put(self, "target", FrozenArray(target))
        if self.X is not None:
            if self.loss == "kl":
                raise ConfigError("X", "applies to the logistic and square losses only")
            if self.kappa is not None:
                raise ConfigError("X", "give either an explicit X or kappa, not both")
            put(self, "X", _matrix("X", self.X, (None, d)))
            if len(self.X) > lim["max_d"]:
                raise ConfigError("X", f"has more than {lim['max_d']} rows (POLARIZE_MAX_D)")
        rows = len(self.X) if self.X is not None else (self.m or d) if self.kappa is not None else None
        if self.y is not None:
            if rows is None:
                raise ConfigError("y", "needs a design: give X (or kappa for the square loss)")
            put(self, "y", _vector("y", self.y, rows))
            if self.loss == "logistic" and not np.all(np.isin(self.y, (-1.0, 1.0))):
                raise ConfigError("y", "labels of the logistic loss must be -1 or +1")
        elif self.X is not None and self.loss == "logistic":
            raise ConfigError("y", "logistic loss on a data set X needs labels y in {-1, +1}")

    # ---- drawing ----------------------------------------------------------------

    @property
    def rows(self) -> int | None:
        """Rows ``m`` of the design ``X``, or None when there is none (``X = I`` or kl)."""
        if self.X is not None:
            return len(self.X)
        if self.kappa is not None:
            return self.m or self.d
        return None

    def resolved(self) -> Experiment:
        """This experiment with every random array drawn and written in explicitly."""
        n, d = self.n, self.d
        rng = np.random.RandomState(self.seed)
        v_draw = rng.randn(d, n)
        a_draw = rng.randn(n)
        if self.loss == "kl":
            t_draw = softmax(10.0 * rng.rand(d))
        else:
            t_draw = rng.randn(d)
        changes: dict[str, Any] = {}
        if self.V0 is None:
            if self.V_init == "gaussian":
                changes["V0"] = self.V_scale * v_draw
            elif self.V_init == "identity":
                changes["V0"] = self.V_scale * np.eye(d, n)
            else:
                changes["V0"] = np.zeros((d, n))
        if self.a0 is None:
            if self.a_init == "zeros":
                a = 0.0 * a_draw
            elif self.a_init == "gaussian":
                a = self.a_scale * a_draw
            elif self.a_init == "shifted":
                a = self.a_shift + self.a_scale * a_draw
            else:
                a = self.a_scale * a_draw
                a[self.a_vertex] += self.a_shift
            changes["a0"] = a + 0.0  # turn the -0.0 of 0 * randn into 0.0
        if self.target is None:
            changes["target"] = t_draw
        if self.kappa is not None and self.X is None:
            m = self.rows
            changes["X"] = conditioned_matrix(m, d, self.kappa, rng)
            changes["kappa"] = None
            changes["m"] = None
            if self.y is None:
                changes["y"] = rng.randn(m)
        if not changes:
            return self
        return dataclasses.replace(self, **changes)

    def varied(self, **changes: Any) -> Experiment:
        """This experiment with some fields changed, and its explicit arrays kept only where still valid.

        An explicit array (its own draw, or one given) is dropped, to be drawn
        afresh from the seed by the init fields, when a field it depends on
        changes: sizes, loss, model and seed concern every array; ``a_*`` fields
        ``a0``; ``V_*`` fields ``V0``; ``kappa`` and ``m`` the design ``X`` and
        ``y``. Arrays passed in ``changes`` are used as given.
        """
        changed = {k for k, v in changes.items() if v != getattr(self, k)}
        drop: set[str] = set()
        if changed & {"n", "d", "loss", "seed", "model"}:
            drop.update(_ARRAY_FIELDS)
        if any(k.startswith("a_") for k in changed):
            drop.add("a0")
        if any(k.startswith("V_") for k in changed):
            drop.add("V0")
        if changed & {"kappa", "m"}:
            drop.update({"X", "y"})
        cleared = {k: None for k in drop if getattr(self, k) is not None and k not in changes}
        return dataclasses.replace(self, **cleared, **changes)

    # ---- serialization ----------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (arrays as nested lists, unset ones omitted)."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            out[f.name] = value.tolist() if isinstance(value, FrozenArray) else value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Experiment:
        """Build from a mapping such as ``to_dict()`` gives; unknown keys are errors."""
        if not isinstance(data, Mapping):
            raise ConfigError("config", f"must be a JSON object, got {type(data).__name__}")
        _reject_unknown(cls, data)
        return cls(**data)

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_json(cls, text: str) -> Experiment:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError("config", f"is not valid JSON ({exc})") from None
        return cls.from_dict(data)

    def to_flat(self) -> dict[str, str]:
        """Every field that differs from its default, as strings (arrays as JSON)."""
        defaults = type(self)()
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None or value == getattr(defaults, f.name):
                continue
            out[f.name] = json.dumps(value.tolist()) if isinstance(value, FrozenArray) else str(value)
        return out

    @classmethod
    def from_flat(cls, flat: Mapping[str, str]) -> Experiment:
        """Parse a mapping of strings such as ``to_flat()`` gives (e.g. a URL query)."""
        _reject_unknown(cls, flat)
        return cls(**{k: _parse_flat(k, v) for k, v in flat.items()})

    @classmethod
    def from_flat_lenient(cls, flat: Mapping[str, str], **base: Any) -> tuple[Experiment, dict[str, str]]:
        """Like ``from_flat``, but drop what is invalid instead of raising.

        Returns the experiment built from every value that could be used (on top
        of the keyword defaults ``base``) and a dict from each ignored key to the
        reason, so a page can say what it ignored.
        """
        known = {f.name for f in dataclasses.fields(cls)}
        kept: dict[str, Any] = dict(base)
        ignored: dict[str, str] = {}
        for key, raw in flat.items():
            if key not in known:
                continue  # not ours (the app may keep other state in the URL)
            try:
                kept[key] = _parse_flat(key, raw)
            except ConfigError as exc:
                ignored[key] = str(exc)
        while True:
            try:
                return cls(**kept), ignored
            except ConfigError as exc:
                culprit = exc.field if exc.field in kept and exc.field in flat else None
                if culprit is None:
                    # The clash involves no user value we can drop: drop user values one by one.
                    culprit = next((k for k in reversed(list(kept)) if k in flat), None)
                    if culprit is None:
                        raise
                ignored[culprit] = str(exc)
                del kept[culprit]


def _reject_unknown(cls: type, keys: Mapping[str, Any]) -> None:
    known = sorted(f.name for f in dataclasses.fields(cls))
    for key in keys:
        if key not in known:
            raise ConfigError(str(key), f"is not a configuration key; known keys: {', '.join(known)}")


_INT_FIELDS = {"n", "d", "samples", "seed", "a_vertex", "m"}
_FLOAT_FIELDS = {"temperature", "lr", "horizon", "a_scale", "a_shift", "V_scale", "kappa"}
_ARRAY_FIELDS = ("a0", "V0", "target", "X", "y")


def _parse_flat(key: str, raw: str) -> Any:
    raw = str(raw).strip()
    try:
        if key in _INT_FIELDS:
            value = float(raw)
            if not value.is_integer():
                raise ValueError
            return int(value)
        if key in _FLOAT_FIELDS:
            return float(raw)
        if key in _ARRAY_FIELDS:
            return json.loads(raw)
    except (ValueError, OverflowError, json.JSONDecodeError):
        kind = "an integer" if key in _INT_FIELDS else "a number" if key in _FLOAT_FIELDS else "a JSON list"
        raise ConfigError(key, f"must be {kind}, got {raw!r}") from None
    return raw
