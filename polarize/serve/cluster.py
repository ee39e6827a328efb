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
- **Live training** (``cluster_training``) goes to a worker the same way, its progress sent back
  through a Dask queue, and stops itself on the worker once past its time.
"""

from __future__ import annotations

import atexit
import math
import threading
import time
from typing import Any

from polarize.env import SCHEDULER, scheduler
from polarize.serve.admission import ServerBusy

__all__ = ["ClusterUnavailable", "NoWorkers", "cluster_call", "cluster_training", "connected", "disconnect",
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


class ClusterUnavailable(RuntimeError):
    """The Dask scheduler of ``POLARIZE_SCHEDULER`` cannot be reached, or was lost during a run."""


class NoWorkers(ClusterUnavailable):
    """The scheduler of ``POLARIZE_SCHEDULER`` answers but has no workers to run anything."""


class _Cluster:
    """One client of the scheduler for this server (made on first use), and the admission in front of it."""

    def __init__(self, address: str) -> None:
        from dask.distributed import Client

        self.address = address
        try:
            self.client = Client(address, timeout=f"{CONNECT_SECONDS}s", set_as_default=False)
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


def task_key(function: Any, args: tuple[Any, ...]) -> str:
    """The task key of ``function(*args)``: the same for the same call on any replica.

    Dask's ``tokenize`` hashes frozen dataclasses field by field and an experiment's arrays by their
    dtype, shape and bytes (``FrozenArray.__dask_tokenize__``), never by a pickle that carries a
    hash salted per process, so equal experiments give equal keys in any process.
    """
    from dask.base import tokenize

    return f"polarize-{function.__module__}.{function.__qualname__}-{tokenize(function, *args)}"


def _on_worker(started: str, function: Any, *args: Any) -> Any:
    """On a worker: ``function(*args)``, with the Dask event ``started`` set while it runs."""
    import contextlib

    from distributed import Event

    from polarize.serve.cluster_admission import run_making_room

    event = Event(started)
    with contextlib.suppress(Exception):  # bookkeeping: the run goes on without it
        event.set()
    try:
        return run_making_room(function, args)  # a heavy run leaves its thread to the reserve
    finally:
        with contextlib.suppress(Exception):
            event.clear()  # nobody waiting on it: the scheduler forgets it


def cluster_call(cluster: _Cluster, function: Any, args: tuple[Any, ...], seconds: float) -> Any:
    """``function(*args)`` on ``cluster``'s workers, waited for at most ``seconds`` once a worker runs it.

    Raises
    ------
    RunTimeout, WorkerCrashed, ServerBusy
        As ``runner.call_with_timeout``; ``WorkerCrashed`` when the cluster lost the run twice;
        ``ServerBusy`` also when no worker took the run within the admission's ``longest_wait``.
    NoWorkers
        The cluster has no workers (before the run, or while it waits for its result).
    ClusterUnavailable
        The scheduler was lost during the run.
    ConfigError, DegenerateStateError, RuntimeError
        As the engine raised them on the worker.
    """
    from distributed import Event
    from distributed.client import ClosedClientError, FutureCancelledError
    from distributed.scheduler import KilledWorker

    from polarize.serve.runner import RunTimeout, WorkerCrashed

    cluster.check()
    key = task_key(function, args)
    slot = cluster.admission.enter(key=key)  # at once, with no slot, while this key runs for another replica
    try:
        cluster.check()  # the workers may have gone while this run waited its turn
        try:
            started = Event(f"{key}-started", client=cluster.client)
            future = cluster.client.submit(_on_worker, started.name, function, *args, key=key, pure=True)
        except ClosedClientError:
            raise cluster.lost() from None
        submitted, began, workerless = time.monotonic(), None, None
        try:
            while True:
                end = math.inf if began is None else began + seconds
                try:
                    # Dask's TimeoutError is the builtin's: not done yet, unless the run itself raised it.
                    return future.result(timeout=max(0.01, min(_WAIT_STEP, end - time.monotonic())))
                except TimeoutError:
                    if future.done():
                        raise
                now = time.monotonic()
                if now >= end:
                    raise RunTimeout(seconds) from None
                try:
                    cluster.check()
                    workerless = None
                except NoWorkers:
                    workerless = now if workerless is None else workerless
                    if now - workerless >= REJOIN_SECONDS:
                        raise
                if began is None and cluster.running(started):
                    began = now
                elif began is None and now - submitted > cluster.admission.longest_wait:
                    raise ServerBusy(f"no worker of the cluster took this run in "
                                     f"{cluster.admission.longest_wait:.0f} s")
        except KilledWorker:
            raise WorkerCrashed("the cluster lost the workers running it") from None
        except (FutureCancelledError, ClosedClientError):
            raise cluster.lost() from None
        finally:
            future.release()  # this server's interest only: another replica waiting keeps the task
    finally:
        cluster.admission.leave(slot)


def _train_on_worker(config: dict[str, Any], queue_name: str, seconds: float) -> dict[str, Any]:
    """On a worker: train ``config`` (a ``SinksConfig`` as a dict), putting ``(done, total)`` on the
    Dask queue ``queue_name`` after every chunk; stopped with ``TimeoutError`` once past ``seconds``."""
    import time

    from distributed import Queue, get_client

    from polarize.sinks.config import SinksConfig
    from polarize.sinks.train import train

    queue, end = Queue(queue_name, client=get_client()), time.monotonic() + seconds

    def progress(done: int, total: int) -> None:
        queue.put((done, total))
        if time.monotonic() > end:
            raise TimeoutError(f"the run took longer than {seconds:g} s and was stopped")

    return train(SinksConfig.from_dict(config), progress=progress)


def cluster_training(cluster: _Cluster, config: dict[str, Any], progress: Any,
                     seconds: float) -> dict[str, Any]:
    """Train ``config`` on ``cluster``'s workers, ``progress(done, total)`` called here as it goes.

    The same run asked for by two replicas at once is trained once (one task key; they share its
    progress). Raises ``TimeoutError`` when the run takes longer than ``seconds`` (it stops itself
    on its worker too), ``NoWorkers`` and ``ClusterUnavailable`` as ``cluster_call``, and whatever the
    training raised.
    """
    from distributed import Queue
    from distributed.client import ClosedClientError, FutureCancelledError

    key = task_key(_train_on_worker, (config, seconds))
    queue = Queue(f"{key}-progress", client=cluster.client)

    def report() -> None:
        for _ in range(queue.qsize()):
            done, total = queue.get()
            if progress is not None:
                progress(done, total)

    cluster.check()
    slot = cluster.admission.enter()
    try:
        try:
            future = cluster.client.submit(_train_on_worker, config, queue.name, seconds, key=key, pure=False)
        except ClosedClientError:
            raise cluster.lost() from None
        end = time.monotonic() + seconds + CONNECT_SECONDS  # the worker stops it at ``seconds``
        try:
            while True:
                try:
                    record = future.result(timeout=0.5)
                except TimeoutError:  # not done yet (Dask's TimeoutError is the builtin's), or the run's own
                    if future.done():
                        raise
                    if time.monotonic() > end:
                        raise TimeoutError(f"the run took longer than {seconds:g} s and was stopped") \
                            from None
                    cluster.check()
                    report()
                    continue
                report()
                return record
        except (FutureCancelledError, ClosedClientError):
            raise cluster.lost() from None
        finally:
            future.release()
    finally:
        cluster.admission.leave(slot)
