"""One job under the time limit, each way it can fail turned into a view: for the Explorer and the studies.

A page's run goes to a worker process (``serve.runner.call_with_timeout``) under the hard time
limit, with the engine's budget just under it (``budget.within``: a run out of time stops itself
and comes back cut short). ``run_limited`` gives the outcome, or the ``View`` of its failure:
the worker stopped at the limit (with the page's advice), a crash, a busy server, an engine
error. A failure view is ``passing``: never kept for other visitors (on a quieter server the
same job may finish), so the next visitor's rerun computes it again.

``run_each`` hands several jobs (a comparison page's runs) to the workers at once and gives each
outcome as it comes back; one that finished whole is kept (``RUNS``, by the job's content) for
every visitor, so a setting seen before, or a run two settings share, is not run again.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from polarize.budget import within
from polarize.serve.cache import SharedCache
from polarize.serve.runner import RunTimeout, call_all, call_with_timeout, timeout_seconds
from polarize.web import overtime
from polarize.web.failures import failure_view
from polarize.web.view import View

__all__ = ["BUDGET", "RUNS", "Ran", "failed_view", "run_each", "run_limited"]


class _Budget:
    def __repr__(self) -> str:
        return "BUDGET"


BUDGET = _Budget()
"""Stands, among ``run_limited``'s arguments, for the engine's budget in seconds (``budget.within``)."""


class Ran(NamedTuple):
    """A job that came back from its worker: its outcome (maybe cut short) and the limit it ran under."""

    outcome: Any
    limit: float


RUNS = SharedCache(64)
"""The outcomes of ``run_each``'s jobs that came back whole (``keep``), by a digest of the job (its
function and arguments, the budget left out), shared by every session."""


def failed_view(exc: BaseException, advice: Callable[[], str], subject: str = "This run") -> View:
    """The view of a job (or jobs: ``subject``, as ``run_limited`` takes it) that raised ``exc``
    (``passing``)."""
    if isinstance(exc, RunTimeout):  # the worker was stopped: nothing it made came back
        return View(error=overtime.timed_out(exc.seconds, advice(), subject), passing=True)
    return failure_view(exc)


def _digest(function: Callable[..., Any], args: tuple[Any, ...]) -> str | None:
    """The job's content as a key (its pickle: equal only for equal arguments), or None if it has none."""
    try:
        made = pickle.dumps((function.__module__, function.__qualname__, args), protocol=5)
    except Exception:
        return None
    return hashlib.sha256(made).hexdigest()


def run_each(jobs: Mapping[str, tuple[Callable[..., Any], tuple[Any, ...]]], *, timeout: float | None = None,
             keep: Callable[[Any], bool] = lambda outcome: True) -> Iterator[tuple[str, Ran | Exception]]:
    """Every job of ``jobs`` in a worker under the time limit, all handed over at once (``runner.call_all``).

    Parameters
    ----------
    jobs : mapping
        Label -> (function, args), each as ``run_limited`` takes them (``BUDGET`` among the args).
    timeout : float, optional
        As ``run_limited``'s, for each job.
    keep : callable
        ``keep(outcome)``: whether a job's outcome may be kept for anyone who makes the same job (e.g.
        not a study cut short by its budget).

    Yields
    ------
    (str, Ran or Exception)
        Each job's label and outcome (or what it raised: ``failed_view`` says it), as it comes back:
        first those kept from before (``RUNS``), then the others, soonest first. Never raises; a caller
        that stops early drops the jobs not started.
    """
    try:
        limit = timeout_seconds() if timeout is None else float(timeout)
        budget = within(limit)
    except Exception as exc:
        for label in jobs:
            yield label, exc
        return
    missing, keys = [], {}
    for label, (function, args) in jobs.items():
        key = keys[label] = _digest(function, args)
        kept = RUNS.peek(key) if key is not None else None
        if kept is not None:
            yield label, Ran(kept, limit)
        else:
            missing.append(label)
    if not missing:
        return
    calls = call_all([(jobs[label][0], tuple(budget if a is BUDGET else a for a in jobs[label][1]))
                      for label in missing], timeout=limit)
    for label, future in zip(missing, calls.futures, strict=True):
        if keys[label] is not None:  # kept as it ends, even when the caller has gone (a rerun cut it short)
            future.add_done_callback(lambda done, key=keys[label]: _kept(key, done, keep))
    for i in calls.completed():
        label, future = missing[i], calls.futures[i]
        try:
            outcome = future.result()
        except Exception as exc:  # an engine failure must not become a traceback on the page
            yield label, exc
            continue
        _kept(keys[label], future, keep)  # now, too: a callback may run after a waiter wakes
        yield label, Ran(outcome, limit)


def _kept(key: str | None, future: Any, keep: Callable[[Any], bool]) -> None:
    """Keep the outcome of a job's ``future`` in ``RUNS`` (under ``key``: None, not kept) when it came
    back and ``keep`` takes it."""
    if key is not None and not future.cancelled() and future.exception() is None and keep(future.result()):
        RUNS.put(key, future.result())


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
    except Exception as exc:  # an engine failure must not become a traceback on the page
        return failed_view(exc, advice, subject)
    return Ran(outcome, limit)
