"""Who runs next on the worker pool: one queue, a global limit, and a lane that long runs cannot fill.

A hosted demo serves a whole class from a few worker processes. Every run
takes a ticket and waits in one first-come first-served queue for a slot; at
most ``size`` regular slots (the pool's workers) are in use at once, and the
caller is told its place in the queue whenever it changes. A run holding a
slot for longer than ``heavy_after`` seconds counts as heavy: when every
running run is heavy, the head of the queue gets a spare slot (a reserve
worker) instead of waiting, at most ``reserve`` of them at a time. So a couple
of long links (a huge horizon under cross-entropy) cannot hold up the light
runs behind them for their whole time limit.

A run is refused (``ServerBusy``) rather than queued for minutes: when the runs
ahead of it, at the length runs have lately taken, would keep it waiting longer
than ``longest_wait`` seconds. So the queue is as long as the work allows: a
class's light runs (a tenth of a second each) all wait their turn, while a few
long ones fill it. ``most_waiting`` bounds the runs parked here whatever the
estimate (each is a waiting thread of the server).
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from polarize.serve.errors import ServerBusy

__all__ = ["HEAVY_AFTER", "LONGEST_WAIT", "MOST_WAITING", "Admission", "Queue", "ServerBusy", "Slot",
           "current_notice", "queue_notices"]

HEAVY_AFTER = 1.5
"""Seconds after which a running run counts as heavy (the Explorer's default run takes about 0.1 s)."""

LONGEST_WAIT = 60.0
"""Seconds of runs ahead (at their recent typical length) beyond which a new run is refused."""

MOST_WAITING = 500
"""Waiting runs beyond which new ones are refused, however short runs have been."""

_RECENT = 0.2  # weight of the latest run in the typical run length (an exponential moving average)

_RECHECK = 0.25  # seconds between looks at the running runs while waiting (they turn heavy with time)


_NOTICE: contextvars.ContextVar[Callable[[int], None] | None] = contextvars.ContextVar("notice", default=None)


@contextlib.contextmanager
def queue_notices(notice: Callable[[int], None]) -> Iterator[None]:
    """While inside, runs made by this thread that must wait call ``notice(k)`` with their place ``k``.

    ``k`` is 1 for the next run to start; ``notice`` is called again whenever it changes
    (not at all when a slot is free at once). An exception from ``notice`` cancels the wait.
    """
    token = _NOTICE.set(notice)
    try:
        yield
    finally:
        _NOTICE.reset(token)


def current_notice() -> Callable[[int], None] | None:
    """The ``notice`` that ``queue_notices`` set for this thread, or None: read where a run is submitted,
    to be called by the thread that waits for it (``polarize.serve.backend.Relay``)."""
    return _NOTICE.get()


@dataclass(frozen=True, kw_only=True)
class Slot:
    """A permission to run: ``spare`` when it is one of the reserve's."""

    ticket: int
    spare: bool


class Queue:
    """The bookkeeping of an admission, without any waiting: tickets in order, the slots in use.

    A first-come first-served queue over ``size`` regular slots and ``reserve`` spare ones. Not
    thread-safe: ``Admission`` holds its lock around every call, and the cluster's admission
    (``polarize.serve.cluster_admission``) calls it from the Dask scheduler's event loop.

    Parameters
    ----------
    size : int
        Regular slots: the global limit on concurrent runs, besides the reserve.
    reserve : int
        Spare slots, lent only while every running run has lasted ``heavy_after`` seconds.
    heavy_after : float
    longest_wait : float
        Seconds a new run may expect to wait (the runs ahead of it over ``size`` slots, each as
        long as runs have lately been); past that it is refused.
    most_waiting : int
    """

    def __init__(self, size: int, *, reserve: int = 1, heavy_after: float = HEAVY_AFTER,
                 longest_wait: float = LONGEST_WAIT, most_waiting: int = MOST_WAITING):
        self.size, self.reserve = size, reserve
        self.heavy_after, self.longest_wait, self.most_waiting = heavy_after, longest_wait, most_waiting
        self.typical: float | None = None  # seconds a run has lately held its slot; None before any
        self._running: dict[int, tuple[float, bool]] = {}  # ticket -> (start time, spare)
        self._waiting: collections.deque[int] = collections.deque()
        self._tickets = itertools.count(1)

    def take(self) -> int:
        """A new ticket at the back of the queue.

        Raises
        ------
        ServerBusy
            ``most_waiting`` runs are waiting already, or those ahead would take over ``longest_wait``.
        """
        self._refuse_if_full()
        ticket = next(self._tickets)
        self._waiting.append(ticket)
        return ticket

    def place(self, ticket: int) -> int | None:
        """The place of a waiting ``ticket`` (1: next), None when it is not waiting."""
        try:
            return self._waiting.index(ticket) + 1
        except ValueError:
            return None

    def slot(self, ticket: int) -> Slot | None:
        """The slot ``ticket`` holds, None when it holds none."""
        running = self._running.get(ticket)
        return None if running is None else Slot(ticket=ticket, spare=running[1])

    def start(self) -> Slot | None:
        """The head's slot when one is free for it now (it leaves the queue), else None."""
        spare = self._free_slot() if self._waiting else None
        if spare is None:
            return None
        ticket = self._waiting.popleft()
        self._running[ticket] = (time.monotonic(), spare)
        return Slot(ticket=ticket, spare=spare)

    def drop(self, ticket: int) -> None:
        """``ticket`` leaves the queue without a slot (its wait was cancelled)."""
        if ticket in self._waiting:
            self._waiting.remove(ticket)

    def finish(self, ticket: int) -> None:
        """``ticket``'s slot is given back (however its run ended); its length counts in ``typical``."""
        started = self._running.pop(ticket, None)
        if started is not None:
            held = time.monotonic() - started[0]
            self.typical = held if self.typical is None else (1 - _RECENT) * self.typical + _RECENT * held

    def expected_wait(self) -> float:
        """Seconds a run arriving now may expect to wait: 0 until a run has been timed."""
        if self.typical is None:
            return 0.0
        ahead = len(self._waiting) + max(0, len(self._running) - self.size + 1)
        return ahead * self.typical / max(1, self.size)

    def _refuse_if_full(self) -> None:
        waiting = len(self._waiting)
        if waiting >= self.most_waiting:
            raise ServerBusy(f"{waiting} runs are waiting already (at most {self.most_waiting})")
        wait = self.expected_wait()
        if wait > self.longest_wait:
            raise ServerBusy(f"{waiting} runs are waiting already, about {wait:.0f} s of work "
                             f"(at most {self.longest_wait:.0f} s)")

    def _free_slot(self) -> bool | None:
        """False for a regular slot, True for a spare one, None when the head must wait."""
        regular = sum(not spare for _, spare in self._running.values())
        if regular < self.size:
            return False
        spares = len(self._running) - regular
        now = time.monotonic()
        all_heavy = all(now - start >= self.heavy_after for start, _ in self._running.values())
        return True if spares < self.reserve and all_heavy else None

    def counts(self) -> tuple[int, int]:
        """(running, waiting) now."""
        return len(self._running), len(self._waiting)


class Admission(Queue):
    """A ``Queue`` that runs wait in: ``enter`` blocks the calling thread until its slot is free.

    Parameters as ``Queue``'s.
    """

    def __init__(self, size: int, **kwargs: Any):
        super().__init__(size, **kwargs)
        self._changed = threading.Condition()

    def enter(self, on_wait: Callable[[int], None] | None = None, *,
              check: Callable[[], None] | None = None) -> Slot:
        """Wait for a slot; ``on_wait(k)`` is told the place ``k`` (1: next) each time it changes.

        ``on_wait`` (by default the one ``queue_notices`` set for this thread) is called without
        any lock held; if it raises, the ticket leaves the queue. So does it if ``check()``, called
        at every look (a few times a second), raises: a run cancelled while it waits.

        Raises
        ------
        ServerBusy
            ``most_waiting`` runs are waiting already.
        """
        on_wait = on_wait or current_notice()
        with self._changed:
            ticket = self.take()
        told = 0
        try:
            while True:
                with self._changed:
                    place = self.place(ticket)
                    slot = self.start() if place == 1 else None
                    if slot is not None:
                        self._changed.notify_all()
                        return slot
                    if place == told:
                        self._changed.wait(_RECHECK)
                moved, told = place != told, place
                if moved and on_wait is not None:
                    on_wait(place)
                if check is not None:
                    check()
        except BaseException:
            with self._changed:
                self.drop(ticket)
                self._changed.notify_all()
            raise

    def leave(self, slot: Slot) -> None:
        """Give the slot back (always, however the run ended)."""
        with self._changed:
            self.finish(slot.ticket)
            self._changed.notify_all()

    def resize(self, size: int) -> None:
        """Use ``size`` regular slots from now on (runs already running keep theirs)."""
        with self._changed:
            self.size = size
            self._changed.notify_all()

    def counts(self) -> tuple[int, int]:
        """(running, waiting) now."""
        with self._changed:
            return super().counts()
