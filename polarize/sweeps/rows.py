"""A sweep's rows as pyarrow tables: the columns every kind shares, then the kind's own (its ``schema``).

Every row has ``hash``, ``cell``, ``task``, ``worker``, ``seconds``, ``config``, ``status`` and
``message``; a kind (``polarize.sweeps.kinds``) adds its outcome's columns, and the grid's own columns
come after, typed by their values.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["COMMON", "ERROR", "error_rows", "in_words", "table", "trajectories"]

COMMON = {"hash": "string", "cell": "int64", "task": "string", "worker": "string", "seconds": "double",
          "config": "string", "status": "string", "message": "string"}
"""Column types of every kind's rows."""
ERROR = "error"
"""The ``status`` of a cell whose config or run failed (a sweep row's status besides ``Status``'s)."""


def in_words(exc: BaseException) -> str:
    """An exception as one line: its message, and its type when that says more."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text if type(exc).__name__ == "ConfigError" else f"{type(exc).__name__}: {text}".rstrip(": ")


def error_rows(message: str) -> list[dict]:
    """The one row of a cell that failed: its status and why, no numbers."""
    return [{"status": ERROR, "message": message}]


def table(schema: Mapping[str, str], rows: list[dict]):
    """Rows as a pyarrow table: the shared columns and ``schema``'s in their types, then any others."""
    import pyarrow as pa

    types = {**COMMON, **schema}
    names = list(types) + [k for row in rows for k in row if k not in types]
    names = list(dict.fromkeys(names))
    columns = {}
    for name in names:
        values = [row.get(name) for row in rows]
        columns[name] = pa.array(values, type=_type(types[name])) if name in types else pa.array(values)
    return pa.table(columns)


def _type(name: str):
    import pyarrow as pa

    if name.startswith("list<"):
        return pa.list_(_type(name[5:-1]))
    return {"string": pa.string(), "int64": pa.int64(), "double": pa.float64(), "bool": pa.bool_()}[name]


def trajectories(paths: list[dict]):
    """Saved series of runs, long format (one row per run and saved time), or None."""
    if not paths:
        return None
    import pyarrow as pa

    return pa.table({
        "hash": [p["hash"] for p in paths for _ in p["t"]],
        "t": np.concatenate([p["t"] for p in paths]),
        "one_minus_max": np.concatenate([p["one_minus_max"] for p in paths]),
        "entropy": np.concatenate([p["entropy"] for p in paths]),
        "loss": np.concatenate([p["loss"] for p in paths]),
        "s": pa.array([row.tolist() for p in paths for row in p["s"]], type=pa.list_(pa.float64())),
    })
