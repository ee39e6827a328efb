"""``Experiment`` to and from JSON, the form of files and of the command line.

``to_dict``/``from_dict`` round-trip every field (arrays as nested lists);
``Experiment``'s methods of the same names call these. A page's link is the web
layer's business (``polarize.web.links``, through its controls), not the engine's.
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

__all__ = ["ARRAY_FIELDS", "finite", "from_dict", "from_json", "load_json", "max_text_bytes", "strict_dumps",
           "to_dict"]

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
    return int(32 * (2 * lim["max_size"] + lim["max_n"] + 2 * lim["max_d"])) + (1 << 16)


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


def _reject_unknown(cls: type, keys: Mapping[str, Any]) -> None:
    known = sorted(f.name for f in dataclasses.fields(cls))
    for key in keys:
        if key not in known:
            name = key if isinstance(key, str) and key.isidentifier() and len(key) <= 40 else shown(key)
            raise ConfigError(name, f"is not a configuration key; known keys: {', '.join(known)}")
