"""One admission for the whole cluster: every replica's runs wait in one queue on the Dask scheduler.

Several replicas of the app share one Dask cluster. Each used to queue its own runs against the
cluster's worker threads, so together they sent more runs than there are threads: the rest waited in
Dask's queue untold, and a visitor of light pages waited behind another replica's heavy links. Here
the queue is the single host's (``polarize.serve.admission.Queue``: first come, first served, a
place told, refused in one line past a wait of ``longest_wait``), kept on the scheduler by a plugin
(``AdmissionPlugin``) that every replica's client registers (idempotent by name: the first one's
stays), with as many regular slots as the cluster has worker threads now, plus a ``reserve``:
while every running run is heavy (has held its slot ``heavy_after`` seconds) the head of the queue
gets a spare slot. The worker makes room for it: a run that turns heavy leaves its worker's thread
pool (Dask's ``secede``; ``run_making_room``), so the light run gets a thread beside it at once.

A replica's side (``SharedAdmission``) has the interface of ``Admission``: ``enter`` waits for a
slot, telling the visitor's place through ``queue_notices`` as on one host, and ``leave`` gives it
back. One thread per replica asks the scheduler for the places of all its waiting runs at once (a
long poll, one connection whatever the number of visitors), which also renews the replica's lease:
slots of a replica that disconnects (killed mid-run) are freed at once, those of one that has not
been heard of for ``LEASE_SECONDS`` (stopped, cut off) then.

Why not ``distributed.Semaphore``: it has leases but no order and no place (a waiting visitor cannot
be told where they are, nor served first come, first served), no refusal past a wait, and no reserve.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

from distributed.diagnostics.plugin import SchedulerPlugin

from polarize.serve.admission import HEAVY_AFTER, LONGEST_WAIT, MOST_WAITING, Queue, Slot, current_notice
from polarize.serve.errors import ServerBusy

__all__ = ["LEASE_SECONDS", "NAME", "RESERVE", "AdmissionPlugin", "SharedAdmission", "run_making_room"]

NAME = "polarize-admission"
"""The plugin's name on the scheduler (one per cluster, whichever replica registered it first)."""

RESERVE = 1
"""Spare slots for light runs while every running run is heavy (as one host keeps a spare worker)."""

LEASE_SECONDS = 30.0
"""Seconds a replica not heard of keeps its slots and places (it asks every ``_POLL`` while it holds any)."""

_POLL = 1.0  # seconds a replica's question for its places waits on the scheduler for a change
_RECHECK = 0.25  # seconds between the scheduler's looks at the running runs (they turn heavy with time)
_OPS = ("take", "places", "leave", "counts")
_UNKNOWN, _LOST = -1, -2  # places: a ticket the scheduler does not know; one whose scheduler cannot be asked


