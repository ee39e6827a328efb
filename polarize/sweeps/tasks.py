"""From a sweep's cells to tasks, and what a task does on a worker.

A cell (``polarize.sweeps.cell``) is one unit of results, its kind's (``polarize.sweeps.kinds``): a
run, an ensemble's chunk of starts, a training. A task is a few cells run one after another on one
worker (the kind's ``cells_per_task``) and returns its rows as a pyarrow table; the client writes them
(``polarize.sweeps.store``), so workers need no shared file system.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from polarize.sweeps import rows as sweep_rows
from polarize.sweeps.cell import Cell, digest
from polarize.sweeps.kinds import SweepKind
from polarize.sweeps.spec import Sweep

__all__ = ["Cell", "Task", "make_cells", "make_tasks", "run_task"]


@dataclass(frozen=True, kw_only=True)
class Task:
    """Cells run together on one worker; ``key`` names the task (and its result file).

    ``kind`` is the kind itself (pickled by reference to its module), ``settings`` its settings and
    ``base`` the sweep's base, so a worker needs nothing but the package.
    """

    key: str
    kind: SweepKind
    settings: Any
    base: dict
    cells: tuple[Cell, ...]


def make_cells(sweep: Sweep) -> Iterator[Cell]:
    """Every cell of the sweep, each config built (and hashed) here, its failure kept in words."""
    return sweep.entry.cells(sweep)


def make_tasks(sweep: Sweep, cells: Iterable[Cell]) -> list[Task]:
    """Group cells into tasks of the kind's ``cells_per_task``."""
    kind = sweep.entry
    size = kind.cells_per_task(sweep.settings)
    cells = list(cells)
    groups = (tuple(cells[k:k + size]) for k in range(0, len(cells), size))
    base = dict(sweep.base)
    return [Task(key=digest(*(c.hash for c in group)), kind=kind, settings=sweep.settings, base=base,
                 cells=group) for group in groups]


def worker_name() -> str:
    """Where a cell ran: host and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"


def run_task(task: Task):
    """Run every cell of ``task``; returns ``(rows, trajectories)``, pyarrow tables (the second or None).

    A cell that raises becomes a row with ``status = "error"`` (``rows.ERROR``) and the error in words.
    """
    from polarize.env import local_caps

    rows, paths = [], []
    with local_caps():  # like the command line: the user's own machines, every preset in full
        for cell in task.cells:
            begin = time.perf_counter()
            found, path = sweep_rows.error_rows(cell.error or ""), None
            if cell.error is None:
                try:
                    found, path = task.kind.run_cell(cell, task.settings, task.base)
                except Exception as exc:  # the promise: a row with the error, never a lost cell
                    found = sweep_rows.error_rows(sweep_rows.in_words(exc))
            seconds = time.perf_counter() - begin
            for row in found:
                row.update(hash=cell.hash, cell=cell.index, task=task.key, worker=worker_name(),
                           seconds=seconds, config=cell.config or "")
                row.update({f"{key}": value for key, value in cell.params.items()})
            rows.extend(found)
            if path is not None:
                paths.append(path)
    return sweep_rows.table(task.kind.schema, rows), sweep_rows.trajectories(paths)
