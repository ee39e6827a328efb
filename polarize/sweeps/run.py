"""Running a sweep on Dask distributed: a ``LocalCluster`` by default, or any scheduler by address,
through the client the app's Dask backend makes (``polarize.serve.cluster.dask_client``).

The client builds the cells, skips those already in the results folder (by
hash), times a small sample in-process to estimate the whole, then sends the
remaining tasks to the cluster and writes each task's rows as it arrives. With
a scheduler's address, the address is read and the scheduler reached (a
connection opened and closed) before anything else, and every task runs on that
cluster (nothing is sampled here). A
worker that dies has its tasks rerun elsewhere by Dask; a task that Dask gives
up on is counted as failed and left for the next run. Ctrl-C cancels what is
queued and leaves whole files only.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polarize.env import scheduler_address
from polarize.fields import ConfigError, shown
from polarize.serve.cluster import ClusterUnavailable, dask_client
from polarize.sweeps import store
from polarize.sweeps.rows import ERROR
from polarize.sweeps.spec import Sweep
from polarize.sweeps.tasks import Task, make_cells, make_tasks, run_task

__all__ = ["MISSING_MESSAGE", "Progress", "check_scheduler", "dask_available", "run_sweep"]

MISSING_MESSAGE = "sweeps need the optional extra: pip install 'polarize[sweep]' (dask[distributed], duckdb)"
SAMPLE_TASKS = 2
"""Tasks run in-process before the cluster starts: their time estimates the whole (and they are kept)."""


def dask_available() -> bool:
    """True when ``dask.distributed`` can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("distributed") is not None


@dataclass
class Progress:
    """Where a sweep stands; passed to the ``progress`` callback after every task."""

    cells: int
    skipped: int
    to_run: int
    done: int = 0
    errors: int = 0
    failed: int = 0
    started: float = field(default_factory=time.monotonic)
    messages: list = field(default_factory=list)
    dashboard: str = ""
    estimate: dict = field(default_factory=dict)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def eta(self) -> float | None:
        """Seconds left at the pace so far (None before the first cell)."""
        finished = self.done + self.failed
        if not finished:
            return None
        return self.elapsed / finished * (self.to_run - finished)


def _note(progress: Progress, task: Task, rows) -> None:
    status = rows.column("status").to_pylist()
    progress.done += len(task.cells)
    progress.errors += len({h for h, s in zip(rows.column("hash").to_pylist(), status, strict=True)
                            if s == ERROR})
    if ERROR in status:
        _message(progress, rows.column("message")[status.index(ERROR)].as_py())


def _message(progress: Progress, text: str) -> None:
    """Keep a few distinct failure messages to show at the end."""
    if text not in progress.messages and len(progress.messages) < 5:
        progress.messages.append(text)


def _sample(sweep: Sweep, folder: Path, tasks: list[Task], progress: Progress, report) -> list[Task]:
    """Run the first tasks here, keep them, and estimate the CPU time and size of the rest (a kind that
    is too slow to sample estimates itself, from nothing run)."""
    kind = sweep.entry
    if not kind.samples:
        seconds, line = kind.estimate(sweep, [c for t in tasks for c in t.cells])
        if seconds is not None:
            progress.estimate = {"cpu_seconds": seconds}
            report(line)
        return tasks
    if not tasks:
        return tasks
    sample, rest = tasks[:SAMPLE_TASKS], tasks[SAMPLE_TASKS:]
    begin, cpu, size, rows = time.perf_counter(), time.process_time(), 0, 0
    for task in sample:
        table, series = run_task(task)
        path = store.write_task(folder, task.key, table, series)
        size, rows = size + path.stat().st_size, rows + table.num_rows
        _note(progress, task, table)
    per_task = (time.process_time() - cpu) / len(sample)
    total_rows = rows / len(sample) * len(tasks)
    progress.estimate = {"cpu_seconds": per_task * len(tasks), "bytes": size / len(sample) * len(tasks),
                         "rows": total_rows, "sample_seconds": time.perf_counter() - begin}
    report(f"estimate from {len(sample)} sampled tasks: {per_task * len(tasks):.3g} s of CPU in all, "
           f"about {size / len(sample) * len(tasks) / 1e6:.3g} MB of results")
    return rest


