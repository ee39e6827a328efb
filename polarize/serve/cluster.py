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
  anyone but a caller who asked for that same run.
- **A lost worker**: the scheduler runs the task again on another worker (Dask's
  ``distributed.scheduler.allowed-failures``, 3 by default); past that, ``WorkerCrashed`` says in one
  line that the cluster lost the run. A run that fails in the engine is not run again: it would fail
  the same way.
- **The queue**: runs still wait their turn in this server's ``Admission``, with their place told,
  at most as many at once as the cluster has worker threads (looked up again every
  ``RESIZE_SECONDS``, so workers added for a course are used without a restart).
- **Live training** (``cluster_training``) goes to a worker the same way, its progress sent back
  through a Dask queue, and stops itself on the worker once past its time.
"""

from __future__ import annotations

import atexit
import threading
import time
from typing import Any

from polarize.env import SCHEDULER, scheduler
from polarize.serve.admission import Admission

__all__ = ["ClusterUnavailable", "cluster_call", "cluster_training", "connected", "disconnect", "task_key"]

CONNECT_SECONDS = 10
"""Seconds to reach the scheduler before a run is refused in words."""

RESIZE_SECONDS = 5.0
"""Seconds between looks at the cluster's worker threads (the admission's slots)."""


class ClusterUnavailable(RuntimeError):
    """The Dask scheduler of ``POLARIZE_SCHEDULER`` cannot be reached."""


class _Cluster:
    """One client of the scheduler for this server (made on first use), and the admission in front of it."""

    def __init__(self, address: str) -> None:
        from dask.distributed import Client

        self.address = address
        try:
            self.client = Client(address, timeout=f"{CONNECT_SECONDS}s", set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise ClusterUnavailable(f"cannot reach the Dask scheduler at {address} ({SCHEDULER}): "
                                     f"{type(exc).__name__}") from None
        self.admission = Admission(1, reserve=0)
        self.looked = -float("inf")
        self.resize()

    def resize(self) -> None:
        """As many slots as the cluster has worker threads now (looked up at most every few seconds)."""
        now = time.monotonic()
        if now - self.looked < RESIZE_SECONDS:
            return
        self.looked = now
        threads = self.client.scheduler_info(n_workers=0).get("total_threads", 0)
        self.admission.resize(max(1, threads))

    def close(self) -> None:
        self.client.close()


_LOCK = threading.Lock()
_CLUSTERS: dict[str, _Cluster] = {}


def connected() -> _Cluster | None:
    """The cluster the app's runs go to (connected on first use); None when ``POLARIZE_SCHEDULER`` is unset.

    Raises
    ------
    ConfigError
        ``POLARIZE_SCHEDULER`` is not an address.
    ClusterUnavailable
        The scheduler does not answer within ``CONNECT_SECONDS``, or Dask distributed is not installed.
    """
    address = scheduler()
    if address is None:
        return None
    with _LOCK:
        if address not in _CLUSTERS:
            try:
                _CLUSTERS[address] = _Cluster(address)
            except ImportError:
                raise ClusterUnavailable(f"{SCHEDULER} is set but Dask distributed is not installed "
                                         "(pip install 'polarize[sweep]')") from None
        return _CLUSTERS[address]


def disconnect() -> None:
    """Close this server's clients of the cluster (the next run connects again)."""
    with _LOCK:
        while _CLUSTERS:
            _CLUSTERS.popitem()[1].close()


atexit.register(disconnect)


def task_key(function: Any, args: tuple[Any, ...]) -> str:
    """The task key of ``function(*args)``: the same for the same call on any replica.

    Dask's ``tokenize`` hashes frozen dataclasses field by field and an experiment's arrays by their
    dtype, shape and bytes (``FrozenArray.__dask_tokenize__``), never by a pickle that carries a
    hash salted per process, so equal experiments give equal keys in any process.
    """
    from dask.base import tokenize

    return f"polarize-{function.__module__}.{function.__qualname__}-{tokenize(function, *args)}"


def cluster_call(cluster: _Cluster, function: Any, args: tuple[Any, ...], seconds: float) -> Any:
    """``function(*args)`` on ``cluster``'s workers, waited for at most ``seconds`` once admitted.

    Raises
    ------
    RunTimeout, WorkerCrashed, ServerBusy
        As ``runner.call_with_timeout``; ``WorkerCrashed`` when the cluster lost the run twice.
    ConfigError, DegenerateStateError, RuntimeError
        As the engine raised them on the worker.
    """
    from dask.distributed import TimeoutError as DaskTimeout
    from distributed.scheduler import KilledWorker

    from polarize.serve.runner import RunTimeout, WorkerCrashed

    cluster.resize()
    slot = cluster.admission.enter()
    try:
        future = cluster.client.submit(function, *args, key=task_key(function, args), pure=True)
        try:
            return future.result(timeout=seconds)
        except (DaskTimeout, TimeoutError):
            raise RunTimeout(seconds) from None
        except KilledWorker:
            raise WorkerCrashed("the cluster lost the workers running it") from None
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
    on its worker too), and whatever the training raised.
    """
    import time

    from distributed import Queue

    key = task_key(_train_on_worker, (config, seconds))
    queue = Queue(f"{key}-progress", client=cluster.client)

    def report() -> None:
        for _ in range(queue.qsize()):
            done, total = queue.get()
            if progress is not None:
                progress(done, total)

    cluster.resize()
    slot = cluster.admission.enter()
    try:
        future = cluster.client.submit(_train_on_worker, config, queue.name, seconds, key=key, pure=False)
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
                    report()
                    continue
                report()
                return record
        finally:
            future.release()
    finally:
        cluster.admission.leave(slot)
