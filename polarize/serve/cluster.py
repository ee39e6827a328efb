"""The app's runs on a Dask cluster: the scheduler ``POLARIZE_SCHEDULER`` names, as ``polarize sweep run
--scheduler`` uses it.

Unset, runs go to this server's own worker processes (``runner``). Set, ``runner.call_with_timeout``
hands each run to that scheduler's workers, so several replicas of the app behind a proxy share one
pool of workers, and a class past one machine is a matter of adding workers.

- **Computed once**: a run's task key is a digest of the function and its arguments (``task_key``),
  the same on every replica, and Dask hands one key's result to every client that asks for it: the
  same link opened on two replicas at once is computed once.
- **The time limit holds**: the engine's own budget stops a slow run on its worker (the pages pass
  one); past the hard limit this server stops waiting, lets go of the task (another replica waiting
  for the same key keeps it) and raises ``RunTimeout``. A result that comes later is never shown to
  anyone but a caller who asked for that same run. Both count from the run's start on a worker (the
  task sets a Dask event while it runs, seen here within ``_WAIT_STEP``), not from its submission:
  a run that waited in Dask's queue behind other replicas' runs gets its whole time. A run that no
  worker takes within the admission's ``longest_wait`` is given up as ``ServerBusy``.
- **A lost worker**: the scheduler runs the task again on another worker (Dask's
  ``distributed.scheduler.allowed-failures``, 3 by default); past that, ``WorkerCrashed`` says in one
  line that the cluster lost the run. A run that fails in the engine is not run again: it would fail
  the same way.
- **The queue**: runs wait their turn in one queue for the whole cluster, shared by every replica
  (``polarize.serve.cluster_admission``), with their place told: at most as many at once as the
  cluster has worker threads (so workers added for a course are used without a restart), and a spare
  slot for a light run while every running run is heavy.
- **A scheduler that cannot be reached** is tried by one visitor at a time: those who come meanwhile
  share that attempt's outcome, and a failure is remembered for ``RETRY_SECONDS``, each visitor of
  that while told at once in one line (``ClusterUnavailable``); the next visit after it tries again.
- **A scheduler lost**: Dask's client tries to reconnect for ``CONNECT_SECONDS`` and then closes for
  good; the runs it held fail in one line, and the next run drops the closed client and connects
  again, so a scheduler restarted (on the same address) is used without restarting this server.
- **No workers**: a scheduler without workers is said at once (``NoWorkers``); a run whose last worker
  goes while it waits is told so once no worker has come back for ``REJOIN_SECONDS`` (a worker that
  its nanny or orchestrator restarts joins again within seconds, and Dask runs the task again there),
  rather than waiting out its time limit.
- **Progress** (a live training's): the run's reports come back through a Dask queue, and the run
  stops itself on its worker once past its time.
- **The backend**: ``_Cluster`` is the Dask implementation of ``polarize.serve.backend.Backend``;
  every run goes through ``cluster_call``. A batch of tasks (``polarize sweep run``) takes a client of
  its own from ``dask_client``: to a scheduler by address, or to a local cluster started for it.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import math
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

from polarize.env import SCHEDULER, scheduler
from polarize.serve.admission import current_notice
from polarize.serve.backend import Progress, Relay
from polarize.serve.errors import ClusterUnavailable, NoWorkers, RunTimeout, ServerBusy, WorkerCrashed

__all__ = ["ClusterUnavailable", "NoWorkers", "cluster_call", "connected", "dask_client", "disconnect",
           "task_key"]

CONNECT_SECONDS = 10
"""Seconds to reach the scheduler before a run is refused in words."""

RETRY_SECONDS = 5.0
"""Seconds a failed connection is remembered: every run of that while is refused at once with its words."""

RESIZE_SECONDS = 5.0
"""Seconds between looks at the cluster's worker threads (the admission's slots); while it has none,
every run looks again."""

REJOIN_SECONDS = 30.0
"""Seconds a run waiting for its result lets the cluster be without workers before it is told
``NoWorkers``: a restarted worker (its nanny, an orchestrator) joins again within them, even on a busy
host, and takes the run up again."""

_WAIT_STEP = 1.0  # seconds between looks at the cluster's workers while a run waits for its result


def _client(address: str) -> Any:
    """A new client of the scheduler at ``address`` (not Dask's default client: each user holds its own)."""
    from dask.distributed import Client

    return Client(address, timeout=f"{CONNECT_SECONDS}s", set_as_default=False)


class _Cluster:
    """One client of the scheduler for this server (made on first use), and the admission in front of it:
    the Dask backend (``polarize.serve.backend``)."""

    here = False
    """Runs are made on the cluster's workers."""

    def __init__(self, address: str) -> None:
        self.address = address
        try:
            self.client = _client(address)
        except (OSError, TimeoutError) as exc:
            raise ClusterUnavailable(f"the Dask scheduler at {address} ({SCHEDULER}) cannot be reached "
                                     f"({type(exc).__name__})") from None
        from polarize.serve.cluster_admission import SharedAdmission

        self.admission = SharedAdmission(self.client, lost=self.lost)  # one queue for every replica
        self.looked, self.threads = -float("inf"), 0
        self.resize()

    def resize(self) -> None:
        """As many slots as the cluster has worker threads now (looked up at most every few seconds, at
        every call while it has none)."""
        if self.client.status != "running":
            return  # reconnecting: a look would wait out a connection attempt (the runs hear of the loss)
        now = time.monotonic()
        if now - self.looked < RESIZE_SECONDS and self.threads:
            return
        self.looked = now
        self.threads = self.client.scheduler_info(n_workers=0).get("total_threads", 0)
        self.admission.resize(max(1, self.threads))

    def check(self) -> None:
        """Raise ``NoWorkers`` when the cluster has no worker threads now (``resize``'s look)."""
        self.resize()
        if not self.threads:
            raise NoWorkers(f"the Dask scheduler at {self.address} ({SCHEDULER}) has no workers")

    def usable(self) -> bool:
        """Whether the client is connected or still reconnecting (Dask closes it for good once that fails)."""
        return self.client.status in ("running", "connecting", "newly-created")

    def running(self, started: Any) -> bool:
        """Whether the Dask event ``started`` is set (its run has started on a worker); False while the
        client reconnects (a look would wait out a connection attempt) or when the look fails."""
        if self.client.status != "running":
            return False
        try:
            return bool(started.is_set())
        except OSError:  # the scheduler went away meanwhile: the run's future hears of it
            return False

    def lost(self) -> ClusterUnavailable:
        """The error of a run the client could not finish: the scheduler went away."""
        return ClusterUnavailable(f"the connection to the Dask scheduler at {self.address} ({SCHEDULER}) "
                                  "was lost during this run")

    def close(self) -> None:
        self.client.close()

    def submit(self, function: Any, args: tuple[Any, ...], *, key: str | None = None, seconds: float,
               progress: Progress | None = None) -> Relay:
        """``Backend.submit``: ``cluster_call`` in a thread of its own (``key``: ``task_key`` by default)."""
        args = tuple(args)
        return Relay.start(lambda relay: cluster_call(self, function, args, seconds, key=key, relay=relay),
                           progress, current_notice())


_LOCK = threading.Condition()  # guards the three below; told when an attempt ends
_CLUSTERS: dict[str, _Cluster] = {}
_FAILED: dict[str, tuple[float, str]] = {}  # address -> (when, the words) of its last failed attempt
_CONNECTING: set[str] = set()  # addresses an attempt is under way to (one at a time)


def connected() -> _Cluster | None:
    """The cluster the app's runs go to (connected on first use); None when ``POLARIZE_SCHEDULER`` is unset.

    A client Dask has closed (its scheduler lost for longer than it tries to reconnect) is dropped and
    made again. One attempt at a time: a caller who comes during one waits for its outcome, and a
    failure is raised again at once to every caller for ``RETRY_SECONDS``.

    Raises
    ------
    ConfigError
        ``POLARIZE_SCHEDULER`` is not an address.
    ClusterUnavailable
        The scheduler does not answer within ``CONNECT_SECONDS`` (now, or in an attempt less than
        ``RETRY_SECONDS`` ago), or Dask distributed is not installed.
    """
    address = scheduler()
    if address is None:
        return None
    dropped: list[_Cluster] = []  # closed by Dask already: closed here too, outside the lock
    try:
        with _LOCK:
            while True:
                here = _CLUSTERS.get(address)
                if here is not None and here.usable():
                    return here
                if here is not None:
                    dropped.append(_CLUSTERS.pop(address))
                failed = _FAILED.get(address)
                if failed is not None and time.monotonic() - failed[0] < RETRY_SECONDS:
                    raise ClusterUnavailable(failed[1])
                if address not in _CONNECTING:
                    break
                _LOCK.wait()
            _CONNECTING.add(address)
    finally:
        for old in dropped:
            old.close()
    try:
        made = _Cluster(address)
    except (ClusterUnavailable, ImportError) as exc:
        words = str(exc) if isinstance(exc, ClusterUnavailable) else \
            f"{SCHEDULER} is set but Dask distributed is not installed (pip install 'polarize[sweep]')"
        with _LOCK:
            _FAILED[address] = (time.monotonic(), words)
            _CONNECTING.discard(address)
            _LOCK.notify_all()
        raise ClusterUnavailable(words) from None
    except BaseException:
        with _LOCK:
            _CONNECTING.discard(address)
            _LOCK.notify_all()
        raise
    with _LOCK:
        _CLUSTERS[address] = made
        _FAILED.pop(address, None)
        _CONNECTING.discard(address)
        _LOCK.notify_all()
    return made


def disconnect() -> None:
    """Close this server's clients of the cluster and forget failed attempts (the next run connects again)."""
    with _LOCK:
        clusters = list(_CLUSTERS.values())
        _CLUSTERS.clear()
        _FAILED.clear()
    for cluster in clusters:
        cluster.close()


atexit.register(disconnect)


@contextlib.contextmanager
def dask_client(address: str | None = None, *, workers: int | None = None) -> Iterator[Any]:
    """A Dask client of its own for a batch of tasks (a sweep's), closed on leaving.

    Parameters
    ----------
    address : str, optional
        A running scheduler's address (checked already: ``env.scheduler_address``). Default: a
        ``LocalCluster`` of ``workers`` one-thread worker processes started here, stopped on leaving.
    workers : int, optional
        The local cluster's worker processes (default one per core).

    Raises
    ------
    ClusterUnavailable
        The scheduler at ``address`` cannot be reached (``cannot reach ADDRESS: why``, one line).
    """
    from dask.distributed import Client, LocalCluster

    if address is not None:
        try:
            client, local = _client(address), None
        except Exception as exc:  # unreachable, refused, a port out of range: one line
            reason = " ".join(str(exc).split())[:200] or type(exc).__name__
            raise ClusterUnavailable(f"cannot reach {address}: {reason}") from None
    else:
        with _stderr_aside():
            local = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                 processes=True, dashboard_address=":0", silence_logs=logging.ERROR)
        client = Client(local, set_as_default=False)
    try:
        yield client
    finally:
        client.close()
        if local is not None:
            local.close()


