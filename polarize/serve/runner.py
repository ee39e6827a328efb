"""Run ``simulate`` with a time limit, in worker processes that can be stopped.

Some settings make the engine slow: a long horizon under the cross-entropy loss,
or large sizes under gradient descent, can take minutes.
A web page must not hang on them, and a Python thread cannot be interrupted
inside a long computation, so runs go to a small pool of long-lived worker
processes (plain ``python -c`` children talking pickles over their standard
input and output; each imports the engine once, so a run costs only the
pickling of its result). A run that overshoots its time limit has its worker
killed (a fresh one replaces it on the next run) and raises ``RunTimeout``.
Every request carries an id that its reply must echo, and a worker whose state
is in any doubt (a reply not read, a pipe error) is killed rather than reused,
so no caller can ever receive another caller's result.

Runs wait their turn in ``polarize.serve.admission``: one queue, at most as many
runs at once as there are workers, plus a spare worker when every running run
is a long one; ``queue_notices`` tells a caller its place while it waits. A
run that turns long also has its worker's priority lowered, so that the light
runs beside it get the CPU first.

Why not a library pool: loky cannot stop one overrunning task without killing
the whole executor, and pebble (which can) must start its workers by fork,
unsafe from the app's threaded server, or by spawn/forkserver, which re-runs
the caller's ``__main__`` in every worker and breaks any script without a
``__main__`` guard. Plain ``python -c`` children have neither problem.

Set ``POLARIZE_SCHEDULER`` to a Dask scheduler's address to run on its workers instead
(``polarize.serve.cluster``), ``POLARIZE_APP_INPROCESS=1`` (or ``true``, ``yes``, ``on``) to run in
the calling process (no time limit; also the fallback where there are no POSIX pipes), and
``POLARIZE_APP_TIMEOUT`` to change the limit (seconds).
"""

from __future__ import annotations

import atexit
import itertools
import math
import os
import queue
import subprocess
import sys
import threading
from enum import StrEnum
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from polarize.config import ConfigError, Experiment
from polarize.diagnostics import Result
from polarize.env import TIMEOUT, in_process, scheduler, timeout
from polarize.integrate import simulate
from polarize.normalizers import DegenerateStateError
from polarize.serve.admission import Admission, ServerBusy, queue_notices
from polarize.serve.cluster import cluster_call, connected

__all__ = [
    "DEFAULT_TIMEOUT", "RunTimeout", "ServerBusy", "WorkerCrashed", "call_with_timeout", "prestart",
    "queue_notices", "run_with_timeout", "shutdown", "timeout_seconds",
]

DEFAULT_TIMEOUT = TIMEOUT[1]
"""Seconds a run may take before it is stopped (``POLARIZE_APP_TIMEOUT`` overrides)."""


class RunTimeout(RuntimeError):
    """The run took longer than its time limit and was stopped."""

    def __init__(self, seconds: float):
        super().__init__(f"the run took longer than {seconds:g} s and was stopped")
        self.seconds = seconds


class WorkerCrashed(RuntimeError):
    """The worker process died during the run (e.g. out of memory)."""


def timeout_seconds() -> float:
    """The time limit in force: ``POLARIZE_APP_TIMEOUT`` or ``DEFAULT_TIMEOUT``.

    Raises ``ConfigError`` naming the variable when it is not a positive finite number.
    """
    return timeout()


def _in_process() -> bool:
    return os.name != "posix" or in_process()


def _pack_error(exc: BaseException) -> tuple[str, str, str]:
    field = getattr(exc, "field", "")
    message = str(exc)
    if isinstance(exc, ConfigError) and message.startswith(f"{field}: "):
        message = message[len(field) + 2:]
    return type(exc).__name__, field, message


_REBUILT: dict[str, Any] = {
    "ConfigError": lambda field, message: ConfigError(field, message),
    "DegenerateStateError": lambda _field, message: DegenerateStateError(message),
}
"""The engine's own errors, rebuilt as themselves from their packed form; any other is a RuntimeError."""


def _unpack_error(name: str, field: str, message: str) -> Exception:
    rebuild = _REBUILT.get(name)
    return rebuild(field, message) if rebuild else RuntimeError(f"{name}: {message}")


class _Reply(StrEnum):
    """What a worker's message to the parent is."""

    READY = "ready"  # its imports are done (the first message)
    RESULT = "ok"
    ERROR = "error"


