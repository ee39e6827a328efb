"""``Experiment`` to and from JSON and flat string mappings (the app's URL).

``to_dict``/``from_dict`` round-trip every field (arrays as nested lists);
``to_flat``/``from_flat`` keep only fields that differ from the defaults, each
as a string (arrays as JSON). ``from_flat_lenient`` drops what it cannot use and
says why. ``Experiment``'s methods of the same names call these.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from polarize.env import limits
from polarize.fields import ConfigError, FrozenArray, shown

if TYPE_CHECKING:
    from polarize.config import Experiment

__all__ = ["ARRAY_FIELDS", "finite", "from_dict", "from_flat", "from_flat_lenient", "from_json", "parse_flat",
           "strict_dumps", "to_dict", "to_flat"]

INT_FIELDS = frozenset({"n", "d", "samples", "seed", "a_vertex", "m"})
FLOAT_FIELDS = frozenset({"temperature", "eps", "lr", "horizon", "a_scale", "a_shift", "V_scale", "kappa"})
ARRAY_FIELDS = ("a0", "V0", "target", "X", "y")
_CHUNK = 1 << 20


def strict_dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` that refuses NaN and infinity (``ValueError``): what polarize writes is JSON.

    Python's ``json`` writes them as ``NaN``/``Infinity`` by default, which no strict parser reads.
    """
    return json.dumps(value, allow_nan=False, **kwargs)


def finite(value: Any) -> Any:
    """``value`` with numpy scalars made Python ones and non-finite floats None (absent), for strict JSON."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def to_dict(e: Experiment) -> dict[str, Any]:
    """A JSON-ready dict of every field (arrays as nested lists, unset ones omitted)."""
    out = {}
    for f in dataclasses.fields(e):
        value = getattr(e, f.name)
        if value is not None:
            out[f.name] = value.tolist() if isinstance(value, FrozenArray) else value
    return out


def from_dict(cls: type[Experiment], data: Mapping[str, Any]) -> Experiment:
    """Build from a mapping such as ``to_dict`` gives; unknown keys are errors."""
    if not isinstance(data, Mapping):
        raise ConfigError("config", f"must be a JSON object, got {type(data).__name__}")
    _reject_unknown(cls, data)
    return cls(**data)


def from_json(cls: type[Experiment], text: str) -> Experiment:
    """Build from JSON text; bad JSON (too long, too deep) is a ``ConfigError`` naming ``config``."""
    return from_dict(cls, load_json("config", text, depth=3))


def max_text_bytes() -> int:
    """The longest JSON text that arrays within the caps need (``polarize.env.limits``).

    Room for ``V0`` and ``X`` at ``POLARIZE_MAX_SIZE`` entries each, ``a0``, ``target``
    and ``y``, at 32 characters a number (a float's longest form and a separator),
    plus 64 KiB for the other fields. Longer text is refused before it is parsed.
    """
    lim = limits()
    return 32 * (2 * lim["max_size"] + lim["max_n"] + 2 * lim["max_d"]) + (1 << 16)


def load_json(name: str, text: str, *, depth: int) -> Any:
    """Parse JSON ``text`` of at most ``depth`` nested lists and objects; errors name ``name``.

    Length and depth are checked before parsing, so hostile text costs no more than one pass.
    """
    cap = max_text_bytes()
    if len(text) > cap:
        raise ConfigError(name, f"is {len(text)} characters long, more than the {cap} that arrays within "
                          "the caps need (POLARIZE_MAX_SIZE)")
    if _deepest(text.encode("utf-8", "surrogatepass"), depth) > depth:
        raise ConfigError(name, f"nests lists or objects deeper than {depth} levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(name, f"is not valid JSON ({exc})") from None
    except (ValueError, RecursionError):  # an integer of more digits than Python reads
        raise ConfigError(name, "holds a number too long to read") from None


def _deepest(text: bytes, enough: int) -> int:
    """How deep brackets nest in ``text`` (strings not told apart), read in 1 MiB chunks to keep
    memory flat; stops early once deeper than ``enough``."""
    data = np.frombuffer(text, dtype=np.uint8)
    deepest = level = 0
    for start in range(0, len(data), _CHUNK):
        chunk = data[start:start + _CHUNK]
        opens, closes = (chunk == ord("[")) | (chunk == ord("{")), (chunk == ord("]")) | (chunk == ord("}"))
        marks = opens[opens | closes]
        if len(marks):
            levels = level + np.cumsum(np.where(marks, 1, -1))
            deepest, level = max(deepest, int(levels.max())), int(levels[-1])
            if deepest > enough:
                break
    return deepest


def to_flat(e: Experiment) -> dict[str, str]:
    """Every field that differs from its default, as strings (arrays as JSON)."""
    defaults = type(e)()
    out = {}
    for f in dataclasses.fields(e):
        value = getattr(e, f.name)
        if value is None or value == getattr(defaults, f.name):
            continue
        out[f.name] = json.dumps(value.tolist()) if isinstance(value, FrozenArray) else str(value)
    return out


def from_flat(cls: type[Experiment], flat: Mapping[str, str]) -> Experiment:
    """Parse a mapping of strings such as ``to_flat`` gives (e.g. a URL query)."""
    _reject_unknown(cls, flat)
    return cls(**{k: parse_flat(k, v) for k, v in flat.items()})


def from_flat_lenient(
    cls: type[Experiment], flat: Mapping[str, str], base: Mapping[str, Any]
) -> tuple[Experiment, dict[str, str]]:
    """Like ``from_flat``, but drop what is invalid instead of raising.

    Returns the experiment built from every value that could be used (on top
    of the keyword defaults ``base``) and a dict from each ignored key to the
    reason. Keys that are not fields are skipped silently (the app may keep
    other state in the URL).
    """
    known = {f.name for f in dataclasses.fields(cls)}
    kept: dict[str, Any] = dict(base)
    ignored: dict[str, str] = {}
    for key, raw in flat.items():
        if key not in known:
            continue
        try:
            kept[key] = parse_flat(key, raw)
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
            name = key if isinstance(key, str) and key.isidentifier() and len(key) <= 40 else shown(key)
            raise ConfigError(name, f"is not a configuration key; known keys: {', '.join(known)}")


def parse_flat(key: str, raw: str) -> Any:
    """The value of field ``key`` from its string form (``to_flat``'s)."""
    try:
        raw = str(raw).strip()
    except ValueError:  # an integer of more digits than Python prints
        raise ConfigError(key, "must be text") from None
    if key in ARRAY_FIELDS:
        return load_json(key, raw, depth=2)
    if key not in INT_FIELDS and key not in FLOAT_FIELDS:
        return raw
    try:
        return int(raw) if key in INT_FIELDS and raw.lstrip("+-").isdigit() else float(raw)
    except ValueError:
        kind = "an integer" if key in INT_FIELDS else "a number"
        raise ConfigError(key, f"must be {kind}, got {shown(raw)}") from None
