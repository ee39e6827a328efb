"""How far a long view has got: a page's ``view`` reports, the renderer (if listening) draws a bar.

Like ``polarize.serve.admission.queue_notices`` for a run's place in the queue: the
renderer sets a callback for the thread making the view, and the view calls
``report`` as it goes; with no one listening (scripts, tests) ``report`` does
nothing.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

__all__ = ["progress_notices", "report"]

_LISTENER: contextvars.ContextVar[Callable[[float, str], None] | None] = contextvars.ContextVar(
    "progress", default=None)


@contextlib.contextmanager
def progress_notices(listener: Callable[[float, str], None]) -> Iterator[None]:
    """While inside, ``report(fraction, text)`` from this thread calls ``listener(fraction, text)``."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def report(fraction: float, text: str) -> None:
    """Tell the listener (if any) that ``fraction`` (0 to 1, clipped) of the work is done, in ``text``."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(min(1.0, max(0.0, float(fraction))), text)
