"""A hard time limit around a call that must not hang (a FIFO opened, a huge input parsed)."""

from __future__ import annotations

import contextlib
import signal

LIMIT = 120.0
"""Seconds after which a call under ``hard_limit`` counts as hung."""


@contextlib.contextmanager
def hard_limit(seconds: float = LIMIT):
    """Raise ``TimeoutError`` in the main thread if the block is still running after ``seconds``."""
    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds:g} s: hung")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
