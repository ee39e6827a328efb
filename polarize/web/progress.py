"""How far a long view has got: a page's ``view`` reports, the renderer (if listening) draws a bar.

Like ``polarize.serve.admission.queue_notices`` for a run's place in the queue: the
renderer sets a callback for the thread making the view, and the view calls
``report`` as it goes; with no one listening (scripts, tests) ``report`` does
nothing.

A view made of several runs that come back one by one (a comparison page) also shows what it
has so far: ``draft(view, text)`` hands the listener of ``draft_notices`` a ``View`` of the runs
done, and ``text`` naming those still running; ``drafting()`` says whether anyone listens (a
draft is not worth drawing for no one).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from polarize.web.view import View

__all__ = ["draft", "draft_notices", "drafting", "progress_notices", "report"]

_LISTENER: contextvars.ContextVar[Callable[[float, str], None] | None] = contextvars.ContextVar(
    "progress", default=None)


@contextlib.contextmanager
def _heard(var: contextvars.ContextVar[Any], listener: Any) -> Iterator[None]:
    """``var`` holds ``listener`` for this thread while inside."""
    token = var.set(listener)
    try:
        yield
    finally:
        var.reset(token)


def progress_notices(listener: Callable[[float, str], None]) -> contextlib.AbstractContextManager[None]:
    """While inside, ``report(fraction, text)`` from this thread calls ``listener(fraction, text)``."""
    return _heard(_LISTENER, listener)


def report(fraction: float, text: str) -> None:
    """Tell the listener (if any) that ``fraction`` (0 to 1, clipped) of the work is done, in ``text``."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(min(1.0, max(0.0, float(fraction))), text)


_DRAFTS: contextvars.ContextVar[Callable[[View, str], None] | None] = contextvars.ContextVar(
    "drafts", default=None)


def draft_notices(listener: Callable[[View, str], None]) -> contextlib.AbstractContextManager[None]:
    """While inside, ``draft(view, text)`` from this thread calls ``listener(view, text)``."""
    return _heard(_DRAFTS, listener)


def drafting() -> bool:
    """Whether a listener hears this thread's drafts."""
    return _DRAFTS.get() is not None


def draft(view: View, text: str) -> None:
    """Tell the listener (if any) what the view is so far (``view``, its runs done) and what it waits for
    (``text``, our own words)."""
    listener = _DRAFTS.get()
    if listener is not None:
        listener(view, text)
