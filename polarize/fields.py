"""Field validation for ``Experiment``: the error type, the caps, and one checker per kind of value.

Every checker takes the field's name and the raw value and returns the value
in its canonical type (``int``, ``float``, ``str`` or a read-only
``FrozenArray``), or raises a ``ConfigError`` naming the field and saying what
it accepts.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

__all__ = ["ConfigError", "FrozenArray", "choice", "integer", "limits", "matrix", "real", "vector"]

# Caps sized for a hosted demo; each can be raised through its environment variable.
_LIMIT_DEFAULTS = {
    "max_n": ("POLARIZE_MAX_N", 4096),
    "max_d": ("POLARIZE_MAX_D", 4096),
    "max_size": ("POLARIZE_MAX_SIZE", 1 << 20),
    "max_horizon": ("POLARIZE_MAX_HORIZON", 1e300),  # the closed logistic flow reaches it in a second
    "max_steps": ("POLARIZE_MAX_STEPS", 2_000_000),
    "max_samples": ("POLARIZE_MAX_SAMPLES", 2000),
}


class ConfigError(ValueError):
    """An invalid experiment field; ``field`` names it, the message says why."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


def limits() -> dict[str, float]:
    """The caps in force now (read from the environment at each call).

    Returns
    -------
    dict
        ``max_n``, ``max_d``, ``max_size`` (n * d), ``max_horizon``,
        ``max_steps`` (gradient-descent steps) and ``max_samples``.
    """
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


def _finite(name: str, arr: np.ndarray) -> FrozenArray:
    if not np.all(np.isfinite(arr)):
        raise ConfigError(name, "must hold finite numbers only (no NaN or infinity)")
    return FrozenArray(arr)


def vector(name: str, value: Any, length: int | None = None) -> FrozenArray:
    """A flat list of finite numbers (of ``length`` entries when given)."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(name, "must be a list of numbers") from None
    if arr.ndim != 1:
        raise ConfigError(name, f"must be a flat list of numbers, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ConfigError(name, f"must have {length} entries, got {arr.shape[0]}")
    return _finite(name, arr)


def matrix(name: str, value: Any, shape: tuple[int | None, int]) -> FrozenArray:
    """Rows of finite numbers of the given ``(rows, cols)`` shape (``rows`` None: any number)."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(name, "must be a list of equal-length rows of numbers") from None
    rows, cols = shape
    if arr.ndim != 2 or (rows is not None and arr.shape[0] != rows) or arr.shape[1] != cols:
        want = f"{rows if rows is not None else 'm'} rows of {cols}"
        raise ConfigError(name, f"must be {want} numbers, got shape {arr.shape}")
    return _finite(name, arr)


def integer(name: str, value: Any, low: int, high: int) -> int:
    """An integer in ``[low, high]``; a whole float is accepted, a bool is not."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ConfigError(name, f"must be an integer in [{low}, {high}], got {value!r}")
    if not low <= value <= high:
        raise ConfigError(name, f"must be an integer in [{low}, {high}], got {value}")
    return int(value)


def real(name: str, value: Any, low: float, high: float, *, open_low: bool = False) -> float:
    """A finite number in ``[low, high]`` (``(low, high]`` with ``open_low``); not a bool or a string."""
    interval = f"{'(' if open_low else '['}{low:g}, {high:g}]"
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ConfigError(name, f"must be a number in {interval}, got {value!r}")
    value = float(value)
    too_low = value <= low if open_low else value < low
    if not math.isfinite(value) or too_low or value > high:
        raise ConfigError(name, f"must be a number in {interval}, got {value!r}")
    return value


def choice(name: str, value: Any, options: tuple[str, ...]) -> str:
    """One of ``options``."""
    if value not in options:
        raise ConfigError(name, f"must be one of {', '.join(options)}; got {value!r}")
    return value
