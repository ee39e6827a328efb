"""Why a run of the app did not give its result: every backend's errors, in one module.

Each backend (``polarize.serve.backend``) raises these and only these for what went wrong around a
run; what the run itself raised comes back as itself where it can be rebuilt (``pack`` and
``unpack`` carry it across a process's pipe). ``polarize.web.failures`` says each in words.
"""

from __future__ import annotations

from typing import Any

from polarize.config import ConfigError
from polarize.normalizers import DegenerateStateError

__all__ = ["ClusterUnavailable", "NoWorkers", "RunCancelled", "RunTimeout", "ServerBusy", "TrainingFailed",
           "WorkerCrashed", "in_words", "pack", "unpack"]


class RunTimeout(RuntimeError):
    """The run took longer than its time limit and was stopped."""

    def __init__(self, seconds: float):
        super().__init__(f"the run took longer than {seconds:g} s and was stopped")
        self.seconds = seconds

    def __reduce__(self) -> tuple[Any, ...]:  # rebuilt from its seconds, not its message (Dask pickles it)
        return type(self), (self.seconds,)


class WorkerCrashed(RuntimeError):
    """The worker process died during the run (e.g. out of memory), or the cluster lost the run."""


class RunCancelled(RuntimeError):
    """The run was cancelled by its caller (``Handle.cancel``) before it gave its result."""


class ServerBusy(RuntimeError):
    """Too many runs are waiting for a worker; try again shortly."""


class ClusterUnavailable(RuntimeError):
    """The Dask scheduler of ``POLARIZE_SCHEDULER`` cannot be reached, or was lost during a run."""


class NoWorkers(ClusterUnavailable):
    """The scheduler of ``POLARIZE_SCHEDULER`` answers but has no workers to run anything."""


class TrainingFailed(RuntimeError):
    """A live run failed, overshot its time limit, or its process died; the message says which."""


def pack(exc: BaseException) -> tuple[str, str, str]:
    """``exc`` as plain words to send over a pipe: (its type's name, its field or '', its message)."""
    field = getattr(exc, "field", "")
    message = str(exc)
    if isinstance(exc, ConfigError) and message.startswith(f"{field}: "):
        message = message[len(field) + 2:]
    if isinstance(exc, RunTimeout):
        message = repr(exc.seconds)
    return type(exc).__name__, field, message


_REBUILT: dict[str, Any] = {
    "ConfigError": lambda field, message: ConfigError(field, message),
    "DegenerateStateError": lambda _field, message: DegenerateStateError(message),
    "RunTimeout": lambda _field, message: RunTimeout(float(message)),
    "RunCancelled": lambda _field, message: RunCancelled(message),
    "TrainingFailed": lambda _field, message: TrainingFailed(message),
}
"""The engine's own errors and this module's, rebuilt as themselves from their packed form; any other
is a ``RuntimeError`` that names it."""


def unpack(name: str, field: str, message: str) -> Exception:
    """The error ``pack`` packed: itself if one of ``_REBUILT``'s, else ``RuntimeError('Name: ...')``."""
    rebuild = _REBUILT.get(name)
    return rebuild(field, message) if rebuild else RuntimeError(f"{name}: {message}")


def in_words(exc: BaseException) -> str:
    """A failed run's error as one line, ``Name: message`` (an error ``unpack`` could not rebuild already
    says its name)."""
    if type(exc) is RuntimeError:
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