class AdmissionPlugin(SchedulerPlugin):
    """The cluster's queue, on the scheduler: handlers ``polarize_admission_take``, ``_places``, ``_leave``.

    Parameters
    ----------
    reserve, heavy_after, longest_wait, most_waiting
        As ``polarize.serve.admission.Queue``'s; its ``size`` is the cluster's worker threads (at least 1).
    lease : float
        Seconds after which a client not heard of loses its tickets.
    """

    name = NAME
    idempotent = True

    def __init__(self, *, reserve: int = RESERVE, heavy_after: float = HEAVY_AFTER,
                 longest_wait: float = LONGEST_WAIT, most_waiting: int = MOST_WAITING,
                 lease: float = LEASE_SECONDS):
        self.reserve, self.heavy_after, self.lease = reserve, heavy_after, lease
        self.longest_wait, self.most_waiting = longest_wait, most_waiting

    async def start(self, scheduler: Any) -> None:
        self.scheduler = scheduler
        self.queue = Queue(1, reserve=self.reserve, heavy_after=self.heavy_after,
                           longest_wait=self.longest_wait, most_waiting=self.most_waiting)
        self.owner: dict[int, str] = {}  # ticket (waiting or running) -> its client
        self.task: dict[int, str] = {}  # ticket -> the Dask key of its run, where its replica said it
        self.joined: set[int] = set()  # tickets sharing a running run of their key: no slot of their own
        self.joins = itertools.count(-1, -1)
        self.heard: dict[str, float] = {}  # client -> when it last asked anything
        self.changed = asyncio.Event()
        for op in _OPS:
            scheduler.handlers[f"polarize_admission_{op}"] = getattr(self, op)

    def take(self, client: str, key: str | None = None) -> dict[str, Any]:
        """A ticket for ``client``'s run (``{"ticket": t}``), or why it is refused (``{"busy": words}``).

        A run whose task ``key`` is running already (the same link opened on another replica) starts at
        once without a slot: Dask hands it that run's result, computed once.
        """
        self._hear(client)
        self._settle()
        if key is not None and key in {k for t, k in self.task.items() if self.queue.slot(t) is not None}:
            ticket = next(self.joins)
            self.joined.add(ticket)
        else:
            try:
                ticket = self.queue.take()
            except ServerBusy as exc:
                return {"busy": str(exc)}
        self.owner[ticket] = client
        if key is not None:
            self.task[ticket] = key
        self._settle()
        return {"ticket": ticket}

    async def places(self, client: str, told: list[list[int]], timeout: float) -> list[list[int]]:
        """``[ticket, place, spare]`` for each ``[ticket, place]`` of ``told``, once one of them differs or
        ``timeout`` has passed: place 0 when the ticket holds a slot (``spare`` 1 for a spare one), -1 when
        it is unknown here (a scheduler restarted, a lease lost). Renews ``client``'s lease."""
        end = time.monotonic() + timeout
        while True:
            self._hear(client)
            self._settle()
            now = [[ticket, *self._where(ticket)] for ticket, _ in told]
            if any(place != was for (_, place, _), (_, was) in zip(now, told, strict=True)) \
                    or time.monotonic() >= end:
                return now
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(_RECHECK, max(0.0, end - time.monotonic())))

    def leave(self, client: str, ticket: int) -> None:
        """``ticket``'s slot given back, or its place in the queue (a wait cancelled)."""
        self._hear(client)
        self._release([ticket])

    def counts(self, client: str) -> list[int]:
        """``[running, waiting, size]``: the cluster's queue now, every replica's runs in it."""
        self._hear(client)
        self._settle()
        return [*self.queue.counts(), self.queue.size]

    def remove_client(self, scheduler: Any, client: str) -> None:
        """A client gone (a replica stopped or killed): its runs' slots and places are freed."""
        self.heard.pop(client, None)
        self._release([t for t, owner in self.owner.items() if owner == client])

    def _hear(self, client: str) -> None:
        """``client``'s lease renewed (not for one the scheduler has removed: its question came late)."""
        if client in self.scheduler.clients:
            self.heard[client] = time.monotonic()

    def _where(self, ticket: int) -> tuple[int, int]:
        place, slot = self.queue.place(ticket), self.queue.slot(ticket)
        if place is not None:
            return place, 0
        if slot is not None:
            return 0, int(slot.spare)
        return (0, 0) if ticket in self.joined else (_UNKNOWN, 0)

    def _release(self, tickets: list[int]) -> None:
        self._free(tickets)
        self._settle()

    def _free(self, tickets: list[int]) -> None:
        for ticket in tickets:
            self.owner.pop(ticket, None)
            self.task.pop(ticket, None)
            self.joined.discard(ticket)
            self.queue.drop(ticket)
            self.queue.finish(ticket)

    def _settle(self) -> None:
        """Free silent clients' tickets, size the queue to the cluster, start the heads slots are free for."""
        now = time.monotonic()
        for client in [c for c, heard in self.heard.items() if now - heard > self.lease]:
            del self.heard[client]
            self._free([t for t, owner in self.owner.items() if owner == client])
        self.queue.size = max(1, self.scheduler.total_nthreads)
        while self.queue.start() is not None:
            pass
        self.changed.set()
        self.changed = asyncio.Event()