def check_scheduler(scheduler: object) -> str:
    """``scheduler`` as a Dask scheduler's address (``tcp://HOST:PORT``), or a ``ConfigError`` naming it.

    The one reading of an address (``env.scheduler_address``), as the app reads ``POLARIZE_SCHEDULER``.
    """
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise ConfigError("scheduler", f"{shown(scheduler)} is not a scheduler's address; give one like "
                          "tcp://HOST:8786")
    return scheduler_address(scheduler)


@contextlib.contextmanager
def _client(scheduler: str | None, workers: int | None) -> Iterator[Any]:
    """The backend's Dask client for the sweep (``polarize.serve.cluster.dask_client``): to the scheduler
    at ``scheduler``, or to a local cluster of ``workers``; one that cannot be reached is a
    ``ConfigError`` naming the field."""
    with contextlib.ExitStack() as stack:
        try:
            client = stack.enter_context(dask_client(scheduler, workers=workers))
        except ClusterUnavailable as exc:
            raise ConfigError("scheduler", str(exc)) from None
        yield client


def _cluster_run(tasks: list[Task], folder: Path, client, progress: Progress, callback) -> None:
    from dask.distributed import as_completed

    futures = client.map(run_task, tasks, key=[f"polarize-sweep-{t.key}" for t in tasks], pure=False)
    by_key = {f.key: t for f, t in zip(futures, tasks, strict=True)}
    try:
        for future in as_completed(futures, loop=client.loop):  # the sweep's client, not a default one
            task = by_key[future.key]
            try:
                table, series = future.result()
            except Exception as exc:  # the worker died too often or the task could not be sent
                progress.failed += len(task.cells)
                _message(progress, f"{type(exc).__name__}: {str(exc)[:200]}")
            else:
                store.write_task(folder, task.key, table, series)
                _note(progress, task, table)
            callback(progress)
    except BaseException:
        client.cancel(futures)
        raise


def run_sweep(sweep: Sweep, folder: Path, *, scheduler: str | None = None, workers: int | None = None,
              progress: Callable[[Progress], None] | None = None,
              report: Callable[[str], None] = lambda line: None, sample: bool = True) -> Progress:
    """Run the cells of ``sweep`` not yet in ``folder``; returns the final ``Progress``.

    Parameters
    ----------
    sweep : Sweep
    folder : Path
        The results folder (created if needed); it must not hold another sweep's results.
    scheduler : str, optional
        A running Dask scheduler's address (``tcp://host:8786``); default a ``LocalCluster``.
    workers : int, optional
        Worker processes of the ``LocalCluster`` (default one per core).
    progress : callable, optional
        Called with the ``Progress`` after every task (it may raise ``KeyboardInterrupt`` to stop).
    report : callable
        Called with each line worth printing (the plan, the estimate, the dashboard's address).
    sample : bool
        Run the first tasks in-process to estimate the rest.
    """
    if not dask_available():
        raise ConfigError("sweep", MISSING_MESSAGE)
    if scheduler is not None:  # read and reached before any work; every task then runs there
        scheduler, sample = check_scheduler(scheduler), False
        with _client(scheduler, workers):
            pass
    sweep.entry.preflight(here=scheduler is None)
    folder = Path(folder)
    store.write_manifest(folder, sweep)
    cells = list(make_cells(sweep))
    done = store.finished_hashes(folder)
    todo = [c for c in cells if c.hash not in done]
    tasks = make_tasks(sweep, todo)
    state = Progress(cells=len(cells), skipped=len(cells) - len(todo), to_run=len(todo))
    report(f"{sweep.name}: {sweep.kind} sweep, {sweep.n_cells} grid cells, {len(cells)} result cells; "
           f"{state.skipped} already in {folder}, {len(todo)} to run in {len(tasks)} tasks")
    callback = progress or (lambda p: None)
    if sample:
        tasks = _sample(sweep, folder, tasks, state, report)
    if tasks:
        with _client(scheduler, workers) as client:
            state.dashboard = client.dashboard_link or ""
            report(f"dask: {len(client.scheduler_info().get('workers', {}))} workers; "
                   f"dashboard {state.dashboard}")
            _cluster_run(tasks, folder, client, state, callback)
    store.write_manifest(folder, sweep, last_run={"ran": state.done, "errors": state.errors,
                                                  "failed": state.failed, "seconds": state.elapsed})
    return state
