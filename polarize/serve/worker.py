"""One worker process of the app's pool: a ``python -c`` child that imports the engine once and runs
the calls it is sent, with a time limit, talking pickles over its standard input and output.

Every request carries an id that its reply must echo, and a worker whose state is in any doubt (a
reply not read, a pipe error) is killed rather than reused, so no caller can ever receive another
caller's result. ``polarize.serve.local.LocalPool`` lends the workers out in the admission's order.
A run that reports progress sends its reports over the same pipe before its result.
"""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable
from enum import StrEnum
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from polarize.serve.errors import RunTimeout, WorkerCrashed, pack, unpack

__all__ = ["RunTimeout", "WorkerCrashed"]


class _Reply(StrEnum):
    """What a worker's message to the parent is."""

    READY = "ready"  # its imports are done (the first message)
    RESULT = "ok"
    ERROR = "error"
    PROGRESS = "progress"  # a report of the run's (done, total), before its result


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
            options = {"progress": _reporter(outbox, call.id)} if call.progress else {}
            reply: tuple[int, _Reply, Any] = (call.id, _Reply.RESULT, call.function(*call.args, **options))
        except Exception as exc:  # every failure goes back to the caller, in words
            reply = (call.id, _Reply.ERROR, pack(exc))
        try:
            outbox.send(reply)
        except OSError:
            return


def _reporter(outbox: Connection, call_id: int) -> Any:
    """In the child: ``progress(done, total)`` for the call ``call_id``, sent to the parent at once."""

    def progress(done: int, total: int) -> None:
        outbox.send((call_id, _Reply.PROGRESS, (int(done), int(total))))

    return progress


_IDS = itertools.count(1)

# Connection.poll waits through select(), which takes at most about 24 days; longer waits go in turns.
_LONGEST_POLL = 86_400.0


class _Call:
    """A request for the worker: ``function(*args)`` (a module-level function, pickled by name), with
    ``progress=`` a reporter when ``progress`` is true.

    ``id`` is unique in this process; the worker's replies echo it.
    """

    def __init__(self, function: Any, args: tuple[Any, ...], progress: bool = False):
        self.id = next(_IDS)
        self.function = function
        self.args = args
        self.progress = progress


_STARTUP_LIMIT = 120.0  # seconds a new worker may take to import the engine

_CHILD = "from polarize.serve.worker import _child_main; _child_main()"


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

    def kill(self) -> None:
        """Kill the process at once (from any thread): the run waiting on it hears of it as a crash."""
        process = self.process
        if process is not None and process.poll() is None:
            process.kill()

    def run(self, call: _Call, timeout: float, heavy_after: float = math.inf,
            progress: Callable[[int, int], None] | None = None) -> Any:
        """Send ``call`` and wait for its reply; on anything but a clean reply the worker is stopped.
        ``progress(done, total)`` is called with each report the call sends before its result.

        A run that has used ``heavy_after / 2`` CPU-seconds (checked every ``heavy_after`` seconds)
        has its worker's priority lowered; that worker is then replaced after the run, so that
        the next one starts at full priority.
        """
        self.start()
        try:
            self._await_ready()
            kind, payload = self._exchange(call, timeout, heavy_after, progress)
        except BaseException:
            self.stop()  # a reply may still be on its way: this worker must not serve anyone else
            raise
        if self.niced:
            self.stop()
        if kind is _Reply.ERROR:
            raise unpack(*payload)
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

    def _exchange(self, call: _Call, timeout: float, heavy_after: float,
                  progress: Callable[[int, int], None] | None) -> tuple[str, Any]:
        assert self.outbox is not None and self.inbox is not None
        try:
            self.outbox.send(call)
        except (OSError, EOFError):
            raise WorkerCrashed("the worker process was not reachable") from None
        began, cpu = time.monotonic(), self._cpu_seconds()
        step = min(timeout, heavy_after)
        while True:
            if self._poll(step):
                kind, payload = self._receive(call)
                if kind is not _Reply.PROGRESS:
                    return kind, payload
                if progress is not None:
                    progress(*payload)
            waited = time.monotonic() - began
            if waited >= timeout:
                raise RunTimeout(timeout)
            # Heavy by the CPU it used, not the time it took: on a busy host a light run waits too.
            if not self.niced and self._cpu_seconds() - cpu >= heavy_after / 2:
                self._yield_cpu()  # the light runs beside it go first
            step = min(timeout - waited, heavy_after if not self.niced else _LONGEST_POLL)

    def _receive(self, call: _Call) -> tuple[_Reply, Any]:
        assert self.inbox is not None
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