def _child_main() -> None:
    """Worker loop (in the child): receive a call, send back its result or the error.

    The pipe to the parent is the original standard input and output; standard
    output is then pointed at standard error, so that a stray print cannot
    corrupt the channel.
    """
    channel = os.dup(1)
    os.dup2(2, 1)
    inbox = Connection(os.dup(0), writable=False)
    outbox = Connection(channel, readable=False)
    outbox.send((0, _Reply.READY, None))  # the engine is imported: the parent's time limits start now
    while True:
        try:
            call = inbox.recv()
        except (EOFError, OSError):
            return  # the parent has gone
        try:
            reply: tuple[int, _Reply, Any] = (call.id, _Reply.RESULT, call.function(*call.args))
        except Exception as exc:  # every failure goes back to the caller, in words
            reply = (call.id, _Reply.ERROR, _pack_error(exc))
        try:
            outbox.send(reply)
        except OSError:
            return


_IDS = itertools.count(1)

# Connection.poll waits through select(), which takes at most about 24 days; longer waits go in turns.
_LONGEST_POLL = 86_400.0


class _Call:
    """A request for the worker: ``function(*args)`` (a module-level function, pickled by name).

    ``id`` is unique in this process; the worker's reply echoes it.
    """

    def __init__(self, function: Any, args: tuple[Any, ...]):
        self.id = next(_IDS)
        self.function = function
        self.args = args


_STARTUP_LIMIT = 120.0  # seconds a new worker may take to import the engine

_CHILD = "from polarize.serve.runner import _child_main; _child_main()"


class _Worker:
    """One long-lived worker process (``python -c``) and the pipes to it."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.outbox: Connection | None = None
        self.inbox: Connection | None = None
        self.ready = self.niced = False

    def start(self) -> None:
        if self.process is not None and self.process.poll() is None:
            return
        self.stop()
        process = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, close_fds=True)
        assert process.stdin is not None and process.stdout is not None
        self.outbox = Connection(os.dup(process.stdin.fileno()), readable=False)
        self.inbox = Connection(os.dup(process.stdout.fileno()), writable=False)
        process.stdin.close()
        process.stdout.close()
        self.process, self.ready, self.niced = process, False, False

    def stop(self) -> None:
        for conn in (self.outbox, self.inbox):
            if conn is not None:
                conn.close()
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:  # pragma: no cover - a process that ignores SIGKILL
                pass
        self.process, self.outbox, self.inbox, self.niced = None, None, None, False

    def run(self, call: _Call, timeout: float, heavy_after: float = math.inf) -> Any:
        """Send ``call`` and wait for its reply; on anything but a clean reply the worker is stopped.

        A run that has used ``heavy_after / 2`` CPU-seconds (checked every ``heavy_after`` seconds)
        has its worker's priority lowered; that worker is then replaced after the run, so that
        the next one starts at full priority.
        """
        self.start()
        try:
            self._await_ready()
            kind, payload = self._exchange(call, timeout, heavy_after)
        except BaseException:
            self.stop()  # a reply may still be on its way: this worker must not serve anyone else
            raise
        if self.niced:
            self.stop()
        if kind is _Reply.ERROR:
            raise _unpack_error(*payload)
        return payload

    def _await_ready(self) -> None:
        """Wait for a new worker's imports, outside any run's time limit (a busy host makes them slow)."""
        if self.ready:
            return
        assert self.inbox is not None
        try:
            hello = self.inbox.recv() if self._poll(_STARTUP_LIMIT) else None
        except Exception:
            hello = None
        if hello != (0, _Reply.READY, None):
            raise WorkerCrashed("the worker process did not start")
        self.ready = True

    def _cpu_seconds(self) -> float:
        """CPU time the worker process has used (Linux's /proc), or 0 where that cannot be read."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (AttributeError, OSError, ValueError, IndexError):
            return 0.0

    def _yield_cpu(self) -> None:
        """Lower the worker's scheduling priority by 10 (once; it cannot be raised back unprivileged)."""
        if self.niced or self.process is None:
            return
        try:
            lower = min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10)
            os.setpriority(os.PRIO_PROCESS, self.process.pid, lower)
        except OSError:  # pragma: no cover - the worker has just exited
            pass
        self.niced = True

    def _exchange(self, call: _Call, timeout: float, heavy_after: float) -> tuple[str, Any]:
        assert self.outbox is not None and self.inbox is not None
        try:
            self.outbox.send(call)
        except (OSError, EOFError):
            raise WorkerCrashed("the worker process was not reachable") from None
        waited, cpu = 0.0, self._cpu_seconds()
        step = min(timeout, heavy_after)
        while not self._poll(step):
            waited += step
            if waited >= timeout:
                raise RunTimeout(timeout)
            # Heavy by the CPU it used, not the time it took: on a busy host a light run waits too.
            if not self.niced and self._cpu_seconds() - cpu >= heavy_after / 2:
                self._yield_cpu()  # the light runs beside it go first
            step = min(timeout - waited, heavy_after if not self.niced else _LONGEST_POLL)
        try:
            reply_id, kind, payload = self.inbox.recv()
        except Exception:  # cut short (EOF) or garbled (unpickling): either way the reply is lost
            raise WorkerCrashed("the worker process died during the run") from None
        if reply_id != call.id:
            raise WorkerCrashed(f"the worker answered request {reply_id} instead of {call.id}")
        return kind, payload

    def _poll(self, seconds: float) -> bool:
        assert self.inbox is not None
        try:
            return self.inbox.poll(seconds)
        except (EOFError, OSError):
            raise WorkerCrashed("the worker process died during the run") from None


