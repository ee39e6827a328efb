"""Results shared by every session of one server: computed once per key, least recently used out.

The app's pages are pure functions of their settings, so two students asking for the
same view should not both compute it. ``SharedCache`` keeps the last ``size`` values;
a second caller asking for a key being computed waits for the first rather than
computing it again. Plain Python, so the renderer needs no framework cache: what a
computation draws while it runs (a place in the queue, a progress bar) belongs to the
session that started it and is never replayed to another.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["SharedCache"]


class SharedCache:
    """A thread-safe map of key -> value, each value computed once, at most ``size`` kept.

    Parameters
    ----------
    size : int
        How many values are kept; the least recently used goes first.
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, not {size}")
        self.size = size
        self._lock = threading.Lock()
        self._values: collections.OrderedDict[Hashable, Any] = collections.OrderedDict()
        self._computing: dict[Hashable, threading.Lock] = {}

    def __repr__(self) -> str:
        return f"SharedCache(size={self.size}, held={len(self._values)})"

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: Hashable, compute: Callable[[], Any],
            keep: Callable[[Any], bool] | None = None) -> Any:
        """The value for ``key``: kept, being computed by another caller (waited for), or ``compute()``.

        An exception from ``compute`` reaches its caller and keeps nothing; so does a value that
        ``keep(value)`` (when given) refuses: a caller waiting for it then computes its own.
        """
        while True:
            with self._lock:
                if key in self._values:
                    self._values.move_to_end(key)
                    return self._values[key]
                busy = self._computing.get(key)
                if busy is None:
                    busy = self._computing[key] = threading.Lock()
                    busy.acquire()
                    break
            with busy:  # another caller computes this key: wait for it, then look again
                pass
        try:
            value = compute()
            if keep is not None and not keep(value):
                return value
            with self._lock:
                self._values[key] = value
                while len(self._values) > self.size:
                    self._values.popitem(last=False)
            return value
        finally:
            with self._lock:
                del self._computing[key]
            busy.release()

    def peek(self, key: Hashable, default: Any = None) -> Any:
        """The value kept for ``key`` (now the most recently used), or ``default``: never waits, never
        computes."""
        with self._lock:
            if key not in self._values:
                return default
            self._values.move_to_end(key)
            return self._values[key]

    def put(self, key: Hashable, value: Any) -> None:
        """Keep ``value`` for ``key`` (computed elsewhere, e.g. by a worker whose future is done)."""
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.size:
                self._values.popitem(last=False)

    def clear(self) -> None:
        """Forget every value."""
        with self._lock:
            self._values.clear()
