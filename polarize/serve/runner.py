"""Run ``simulate`` with a time limit, in worker processes that can be stopped.

Some settings make the engine slow: a long horizon under the cross-entropy loss,
or large sizes under gradient descent, can take minutes.
A web page must not hang on them, and a Python thread cannot be interrupted
inside a long computation, so runs go to a small pool of long-lived worker
processes (plain ``python -c`` children talking pickles over their standard
input and output; each imports the engine once, so a run costs only the
pickling of its result). A run that overshoots its time limit has its worker
killed (a fresh one replaces it on the next run) and raises ``RunTimeout``.
Every request carries an id that its reply must echo, and a worker whose state
is in any doubt (a reply not read, a pipe error) is killed rather than reused,
so no caller can ever receive another caller's result.

Runs wait their turn in ``polarize.serve.admission``: one queue, at most as many
runs at once as there are workers, plus a spare worker when every running run
is a long one; ``queue_notices`` tells a caller its place while it waits. A
run that turns long also has its worker's priority lowered, so that the light
runs beside it get the CPU first.

Why not a library pool: loky cannot stop one overrunning task without killing
the whole executor, and pebble (which can) must start its workers by fork,
unsafe from the app's threaded server, or by spawn/forkserver, which re-runs
the caller's ``__main__`` in every worker and breaks any script without a
``__main__`` guard. Plain ``python -c`` children have neither problem.

That pool (``polarize.serve.local``) is one of three backends of one protocol
(``polarize.serve.backend``), and ``backend()`` chooses: set ``POLARIZE_SCHEDULER`` to a Dask
scheduler's address to run on its workers instead (``polarize.serve.cluster``),
``POLARIZE_APP_INPROCESS=1`` (or ``true``, ``yes``, ``on``) to run in the calling process
(``polarize.serve.inprocess``: no time limit; also the fallback where there are no POSIX pipes), and
``POLARIZE_APP_TIMEOUT`` to change the limit (seconds).
"""

from __future__ import annotations

import atexit
import concurrent.futures
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from polarize.config import ConfigError, Experiment
from polarize.diagnostics import Result
from polarize.env import TIMEOUT, in_process, scheduler, timeout
from polarize.integrate import simulate
from polarize.serve.admission import current_notice, queue_notices
from polarize.serve.backend import Backend, Handle, Progress, limit_seconds
from polarize.serve.cluster import connected
from polarize.serve.errors import ClusterUnavailable, RunTimeout, ServerBusy, WorkerCrashed
from polarize.serve.inprocess import InProcess
from polarize.serve.local import LocalPool

__all__ = [
    "DEFAULT_TIMEOUT", "Calls", "RunTimeout", "ServerBusy", "WorkerCrashed", "backend", "call_all",
    "call_with_timeout", "idle", "prestart", "queue_notices", "run_with_timeout", "shutdown", "submit",
    "timeout_seconds",
]

DEFAULT_TIMEOUT = TIMEOUT[1]
"""Seconds a run may take before it is stopped (``POLARIZE_APP_TIMEOUT`` overrides)."""


def timeout_seconds() -> float:
    """The time limit in force: ``POLARIZE_APP_TIMEOUT`` or ``DEFAULT_TIMEOUT``.

    Raises ``ConfigError`` naming the variable when it is not a positive finite number.
    """
    return timeout()


def _in_process() -> bool:
    return os.name != "posix" or in_process()


_CORES = max(1, min(2, os.cpu_count() or 1))
_POOL = LocalPool(size=_CORES)
atexit.register(_POOL.shutdown)
_HERE = InProcess(size=_CORES)


def backend() -> Backend:
    """Where runs go now: the calling process (``POLARIZE_APP_INPROCESS``, or no POSIX pipes), the Dask
    cluster of ``POLARIZE_SCHEDULER`` (connected on first use), or this server's worker processes.

    Raises
    ------
    ConfigError
        ``POLARIZE_SCHEDULER`` is not an address.
    ClusterUnavailable
        It is, and its scheduler does not answer (``cluster.connected``).
    """
    if _in_process():
        return _HERE
    cluster = connected()
    return _POOL if cluster is None else cluster


def submit(function: Callable[..., Any], *args: Any, timeout: float | None = None, key: str | None = None,
           progress: Progress | None = None) -> Handle:
    """``function(*args)`` sent to ``backend()`` with the time limit ``timeout`` (``timeout_seconds()``
    when omitted); the handle to wait on. See ``polarize.serve.backend.Backend.submit``.

    Raises
    ------
    ValueError
        ``timeout`` is not a positive number of seconds.
    ConfigError, ClusterUnavailable
        As ``backend``.
    """
    seconds = limit_seconds(timeout_seconds() if timeout is None else timeout)
    return backend().submit(function, args, key=key, seconds=seconds, progress=progress)


def run_with_timeout(experiment: Experiment, timeout: float | None = None) -> Result:
    """``simulate(experiment)``, stopped after ``timeout`` seconds.

    Parameters
    ----------
    experiment : Experiment
    timeout : float, optional
        Seconds; ``timeout_seconds()`` when omitted.

    Returns
    -------
    Result
        As ``simulate`` returns it (``K`` saved times, ``n`` tokens).

    Raises
    ------
    RunTimeout
        The run took longer than ``timeout`` (its worker was killed and will be replaced).
    ConfigError, DegenerateStateError
        As raised by the engine; any other engine failure as ``RuntimeError``.
    WorkerCrashed
        The worker process died (e.g. out of memory).
    ServerBusy
        Too many runs are waiting for a worker already.
    """
    return call_with_timeout(simulate, experiment, timeout=timeout)


