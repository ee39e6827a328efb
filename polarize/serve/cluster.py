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
  at most as many at once as the cluster has worker threads when this server first connected.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

from polarize.env import SCHEDULER, scheduler
from polarize.serve.admission import Admission

__all__ = ["ClusterUnavailable", "cluster_call", "connected", "disconnect", "task_key"]

CONNECT_SECONDS = 10
"""Seconds to reach the scheduler before a run is refused in words."""


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
        threads = sum(w.get("nthreads", 1) for w in self.client.scheduler_info()["workers"].values())
        self.admission = Admission(max(1, threads), reserve=0)

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

    Dask's ``tokenize`` hashes frozen dataclasses field by field and arrays by their bytes, so
    equal experiments give equal keys in any process.
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
