"""Runs for the tests of the backend protocol (``polarize.serve.backend``): module-level, so that a
worker process or a Dask worker imports them by name (``support.cluster.start`` and the
``backends`` fixture put ``tests/`` on their path)."""

from __future__ import annotations

import time
from collections.abc import Callable


def ticking(steps: int, pause: float, *, progress: Callable[[int, int], None]) -> int:
    """``steps`` steps of ``pause`` seconds, each reported as ``progress(done, steps)``; returns ``steps``."""
    for done in range(1, steps + 1):
        time.sleep(pause)
        progress(done, steps)
    return steps
