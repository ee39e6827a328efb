"""Where the app's runs are made: one small protocol, three implementations.

A ``Backend`` takes a call with ``submit(function, args, key=..., seconds=..., progress=...)`` and
gives back a ``Handle`` to ``wait`` on (its result, or the error that stopped it), ``cancel``, and
read the ``progress`` the run reported. The three:

- ``polarize.serve.local.LocalPool``: this server's own worker processes (the default);
- ``polarize.serve.cluster``'s client of a Dask scheduler (``POLARIZE_SCHEDULER``);
- ``polarize.serve.inprocess.InProcess``: the calling process (``POLARIZE_APP_INPROCESS``).

Each has its admission queue (``polarize.serve.admission``) in front of it, so a caller waiting its
turn is told its place (``queue_notices``) however its run is made. Page runs, studies and live
trainings all go through it; ``polarize.serve.runner.backend`` chooses one. What can go wrong around
a run is one of ``polarize.serve.errors``'s, the same type from every backend.

A function that reports progress is called as ``function(*args, progress=report)`` when the caller
passed ``progress``; ``report(done, total)`` reaches the caller's ``progress(done, total)`` in the
thread that waits (a page's script thread), one call per report, in order.
"""

from __future__ import annotations

import math
import queue
import threading
from collections.abc import Callable
from typing import Any, Protocol

from polarize.serve.errors import RunCancelled

__all__ = ["Backend", "Handle", "Progress", "Relay", "limit_seconds"]

Progress = Callable[[int, int], None]
"""``progress(done, total)``: how far a run has come (e.g. optimizer steps)."""


class Handle(Protocol):
    """A run submitted to a backend."""

    def wait(self) -> Any:
        """The run's result, once it has one; raises what stopped it (``polarize.serve.errors``'s, or
        the run's own error). Called again, gives the same outcome."""

    def cancel(self) -> None:
        """Stop the run (``wait`` then raises ``RunCancelled``); nothing once it has ended."""

    def progress(self) -> tuple[int, int] | None:
        """The run's last report ``(done, total)``, or None before its first."""


class Backend(Protocol):
    """What makes runs: this server's worker processes, a Dask cluster, or the calling process."""

    here: bool
    """Whether runs are made on this host (a host's own limits, such as one live training at a time,
    then apply)."""

    def submit(self, function: Callable[..., Any], args: tuple[Any, ...], *, key: str | None = None,
               seconds: float, progress: Progress | None = None) -> Handle:
        """Make ``function(*args)``, stopped once it has run ``seconds`` (counted from its start, not
        while it waits its turn).

        Parameters
        ----------
        function : callable
            A module-level function (it may be sent to another process by name).
        args : tuple
            Its arguments (picklable).
        key : str, optional
            The run's name, the same for the same call in any process (``cluster.task_key`` when
            omitted): a backend that shares results computes one key once.
        seconds : float
            The time limit (``inf``: none).
        progress : callable, optional
            ``progress(done, total)``, called in the waiting thread as the run reports; the function
            is then called with ``progress=`` a reporter.
        """


def limit_seconds(timeout: float) -> float:
    """``timeout`` as a time limit in seconds; ``ValueError`` in words when it is not a positive number
    (``inf``: none)."""
    seconds = float(timeout)
    if math.isnan(seconds) or seconds <= 0:
        raise ValueError(f"timeout must be a positive number of seconds (inf for none); got {timeout!r}")
    return seconds


_PLACE, _PROGRESS, _DONE = "place", "progress", "done"


class Relay:
    """A ``Handle`` whose run is made by a thread of its own, its events passed to the thread that waits.

    The making thread (``start``'s ``make``) calls ``place`` as its run waits its turn, ``report`` as it
    goes, and returns the result or raises; ``stopper`` names what ``cancel`` calls to stop it (a worker
    process to kill). The waiting thread calls the caller's ``notice`` and ``progress`` with them: a
    page's widgets are drawn from its own script thread. Either of those raising (Streamlit stopping
    the script for a rerun) cancels the run.
    """

    def __init__(self, progress: Progress | None = None, notice: Callable[[int], None] | None = None):
        self._progress, self._notice = progress, notice
        self._events: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._stop: Callable[[], None] | None = None
        self._outcome: tuple[bool, Any] | None = None
        self.cancelled = False
        self.last: tuple[int, int] | None = None

    @classmethod
    def start(cls, make: Callable[[Relay], Any], progress: Progress | None = None,
              notice: Callable[[int], None] | None = None) -> Relay:
        """A relay whose run ``make(relay)`` starts now in a daemon thread."""
        relay = cls(progress, notice)
        threading.Thread(target=relay._make, args=(make,), daemon=True, name="polarize-run").start()
        return relay

    def _make(self, make: Callable[[Relay], Any]) -> None:
        try:
            outcome = (True, make(self))
        except BaseException as exc:  # every failure goes to the waiting thread
            outcome = (False, RunCancelled("the run was cancelled") if self.cancelled else exc)
        self._events.put((_DONE, outcome))

    # The making thread's side.

    def place(self, place: int) -> None:
        """The run's place in its queue (1: next); raises ``RunCancelled`` once cancelled (the run then
        leaves the queue)."""
        self.check()
        self._events.put((_PLACE, place))

    def report(self, done: int, total: int) -> None:
        """The run has come to ``done`` of ``total``."""
        self.last = (int(done), int(total))
        self._events.put((_PROGRESS, self.last))

    @property
    def wants_progress(self) -> bool:
        """Whether the caller listens to the run's reports (the function is then given a reporter)."""
        return self._progress is not None

    def check(self) -> None:
        """Raise ``RunCancelled`` when the run has been cancelled."""
        if self.cancelled:
            raise RunCancelled("the run was cancelled")

    def stopper(self, stop: Callable[[], None] | None) -> None:
        """``stop()`` stops the run from now on (None: nothing to stop); called at once if cancelled."""
        with self._lock:
            self._stop = stop
            cancelled = self.cancelled
        if cancelled and stop is not None:
            stop()

    # The caller's side (``Handle``).

    def cancel(self) -> None:
        with self._lock:
            if self._outcome is not None:
                return
            self.cancelled, stop = True, self._stop
        if stop is not None:
            stop()

    def progress(self) -> tuple[int, int] | None:
        return self.last

    def wait(self) -> Any:
        while self._outcome is None:
            kind, value = self._events.get()
            if kind == _DONE:
                with self._lock:
                    self._outcome = value
                break
            tell = self._notice if kind == _PLACE else self._progress
            if tell is None:
                continue
            try:
                tell(*value) if kind == _PROGRESS else tell(value)
            except BaseException:
                self.cancel()
                raise
        ok, value = self._outcome
        if ok:
            return value
        raise value
