"""This server's own worker processes as a backend (``polarize.serve.backend``): the default.

The workers (``polarize.serve.worker``) are lent out one run at a time, in the order of the
admission queue in front of them (``polarize.serve.admission``): at most as many runs at once as
there are workers, plus a spare worker when every running run is a long one. A run that overshoots
its time limit has its worker killed (a fresh one replaces it on the next run); a cancelled one too.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from polarize.serve.admission import Admission, current_notice
from polarize.serve.backend import Progress, Relay
from polarize.serve.worker import _Call, _Worker

__all__ = ["LocalPool"]


class LocalPool:
    """The workers, lent out one run at a time (the most recently used first) in the admission's order.

    A spare slot gets one of the reserve's workers, started and kept warm like the others: a
    cold start, just when long runs fill the host's cores, would cost more than the light run
    it is there for.

    Parameters
    ----------
    size : int
        Workers for regular slots (the admission's global limit).
    reserve : int
        Spare workers, for a light run while every running run is a long one.
    """

    here = True
    """Runs are made on this host."""

    def __init__(self, size: int, reserve: int = 1):
        self.admission = Admission(size, reserve=reserve)
        self.all = [_Worker() for _ in range(size + reserve)]
        self.free: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self.spare: queue.LifoQueue[_Worker] = queue.LifoQueue()
        for i, worker in enumerate(self.all):
            (self.free if i < size else self.spare).put(worker)
        self.lock = threading.Lock()

    def submit(self, function: Callable[..., Any], args: tuple[Any, ...], *, key: str | None = None,
               seconds: float, progress: Progress | None = None) -> Relay:
        """``Backend.submit``: the run waits its turn and is made by one of the workers (``key`` unused:
        nothing is shared between runs here)."""
        call = _Call(function, tuple(args), progress=progress is not None)
        return Relay.start(lambda relay: self._run(call, seconds, relay), progress, current_notice())

    def _run(self, call: _Call, seconds: float, relay: Relay) -> Any:
        slot = self.admission.enter(relay.place, check=relay.check)
        try:
            relay.check()
            # The admission lends no more slots of a kind than there are workers of that kind.
            lane = self.spare if slot.spare else self.free
            worker = lane.get_nowait()
            try:
                worker.start()
                relay.stopper(worker.kill)
                relay.check()
                try:
                    return worker.run(call, seconds, self.admission.heavy_after, relay.report)
                finally:
                    relay.stopper(None)
            finally:
                lane.put(worker)
        finally:
            self.admission.leave(slot)

    def prestart(self) -> None:
        """Start every worker now (each imports the engine before its first run)."""
        with self.lock:
            for worker in self.all:
                worker.start()

    def shutdown(self) -> None:
        """Stop every worker (they restart on the next run)."""
        with self.lock:
            for worker in self.all:
                worker.stop()