class SharedAdmission:
    """A replica's side of the cluster's queue: ``enter`` and ``leave`` as ``Admission``'s.

    Parameters
    ----------
    client : distributed.Client
        This replica's client of the cluster; it registers ``AdmissionPlugin`` (once per cluster).
    lost : callable
        The error to raise when the scheduler can no longer be asked (the client closed).
    """

    def __init__(self, client: Any, lost: Callable[[], Exception]):
        self.client, self.lost = client, lost
        self.size = 1  # the cluster's worker threads last seen (``resize``): the scheduler's own look decides
        self.longest_wait, self.heavy_after = LONGEST_WAIT, HEAVY_AFTER
        self._changed = threading.Condition()
        self._told: dict[int, tuple[int | None, int]] = {}  # waiting ticket -> (place, spare) last heard
        self._running: set[int] = set()
        self._asking: threading.Thread | None = None
        self._register()

    def _register(self) -> None:
        self.client.register_plugin(AdmissionPlugin(), name=NAME)  # idempotent: the first one stays

    def _ask(self, op: str, **kwargs: Any) -> Any:
        """The scheduler's answer to ``polarize_admission_<op>``; registers the plugin again where a
        restarted scheduler has none (its handler answers None)."""
        for _ in range(2):
            while self.client.status == "connecting":  # Dask's client closes itself once that fails
                time.sleep(_RECHECK)
            if self.client.status != "running":
                raise self.lost()
            handler = getattr(self.client.scheduler, f"polarize_admission_{op}")
            try:
                answer = self.client.sync(handler, client=self.client.id, **kwargs)
            except OSError:  # the connection went (Dask's CommClosedError is one)
                raise self.lost() from None
            if answer is not None or op == "leave":
                return answer
            self._register()
        raise self.lost()

    def enter(self, on_wait: Callable[[int], None] | None = None, *, check: Callable[[], None] | None = None,
              key: str | None = None) -> Slot:
        """Wait for a slot in the cluster's queue; ``on_wait(k)`` told the place ``k`` and ``check()`` called
        at every look, as ``Admission.enter``.

        A run that names its Dask ``key`` starts at once, with no slot, while a run of that key is running
        (on any replica): Dask hands both the one result.

        Raises
        ------
        ServerBusy
            The cluster's queue refuses the run (too many waiting, or too long a wait).
        ClusterUnavailable
            (``lost()``) the scheduler can no longer be asked.
        """
        on_wait = on_wait or current_notice()
        ticket, told = self._take(key), None
        try:
            while True:
                with self._changed:
                    while self._told[ticket][0] in (told, None):
                        if check is not None:
                            check()
                        self._changed.wait(_RECHECK)
                    place, spare = self._told[ticket]
                    if place == 0:
                        del self._told[ticket]
                        self._running.add(ticket)
                        return Slot(ticket=ticket, spare=bool(spare))
                if place == _LOST:
                    raise self.lost()
                if place == _UNKNOWN:  # the scheduler forgot it (restarted): to the back of its queue
                    self._forget(ticket)
                    ticket, told = self._take(key), None
                    continue
                told = place
                if on_wait is not None:
                    on_wait(place)
        except BaseException:
            self._forget(ticket)
            raise

    def leave(self, slot: Slot) -> None:
        """Give the slot back (always, however the run ended)."""
        self._forget(slot.ticket)

    def resize(self, size: int) -> None:
        """Note the cluster's worker threads (the scheduler sizes the queue itself)."""
        self.size = size

    def counts(self) -> tuple[int, int]:
        """(running, waiting) in the cluster's queue now, every replica's (the scheduler asked; its
        size noted): whether work done ahead of need would make anyone's run wait (``runner.idle``)."""
        running, waiting, self.size = self._ask("counts")
        return running, waiting

    def _take(self, key: str | None) -> int:
        answer = self._ask("take", key=key)
        if "busy" in answer:
            raise ServerBusy(answer["busy"])
        ticket = answer["ticket"]
        with self._changed:
            self._told[ticket] = (None, 0)  # not heard yet
            if self._asking is None:
                self._asking = threading.Thread(target=self._keep_asking, name="polarize-admission",
                                                 daemon=True)
                self._asking.start()
        return ticket

    def _forget(self, ticket: int) -> None:
        with self._changed:
            self._told.pop(ticket, None)
            self._running.discard(ticket)
        if self.client.status != "running":
            return  # a scheduler gone forgot it too; one reconnecting lets the lease go
        with contextlib.suppress(Exception):
            self._ask("leave", ticket=ticket)

    def _keep_asking(self) -> None:
        """While this replica holds tickets: ask the places of its waiting ones (renewing its lease)."""
        while True:
            with self._changed:
                if not self._told and not self._running:
                    self._asking = None
                    return
                told = [[t, _LOST if p is None else p] for t, (p, _) in self._told.items()]
            try:
                answer = self._ask("places", told=told, timeout=_POLL)
            except Exception:
                time.sleep(_RECHECK)  # not at once: the runs holding slots may take a moment to leave
                if self.client.status in ("running", "connecting"):
                    continue  # reconnecting: ask again
                answer = [[t, _LOST, 0] for t, _ in told]  # the client is closed: the waits end in words
            with self._changed:
                for ticket, place, spare in answer:
                    if ticket in self._told:
                        self._told[ticket] = (place, spare)
                self._changed.notify_all()


def run_making_room(function: Callable[..., Any], args: tuple[Any, ...],
                    heavy_after: float = HEAVY_AFTER) -> Any:
    """On a worker: ``function(*args)``; once it has run ``heavy_after`` seconds, its task leaves the
    worker's thread pool (``secede``), so the thread is free for the light run the cluster's reserve lets
    in. The run itself goes on in a thread of its own (``secede`` is the task's thread's to call)."""
    from distributed import secede

    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # handed to the task's thread, which raises it
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="polarize-run", daemon=True)
    thread.start()
    thread.join(heavy_after)
    if thread.is_alive():
        with contextlib.suppress(Exception):  # not in a worker's pool: the run goes on as it is
            secede()
        thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