def call_with_timeout(function: Any, *args: Any, timeout: float | None = None) -> Any:
    """``function(*args)`` in a worker process, stopped after ``timeout`` seconds.

    For studies of several runs (``polarize.science.studies``): the whole study gets one
    time limit. ``function`` must be importable by name (a module-level function)
    and its arguments and result picklable.

    Parameters
    ----------
    function : callable
    *args
        Its arguments.
    timeout : float, optional
        Seconds; ``timeout_seconds()`` when omitted.

    Returns
    -------
    Whatever ``function`` returns.

    Raises
    ------
    RunTimeout, WorkerCrashed, ServerBusy, ConfigError, DegenerateStateError, RuntimeError
        As ``run_with_timeout``. The time limit starts when a worker takes the run, not while it waits
        (on a cluster too: when one of its workers begins it, seen within a second).
    ClusterUnavailable
        ``POLARIZE_SCHEDULER`` is set and its scheduler does not answer, was lost during the run, or has
        no workers (``NoWorkers``).
    """
    return submit(function, *args, timeout=timeout).wait()


_RELAY = 0.25  # seconds between looks at a batch's queued runs, to tell the caller their place


class Calls:
    """Calls handed to the workers together (``call_all``): their futures, in the order given.

    Attributes
    ----------
    futures : list of concurrent.futures.Future
        Each call's result, or the exception ``call_with_timeout`` raised for it.
    most : int
        How many of the calls hold a place in the admission at a time (waiting or running).
    """

    def __init__(self, calls: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]], timeout: float | None,
                 most: int):
        self.most = most
        self._places: dict[int, int] = {}  # call -> its last place in the queue told
        self._dropped = threading.Event()
        pool = concurrent.futures.ThreadPoolExecutor(most, thread_name_prefix="polarize-call")
        self.futures = [pool.submit(self._one, i, function, args, timeout)
                        for i, (function, args) in enumerate(calls)]
        pool.shutdown(wait=False)  # its threads end once the calls are done

    def _one(self, index: int, function: Callable[..., Any], args: tuple[Any, ...],
             timeout: float | None) -> Any:
        def placed(place: int) -> None:
            if self._dropped.is_set():  # the caller has gone: leave the queue (``Admission.enter``)
                raise concurrent.futures.CancelledError
            self._places[index] = place

        if self._dropped.is_set():
            raise concurrent.futures.CancelledError
        with queue_notices(placed):
            return call_with_timeout(function, *args, timeout=timeout)

    def completed(self) -> Iterator[int]:
        """Each call's index as its future is done, soonest first; waits in the calling thread.

        Meanwhile the notice ``queue_notices`` set for the calling thread hears the place of the
        batch's first call still queued, whenever it changes. A caller that stops iterating (or
        ``drop``s) drops the calls not started.
        """
        notice, told = current_notice(), None
        pending = set(range(len(self.futures)))
        try:
            while pending:
                concurrent.futures.wait([self.futures[i] for i in pending], timeout=_RELAY,
                                        return_when=concurrent.futures.FIRST_COMPLETED)
                for i in sorted(pending):
                    if self.futures[i].done():
                        pending.discard(i)
                        yield i
                # A call that has started keeps the last place it was told: a place told only falls.
                place = min((self._places[i] for i in pending if i in self._places), default=None)
                if notice is not None and place is not None and (told is None or place < told):
                    told = place
                    notice(place)
        finally:
            if pending:
                self.drop()

    def drop(self) -> None:
        """Cancel the calls not started (those running finish, their results unread)."""
        self._dropped.set()
        for future in self.futures:
            future.cancel()


def call_all(calls: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]], *,
             timeout: float | None = None) -> Calls:
    """Each ``function(*args)`` of ``calls`` as ``call_with_timeout`` makes it, all handed over at once.

    One caller's calls (a page's runs) are one visitor's: at most as many at a time as the workers
    have regular slots (``Calls.most``) wait or run in the admission, and each further call joins
    the queue only when one of them ends, behind whoever came meanwhile. A visitor alone has every
    worker; one who comes during a batch waits for one call of it, not for the whole batch; and the
    reserve's spare worker is never the batch's to fill.

    Parameters
    ----------
    calls : sequence of (function, args)
        As ``call_with_timeout`` takes them.
    timeout : float, optional
        Each call's own time limit in seconds (``timeout_seconds()`` when omitted).

    Returns
    -------
    Calls
        Their futures, in the order given (``Calls.completed`` yields them as they end).
    """
    return Calls(calls, timeout, _slots())


def _slots() -> int:
    """The regular slots of the admission the runs go through (the cluster's worker threads when
    ``POLARIZE_SCHEDULER`` is set)."""
    try:
        return max(1, backend().admission.size)
    except ClusterUnavailable:
        return 1  # each call says so in its future


def idle() -> bool:
    """Whether a run handed over now would start at once and still leave a regular slot free for
    someone else's (one slot: whether nothing runs). For work done ahead of need (``ui.starts``): it
    never makes a visitor's own run wait. False when the runs' backend cannot be reached."""
    try:
        admission = backend().admission
    except (ConfigError, ClusterUnavailable):
        return False
    running, waiting = admission.counts()
    return waiting == 0 and running < max(1, admission.size - 1)


def prestart() -> None:
    """Start the worker processes now, so that the first run does not wait for them to import (none when
    the runs go to a cluster). Reads the variable only: a scheduler that does not answer is said by the
    first run, in words, not by the app's start."""
    if not _in_process() and scheduler() is None:
        _POOL.prestart()


def shutdown() -> None:
    """Stop every worker process (they restart on the next run)."""
    _POOL.shutdown()
