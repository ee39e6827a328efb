"""The calling process as a backend (``polarize.serve.backend``): ``POLARIZE_APP_INPROCESS``, and where
there are no POSIX pipes for worker processes.

A run is made when it is waited for, in the waiting thread, once the admission queue lets it in:
nothing to send, and a page's own clock and patches hold for it. A Python thread cannot be stopped
inside a computation, so the time limit holds only where the run reports its progress (the report
past the limit raises ``RunTimeout``), and a cancel only before it starts or at a report; the
engine's own budget is what stops a page's run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from polarize.serve.admission import Admission
from polarize.serve.backend import Progress
from polarize.serve.errors import RunCancelled, RunTimeout

__all__ = ["InProcess"]


class _Here:
    """A ``Handle`` whose run is made by the first ``wait``."""

    def __init__(self, admission: Admission, function: Callable[..., Any], args: tuple[Any, ...],
                 seconds: float, progress: Progress | None):
        self.admission = admission
        self.function, self.args, self.seconds, self._progress = function, args, seconds, progress
        self.cancelled, self.last = False, None
        self._outcome: tuple[bool, Any] | None = None
        self._lock = threading.Lock()

    def cancel(self) -> None:
        self.cancelled = True

    def progress(self) -> tuple[int, int] | None:
        return self.last

    def wait(self) -> Any:
        with self._lock:
            if self._outcome is None:
                try:
                    self._outcome = (True, self._make())
                except Exception as exc:
                    self._outcome = (False, exc)
        ok, value = self._outcome
        if ok:
            return value
        raise value

    def _check(self) -> None:
        if self.cancelled:
            raise RunCancelled("the run was cancelled")

    def _make(self) -> Any:
        slot = self.admission.enter(check=self._check)  # its place told in this thread, as it waits
        try:
            self._check()
            return self._call()
        finally:
            self.admission.leave(slot)

    def _call(self) -> Any:
        if self._progress is None:
            return self.function(*self.args)
        end = time.monotonic() + self.seconds

        def report(done: int, total: int) -> None:
            self.last = (int(done), int(total))
            self._progress(*self.last)
            self._check()
            if time.monotonic() > end:
                raise RunTimeout(self.seconds)

        return self.function(*self.args, progress=report)


class InProcess:
    """Runs made in the calling process, each by the thread that waits for it, at most ``size`` at once
    (the others wait their turn in ``admission``)."""

    here = True
    """Runs are made on this host."""

    def __init__(self, size: int):
        self.admission = Admission(size, reserve=0)

    def submit(self, function: Callable[..., Any], args: tuple[Any, ...], *, key: str | None = None,
               seconds: float, progress: Progress | None = None) -> _Here:
        """``Backend.submit``; the run is made by the first ``wait`` (``key`` unused)."""
        return _Here(self.admission, function, tuple(args), seconds, progress)