class _Pool:
    """The workers, lent out one run at a time (the most recently used first) in the admission's order.

    A spare slot gets one of the reserve's workers, started and kept warm like the others: a
    cold start, just when long runs fill the host's cores, would cost more than the light run
    it is there for.
    """

    def __init__(self, size: int, reserve: int = 1):
        self.admission = Admission(size, reserve=reserve)
        self.all = [_Worker() for _ in range(size + reserve)]
        self.free: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self.spare: queue.LifoQueue[_Worker] = queue.LifoQueue()
        for i, worker in enumerate(self.all):
            (self.free if i < size else self.spare).put(worker)
        self.lock = threading.Lock()

    def run(self, call: _Call, timeout: float) -> Any:
        slot = self.admission.enter()
        try:
            # The admission lends no more slots of a kind than there are workers of that kind.
            lane = self.spare if slot.spare else self.free
            worker = lane.get_nowait()
            try:
                return worker.run(call, timeout, self.admission.heavy_after)
            finally:
                lane.put(worker)
        finally:
            self.admission.leave(slot)

    def prestart(self) -> None:
        with self.lock:
            for worker in self.all:
                worker.start()

    def shutdown(self) -> None:
        with self.lock:
            for worker in self.all:
                worker.stop()


_POOL = _Pool(size=max(1, min(2, os.cpu_count() or 1)))
atexit.register(_POOL.shutdown)


def run_with_timeout(experiment: Experiment, timeout: float | None = None) -> Result:
    """``simulate(experiment)``, stopped after ``timeout`` seconds.

    Parameters
    ----------
    experiment : Experiment
    timeout : float, optional
        Seconds; ``timeout_seconds()`` when omitted.

    Returns
    -------
    Result
        As ``simulate`` returns it (``K`` saved times, ``n`` tokens).

    Raises
    ------
    RunTimeout
        The run took longer than ``timeout`` (its worker was killed and will be replaced).
    ConfigError, DegenerateStateError
        As raised by the engine; any other engine failure as ``RuntimeError``.
    WorkerCrashed
        The worker process died (e.g. out of memory).
    ServerBusy
        Too many runs are waiting for a worker already.
    """
    return call_with_timeout(simulate, experiment, timeout=timeout)


def call_with_timeout(function: Any, *args: Any, timeout: float | None = None) -> Any:
    """``function(*args)`` in a worker process, stopped after ``timeout`` seconds.

    For studies of several runs (``polarize.science.studies``): the whole study gets one
    time limit. ``function`` must be importable by name (a module-level function)
    and its arguments and result picklable.

    Parameters
    ----------
    function : callable
    *args
        Its arguments.
    timeout : float, optional
        Seconds; ``timeout_seconds()`` when omitted.

    Returns
    -------
    Whatever ``function`` returns.

    Raises
    ------
    RunTimeout, WorkerCrashed, ServerBusy, ConfigError, DegenerateStateError, RuntimeError
        As ``run_with_timeout``. The time limit starts when a worker takes the run, not while it waits
        (on a cluster: when this server admits it).
    ClusterUnavailable
        ``POLARIZE_SCHEDULER`` is set and its scheduler does not answer.
    """
    if _in_process():
        return function(*args)
    seconds = timeout_seconds() if timeout is None else float(timeout)
    if math.isnan(seconds) or seconds <= 0:
        raise ValueError(f"timeout must be a positive number of seconds (inf for none); got {timeout!r}")
    cluster = connected()
    if cluster is not None:
        return cluster_call(cluster, function, args, seconds)
    return _POOL.run(_Call(function, args), seconds)


def prestart() -> None:
    """Start the worker processes now, so that the first run does not wait for them to import (none when
    the runs go to a cluster). Reads the variable only: a scheduler that does not answer is said by the
    first run, in words, not by the app's start."""
    if not _in_process() and scheduler() is None:
        _POOL.prestart()


def shutdown() -> None:
    """Stop every worker process (they restart on the next run)."""
    _POOL.shutdown()
