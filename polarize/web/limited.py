"""One job under the time limit, each way it can fail turned into a view: for the Explorer and the studies.

A page's run goes to a worker process (``serve.runner.call_with_timeout``) under the hard time
limit, with the engine's budget just under it (``budget.within``: a run out of time stops itself
and comes back cut short). ``run_limited`` gives the outcome, or the ``View`` of its failure:
the worker stopped at the limit (with the page's advice), a crash, a busy server, an engine
error. A failure view is ``passing``: never kept for other visitors (on a quieter server the
same job may finish), so the next visitor's rerun computes it again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from polarize.budget import within
from polarize.serve.runner import RunTimeout, call_with_timeout, timeout_seconds
from polarize.web import overtime
from polarize.web.failures import failure_view
from polarize.web.view import View

__all__ = ["BUDGET", "Ran", "run_limited"]


class _Budget:
    def __repr__(self) -> str:
        return "BUDGET"


BUDGET = _Budget()
"""Stands, among ``run_limited``'s arguments, for the engine's budget in seconds (``budget.within``)."""


class Ran(NamedTuple):
    """A job that came back from its worker: its outcome (maybe cut short) and the limit it ran under."""

    outcome: Any
    limit: float


def run_limited(function: Callable[..., Any], *args: Any, timeout: float | None = None,
                advice: Callable[[], str], subject: str = "This run") -> Ran | View:
    """``function(*args)`` in a worker under the time limit, ``BUDGET`` in ``args`` the engine's budget.

    Parameters
    ----------
    function : callable
        Module-level (a worker imports it by name); its arguments and result picklable.
    *args
        Its arguments; ``BUDGET`` among them is replaced by ``budget.within(limit)`` seconds.
    timeout : float, optional
        The hard limit in seconds (``runner.timeout_seconds()`` when omitted).
    advice : callable
        ``advice()``: what to change when the worker was stopped at the limit (``overtime``).
    subject : str
        Who ran, in the words of ``overtime.timed_out`` ("This run", "These runs").

    Returns
    -------
    Ran or View
        The outcome and the limit; or the failure's view (``error`` set, ``passing``). Never raises.
    """
    try:
        limit = timeout_seconds() if timeout is None else float(timeout)
        budget = within(limit)
        outcome = call_with_timeout(function, *(budget if a is BUDGET else a for a in args), timeout=limit)
    except RunTimeout as exc:  # the worker was stopped: nothing it made came back
        return View(error=overtime.timed_out(exc.seconds, advice(), subject), passing=True)
    except Exception as exc:  # an engine failure must not become a traceback on the page
        return failure_view(exc)
    return Ran(outcome, limit)
