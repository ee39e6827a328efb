"""What a page says when a run fails or waits, in words: one wording for every page."""

from __future__ import annotations

from polarize.config import ConfigError
from polarize.normalizers import DegenerateStateError
from polarize.serve.cluster import ClusterUnavailable
from polarize.serve.runner import RunTimeout, ServerBusy, WorkerCrashed
from polarize.web.view import View

__all__ = ["config_reason", "describe_failure", "failure_view", "queue_notice"]


def describe_failure(exc: BaseException) -> str:
    """Why a run (or a study of several runs) could not be made, in words for the page.

    Parameters
    ----------
    exc : exception
        As raised by ``runner.run_with_timeout`` or ``runner.call_with_timeout``.
    """
    if isinstance(exc, RunTimeout):
        return (f"This run took longer than {exc.seconds:g} s and was stopped. Try a shorter horizon, "
                "fewer tokens, or the exact flow instead of gradient descent.")
    if isinstance(exc, (ConfigError, DegenerateStateError)):
        return f"The engine cannot run this: {exc}"
    if isinstance(exc, WorkerCrashed):
        return f"The run failed: {exc}. Try smaller settings."
    if isinstance(exc, ServerBusy):
        return "The server is too busy to queue this run just now. Try again in a minute."
    if isinstance(exc, ClusterUnavailable):
        return f"The cluster that runs this server's runs cannot be used now: {exc}. Try again in a minute."
    return f"The engine failed on this run ({type(exc).__name__}: {exc})."


def failure_view(exc: BaseException) -> View:
    """The view of a failed run: ``describe_failure``'s words, ``passing`` (never kept for other visitors:
    a busy server, a crash or a time limit may pass, and a view that failed is not worth keeping)."""
    return View(error=describe_failure(exc), passing=True)


def queue_notice(place: int) -> str:
    """What a session waiting for a worker is told (``place`` 1: next to start)."""
    return (f"The server is busy: your run is queued (position {place}). It starts as soon as a worker "
            "is free; the time limit counts from then.")


def config_reason(exc: ConfigError) -> str:
    """A ``ConfigError``'s message without its leading ``field:``."""
    text, prefix = str(exc), f"{exc.field}: "
    return text[len(prefix):] if text.startswith(prefix) else text