@contextlib.contextmanager
def _stderr_aside() -> Iterator[None]:
    """While the local cluster starts, standard error (file descriptor 2) goes to a file of its own.

    Its worker processes keep it as theirs: a Ctrl-C reaches the terminal's whole process group,
    and workers caught importing printed some 70 lines of tracebacks after "interrupted". Their
    failures in a task come back as rows; this process's own standard error is restored at once.
    """
    try:
        saved = os.dup(2)
    except OSError:  # no standard error to keep aside
        yield
        return
    with tempfile.TemporaryFile() as aside:
        sys.stderr.flush()
        os.dup2(aside.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def task_key(function: Any, args: tuple[Any, ...]) -> str:
    """The task key of ``function(*args)``: the same for the same call on any replica.

    Dask's ``tokenize`` hashes frozen dataclasses field by field and an experiment's arrays by their
    dtype, shape and bytes (``FrozenArray.__dask_tokenize__``), never by a pickle that carries a
    hash salted per process, so equal experiments give equal keys in any process.
    """
    from dask.base import tokenize

    return f"polarize-{function.__module__}.{function.__qualname__}-{tokenize(function, *args)}"


def _on_worker(started: str, reports: str | None, seconds: float, function: Any, *args: Any) -> Any:
    """On a worker: ``function(*args)``, with the Dask event ``started`` set while it runs; with
    ``progress=`` a reporter that puts ``(done, total)`` on the Dask queue ``reports`` (when named) and
    stops the run with ``RunTimeout`` once past ``seconds``."""
    import contextlib
    import time

    from distributed import Event, Queue, get_client

    from polarize.serve.cluster_admission import run_making_room

    event = Event(started)
    with contextlib.suppress(Exception):  # bookkeeping: the run goes on without it
        event.set()
    try:
        if reports is None:
            return run_making_room(function, args)  # a heavy run leaves its thread to the reserve
        queue, end = Queue(reports, client=get_client()), time.monotonic() + seconds

        def progress(done: int, total: int) -> None:
            queue.put((int(done), int(total)))
            if time.monotonic() > end:
                raise RunTimeout(seconds)

        return run_making_room(lambda *given: function(*given, progress=progress), args)
    finally:
        with contextlib.suppress(Exception):
            event.clear()  # nobody waiting on it: the scheduler forgets it


def cluster_call(cluster: _Cluster, function: Any, args: tuple[Any, ...], seconds: float, *,
                 key: str | None = None, relay: Relay | None = None) -> Any:
    """``function(*args)`` on ``cluster``'s workers, waited for at most ``seconds`` once a worker runs it.

    The Dask backend's one call path (``_Cluster.submit`` runs it in a thread of its own). ``relay``
    hears the run's place in the queue and its progress reports (the function is then called with
    ``progress=``), and may cancel it: this server lets go of the task (within ``_WAIT_STEP``), and
    another replica waiting for the same key keeps it. A task the scheduler cancels while this
    server's client is connected is sent again, once (``_Forgotten``).

    Raises
    ------
    RunTimeout, WorkerCrashed, ServerBusy
        As ``runner.call_with_timeout``; ``WorkerCrashed`` when the cluster lost the run twice;
        ``ServerBusy`` also when no worker took the run within the admission's ``longest_wait``.
    NoWorkers
        The cluster has no workers (before the run, or while it waits for its result).
    ClusterUnavailable
        The scheduler was lost during the run.
    RunCancelled
        ``relay`` was cancelled.
    ConfigError, DegenerateStateError, RuntimeError
        As the engine raised them on the worker.
    """
    from distributed import Event, Queue
    from distributed.client import ClosedClientError

    relay = relay or Relay()
    cluster.check()
    key = key or task_key(function, args)
    # At once, with no slot, while this key runs for another replica.
    slot = cluster.admission.enter(relay.place, check=relay.check, key=key)
    try:
        relay.check()
        cluster.check()  # the workers may have gone while this run waited its turn
        attempts = 0
        while True:
            attempts += 1
            # Sent again under a key of its own: the client hands out its cancelled future for the old one.
            sent = key if attempts == 1 else f"{key}-again"
            try:
                started = Event(f"{sent}-started", client=cluster.client)
                reports = Queue(f"{sent}-progress", client=cluster.client) if relay.wants_progress else None
                future = cluster.client.submit(_on_worker, started.name, reports and reports.name, seconds,
                                               function, *args, key=sent, pure=True)
            except ClosedClientError:
                raise cluster.lost() from None
            try:
                return _await(cluster, future, started, reports, seconds, relay)
            except _Forgotten:
                if attempts == 2:
                    raise cluster.lost() from None
            finally:
                future.release()  # this server's interest only: another replica waiting keeps the task
    finally:
        cluster.admission.leave(slot)


class _Forgotten(Exception):
    """The scheduler cancelled the run's task while this server's client is connected (it forgot the
    client's futures when their connection broke for a moment on a loaded host, or another client
    cancelled the key): the run is sent again, once."""


_PENDING = object()


def _result_within(future: Any, finished: threading.Event, seconds: float) -> Any:
    """``future``'s result if it is done within ``seconds``, else ``_PENDING``; Dask's
    ``FutureCancelledError`` when it was cancelled meanwhile.

    Waits on ``finished`` (set by the future's done callback), never on Dask's own
    ``result(timeout=...)``: in a course of 1,000 (benchmarks/replicas.py) that raised its wait's
    ``TimeoutError`` for runs already done, and an ``UnboundLocalError`` from inside Dask
    (dask/distributed#8514), each shown to a visitor as the engine failing.
    """
    from distributed.client import FutureCancelledError

    finished.wait(seconds)
    if future.cancelled():  # the scheduler forgot it, or the client lost the scheduler: ``_await`` tells
        raise FutureCancelledError(future.key, "cancelled while this server waited for it")
    if not future.done():
        return _PENDING
    return future.result()


def _pass_on(cluster: _Cluster, reports: Any, relay: Relay) -> None:
    """The run's reports so far on the Dask queue ``reports`` (None: none asked for), passed on to ``relay``
    (not while the client reconnects: a look would wait out a connection attempt)."""
    if reports is not None and cluster.client.status == "running":
        for _ in range(reports.qsize()):
            relay.report(*reports.get())


def _workerless(cluster: _Cluster, now: float, since: float | None) -> float | None:
    """Since when the cluster has been without workers (None: it has some now); raises ``NoWorkers``
    once that is ``REJOIN_SECONDS``."""
    try:
        cluster.check()
        return None
    except NoWorkers:
        since = now if since is None else since
        if now - since >= REJOIN_SECONDS:
            raise
        return since


def _await(cluster: _Cluster, future: Any, started: Any, reports: Any, seconds: float, relay: Relay) -> Any:
    """``future``'s result, its reports (the Dask queue ``reports``, or None) passed on to ``relay`` as
    they come; raises as ``cluster_call``."""
    from distributed.client import ClosedClientError, FutureCancelledError
    from distributed.scheduler import KilledWorker

    submitted, began, workerless = time.monotonic(), None, None
    finished = threading.Event()
    future.add_done_callback(lambda _: finished.set())
    try:
        while True:
            end = math.inf if began is None else began + seconds
            result = _result_within(future, finished, max(0.01, min(_WAIT_STEP, end - time.monotonic())))
            _pass_on(cluster, reports, relay)
            if result is not _PENDING:
                return result
            relay.check()
            now = time.monotonic()
            if now >= end:
                raise RunTimeout(seconds) from None
            workerless = _workerless(cluster, now, workerless)
            if began is None and cluster.running(started):
                began = now
            elif began is None and now - submitted > cluster.admission.longest_wait:
                raise ServerBusy(f"no worker of the cluster took this run in "
                                 f"{cluster.admission.longest_wait:.0f} s")
    except KilledWorker:
        raise WorkerCrashed("the cluster lost the workers running it") from None
    except (FutureCancelledError, ClosedClientError):
        if future.cancelled() and cluster.client.status == "running":
            raise _Forgotten from None
        raise cluster.lost() from None
