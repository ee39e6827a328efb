"""A sweep's cell: one unit of results (a run, an ensemble's chunk of starts, a training), named by a hash.

A cell's ``hash`` is that of its config (and, for an ensemble, of the starts it draws), so a finished
cell is recognized by it whatever task ran it (``polarize.sweeps.store.finished_hashes``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

__all__ = ["Cell", "digest"]


@dataclass(frozen=True, kw_only=True)
class Cell:
    """One unit of results: ``params`` (the grid's values), the config as JSON or why there is none.

    ``chunk`` is the half-open range of starts ``[lo, hi)`` of an ensemble cell.
    """

    index: int
    params: dict
    hash: str
    config: str | None
    error: str | None = None
    chunk: tuple[int, int] | None = None


def digest(*parts: Any) -> str:
    """A short hash of JSON-able ``parts`` (a cell's, a task's name)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:24]
