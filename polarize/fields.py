"""Field validation for ``Experiment``: the error type and one checker per kind of value.

Every checker takes the field's name and the raw value and returns the value
in its canonical type (``int``, ``float``, ``str`` or a read-only
``FrozenArray``), or raises a ``ConfigError`` naming the field and saying what
it accepts. Numbers are the same inside arrays as alone: ints and floats,
never bools or strings, finite and representable as a float. The caps on
sizes are in ``polarize.env``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["ArrayInput", "ConfigError", "FrozenArray", "choice", "flag", "integer", "matrix", "real", "shown",
           "vector"]


class ConfigError(ValueError):
    """An invalid experiment field; ``field`` names it, the message says why."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


class FrozenArray:
    """A read-only float array that compares and hashes by value.

    Holds the explicit arrays of an ``Experiment`` (``a0``, ``V0``, ...), so the
    experiment stays hashable without turning a 4096 x 128 matrix into nested
    tuples. ``np.asarray(x)`` gives the (read-only) array without a copy.

    Its hash is Python's, salted per process: it travels in no pickle (``__reduce__``), and a task
    key, the same on every replica, is made from its content (``__dask_tokenize__``).
    """

    __slots__ = ("_array", "_hash")

    def __init__(self, array: Any):
        arr = np.array(array, dtype=float)
        arr.setflags(write=False)
        self._array = arr
        self._hash = hash((arr.shape, arr.tobytes()))

    def __reduce__(self) -> tuple[type, tuple[np.ndarray]]:
        # The array alone: a hash pickled in one process is wrong in another (str hashes are salted).
        return FrozenArray, (self._array,)

    def __dask_tokenize__(self) -> tuple[str, str, tuple[int, ...], str]:
        """Dask's token of this array (a task key's part): its dtype, shape and bytes, in any process."""
        digest = hashlib.sha256(np.ascontiguousarray(self._array).data).hexdigest()
        return "polarize.FrozenArray", self._array.dtype.str, self._array.shape, digest

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


ArrayInput = FrozenArray | np.ndarray | Sequence[Any]
"""What an ``Experiment``'s array fields accept: nested lists or tuples of numbers, a numpy array, or a
``FrozenArray``; validated, each is stored as a ``FrozenArray``."""


def shown(value: Any, width: int = 40) -> str:
    """``value`` as a short one-line text for an error message (never the whole of a huge value)."""
    if isinstance(value, (np.ndarray, FrozenArray)):  # 0-d arrays and np.ma.masked too: they have no len
        return f"an array of shape {np.shape(value)}"
    if isinstance(value, (list, tuple, dict, set)):
        return f"a {type(value).__name__} of {len(value)} items"
    try:
        text = repr(value)
    except ValueError:  # an integer with more digits than Python will print
        return f"an integer of about {int(value.bit_length() * math.log10(2))} digits"
    return text if len(text) <= width else text[: width - 3] + "..."


def _is_number_type(kind: type) -> bool:
    """Numbers as single values accept them: ints and floats (numpy's too), never bools."""
    return issubclass(kind, (int, float, np.integer, np.floating)) and not issubclass(kind, (bool, np.bool_))


def _row(name: str, row: Any) -> Any:
    """One flat run of numbers (a list, tuple or numeric array), checked entry type by entry type."""
    if isinstance(row, np.ma.MaskedArray):  # its masked entries would silently become numbers
        raise ConfigError(name, "must be a plain list or array of numbers, not a masked array")
    if isinstance(row, (np.ndarray, FrozenArray)):
        row = np.asarray(row)
        if row.dtype.kind not in "iuf":
            raise ConfigError(name, f"must hold numbers only, got an array of {row.dtype}")
        return row
    if not isinstance(row, (list, tuple)):
        raise ConfigError(name, f"must be a list of numbers, got {shown(row)}")
    bad = [kind for kind in set(map(type, row)) if not _is_number_type(kind)]
    if bad:
        raise ConfigError(name, f"must hold numbers only (not {bad[0].__name__})")
    return row


