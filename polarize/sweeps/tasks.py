"""From a sweep's cells to tasks, and what a task does on a worker.

A cell is one grid point (a run, an ensemble's chunk of starts, or a training);
its ``hash`` is that of its config (and, for an ensemble, of the starts it
draws), so a finished cell is recognized by it whatever task ran it. A task is
a few cells run one after another on one worker (``options.cells_per_task``)
and returns its rows as a pyarrow table; the client writes them
(``polarize.sweeps.store``), so workers need no shared file system.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from polarize.fields import ConfigError
from polarize.sweeps.spec import Sweep

__all__ = ["Cell", "Task", "make_cells", "make_tasks", "run_task"]


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


@dataclass(frozen=True, kw_only=True)
class Task:
    """Cells run together on one worker; ``key`` names the task (and its result file)."""

    key: str
    kind: str
    settings: dict
    cells: tuple[Cell, ...]


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:24]


def make_cells(sweep: Sweep) -> Iterator[Cell]:
    """Every cell of the sweep, each config built (and hashed) here, its failure kept in words."""
    for index, params in enumerate(sweep.cells()):
        try:
            built = sweep.config(params)
            config = json.dumps(built.to_dict()) if sweep.kind == "sinks" else built.to_json()
            error = None
        except ConfigError as exc:
            config, error = None, str(exc)
        ident = config if config is not None else {"base": sweep.base, "params": params}
        if sweep.kind != "ensemble":
            yield Cell(index=index, params=params, hash=_digest(sweep.kind, ident), config=config,
                       error=error)
            continue
        e = sweep.ensemble
        scale = params.get("scale", e["scale"])
        chunks = math.ceil(e["starts"] / e["chunk"])
        for k in range(chunks):
            lo, hi = k * e["chunk"], min(e["starts"], (k + 1) * e["chunk"])
            ident_chunk = _digest("ensemble", ident, scale, e["draw_seed"], e["rows"], lo, hi)
            yield Cell(index=index, params={**params, "scale": scale}, config=config, error=error,
                       chunk=(lo, hi), hash=ident_chunk)


def make_tasks(sweep: Sweep, cells: Iterable[Cell]) -> list[Task]:
    """Group cells into tasks of ``options.cells_per_task`` (one per task for ensembles and sinks)."""
    size = sweep.options["cells_per_task"] if sweep.kind == "runs" else 1
    settings = {**sweep.options, **sweep.ensemble, "base": sweep.base}
    cells = list(cells)
    return [Task(key=_digest(*(c.hash for c in group)), kind=sweep.kind, settings=settings,
                 cells=tuple(group)) for group in (cells[k:k + size] for k in range(0, len(cells), size))]


def worker_name() -> str:
    """Where a cell ran: host and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"


def run_task(task: Task):
    """Run every cell of ``task``; returns ``(rows, trajectories)``, pyarrow tables (the second or None).

    A cell that raises becomes a row with ``status = "error"`` and the error in words.
    """
    from polarize.env import local_caps
    from polarize.sweeps import outcomes

    rows, paths = [], []
    with local_caps():  # like the command line: the user's own machines, every preset in full
        for cell in task.cells:
            begin = time.perf_counter()
            found, path = outcomes.error_rows(task.kind, cell, cell.error or ""), None
            if cell.error is None:
                try:
                    found, path = outcomes.run_cell(task.kind, cell, task.settings)
                except Exception as exc:  # the promise: a row with the error, never a lost cell
                    found = outcomes.error_rows(task.kind, cell, outcomes.in_words(exc))
            seconds = time.perf_counter() - begin
            for row in found:
                row.update(hash=cell.hash, cell=cell.index, task=task.key, worker=worker_name(),
                           seconds=seconds, config=cell.config or "")
                row.update({f"{key}": value for key, value in cell.params.items()})
            rows.extend(found)
            if path is not None:
                paths.append(path)
    return outcomes.table(task.kind, rows), outcomes.trajectories(paths)
