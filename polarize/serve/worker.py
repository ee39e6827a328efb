"""One worker process of the app's pool: a ``python -c`` child that imports the engine once and runs
the calls it is sent, with a time limit, talking pickles over its standard input and output.

Every request carries an id that its reply must echo, and a worker whose state is in any doubt (a
reply not read, a pipe error) is killed rather than reused, so no caller can ever receive another
caller's result. ``polarize.serve.runner`` lends the workers out in the admission's order.
"""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
from enum import StrEnum
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from polarize.config import ConfigError
from polarize.normalizers import DegenerateStateError

__all__ = ["RunTimeout", "WorkerCrashed"]


class RunTimeout(RuntimeError):
    """The run took longer than its time limit and was stopped."""

    def __init__(self, seconds: float):
        super().__init__(f"the run took longer than {seconds:g} s and was stopped")
        self.seconds = seconds


class WorkerCrashed(RuntimeError):
    """The worker process died during the run (e.g. out of memory)."""


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