def _as_floats(name: str, value: Any) -> FrozenArray:
    """Entries checked to be numbers, as floats; one too large for a float, or not finite, is an error."""
    try:
        arr = np.array(value, dtype=float)
    except OverflowError:
        raise ConfigError(name, "holds a number too large for a float") from None
    except ValueError:
        raise ConfigError(name, "must be a list of equal-length rows of numbers") from None
    if not np.all(np.isfinite(arr)):
        raise ConfigError(name, "must hold finite numbers only (no NaN or infinity)")
    return FrozenArray(arr + 0.0)  # -0.0 as 0.0: equal arrays hash equal


def vector(name: str, value: Any, length: int | None = None, *, most: int | None = None) -> FrozenArray:
    """A flat list of finite numbers: ``length`` entries when given, else 1 to ``most``."""
    row = _row(name, value)
    if getattr(row, "ndim", 1) != 1:
        raise ConfigError(name, f"must be a flat list of numbers, got shape {row.shape}")
    size = len(row)
    if length is not None and size != length:
        raise ConfigError(name, f"must have {length} entries, got {size}")
    if length is None and not 1 <= size <= (most or size):
        raise ConfigError(name, f"must have 1 to {most} entries, got {size}")
    return _as_floats(name, row)


def matrix(name: str, value: Any, shape: tuple[int | None, int], *,
           most_rows: float | None = None) -> FrozenArray:
    """Rows of finite numbers of the given ``(rows, cols)`` shape (``rows`` None: 1 to ``most_rows``).

    The shape is checked row by row before anything is converted, so an oversized
    value costs no more than its first wrong row.
    """
    rows, cols = shape
    want = f"{rows if rows is not None else 'm'} rows of {cols}"
    if isinstance(value, (np.ndarray, FrozenArray)):
        arr = _row(name, value)
        if arr.ndim != 2 or (rows is not None and arr.shape[0] != rows) or arr.shape[1] != cols:
            raise ConfigError(name, f"must be {want} numbers, got shape {arr.shape}")
        value = arr
    elif not isinstance(value, (list, tuple)):
        raise ConfigError(name, f"must be a list of rows of numbers, got {shown(value)}")
    elif rows is not None and len(value) != rows:
        raise ConfigError(name, f"must be {want} numbers, got {len(value)} rows")
    else:
        for row in value:
            checked = _row(name, row)
            if getattr(checked, "ndim", 1) != 1 or len(checked) != cols:
                raise ConfigError(name, f"must be {want} numbers, got a row of shape {np.shape(checked)}")
    if rows is None and not 1 <= len(value) <= (most_rows or len(value)):
        raise ConfigError(name, f"must have 1 to {most_rows} rows, got {len(value)}")
    return _as_floats(name, value)


def integer(name: str, value: Any, low: int, high: float) -> int:
    """An integer in ``[low, high]``; a whole float is accepted, a bool is not."""
    whole = not isinstance(value, (float, np.floating)) or float(value).is_integer()
    if not _is_number_type(type(value)) or not whole:
        raise ConfigError(name, f"must be an integer in [{low}, {high}], got {shown(value)}")
    if not low <= value <= high:
        raise ConfigError(name, f"must be an integer in [{low}, {high}], got {shown(value)}")
    return int(value)


def real(name: str, value: Any, low: float, high: float, *, open_low: bool = False,
         open_high: bool = False) -> float:
    """A finite number in ``[low, high]`` (either end left out with ``open_low``, ``open_high``); not a
    bool or a string."""
    interval = f"{'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"
    if not _is_number_type(type(value)):
        raise ConfigError(name, f"must be a number in {interval}, got {shown(value)}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    too_low = number <= low if open_low else number < low
    too_high = number >= high if open_high else number > high
    if not math.isfinite(number) or too_low or too_high:
        raise ConfigError(name, f"must be a number in {interval}, got {shown(value)}")
    return number


def flag(name: str, value: Any) -> bool:
    """``true`` or ``false`` (a bool, not 0, 1 or a string)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(name, f"must be true or false; got {shown(value)}")
    return bool(value)


def choice(name: str, value: Any, options: tuple[str, ...]) -> str:
    """One of ``options`` (as a plain ``str``)."""
    if not isinstance(value, str) or value not in options:
        raise ConfigError(name, f"must be one of {', '.join(options)}; got {shown(value)}")
    return str(value)
