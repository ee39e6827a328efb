"""Train a run in a child process, one at a time on this host, reporting its progress (for the app);
on the Dask cluster instead when ``POLARIZE_SCHEDULER`` names one (``polarize.serve.cluster``).

The app's server must not import JAX nor spend its own threads on a
minute of training, and a hosted demo must not train one run per student at
once. So a live run goes to a fresh ``python -c`` child (at lowered priority,
so that the simulation pages beside it get the CPU first), after waiting its
turn in a queue of its own: ``polarize.serve.admission.Admission`` with one slot, a
few waiting places and no spare. While it waits, the caller's queue notices
(``polarize.serve.admission.queue_notices``) tell it its place; while it trains, the
child sends a line per chunk of steps, passed on as ``progress(done, total)``.
A run that overshoots ``timeout`` (wall seconds, from when it starts) has its
child killed.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from enum import StrEnum
from typing import Any

from polarize.serve.admission import Admission, ServerBusy
from polarize.serve.cluster import ClusterUnavailable, cluster_training, connected
from polarize.sinks.backend import MISSING_MESSAGE, available
from polarize.sinks.config import SinksConfig

__all__ = ["LIVE_TIMEOUT", "TRAININGS", "TrainingFailed", "train_live"]

LIVE_TIMEOUT = 600.0
"""Wall seconds a live run may take once started (a classroom run takes about a minute of CPU)."""

TRAININGS = Admission(1, reserve=0, most_waiting=3)
"""The host's queue of live runs: one trains, three may wait, more are refused (``ServerBusy``)."""

_CHILD = "from polarize.serve.training import _child_main; _child_main()"
_NICER = 10  # the child's priority, below the simulation workers'
_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")  # one core (XLA: backend.jax)


class _Line(StrEnum):
    """The tag of a line the child writes: ``P done total``, ``R record`` or ``E message``."""

    PROGRESS = "P"
    RESULT = "R"
    ERROR = "E"


_TAGS = {line.value: line for line in _Line}


class TrainingFailed(RuntimeError):
    """A live run failed, overshot its time limit, or its process died; the message says which."""


def _child_main() -> None:
    """In the child: read a config (JSON) on stdin; write ``P done total`` lines, then ``R record``."""
    try:
        os.nice(_NICER)
    except OSError:  # pragma: no cover - not allowed here: train at the same priority
        pass
    try:
        from polarize.sinks.train import train

        config = SinksConfig.from_dict(json.loads(sys.stdin.readline()))
        record = train(config, progress=lambda done, total: print(_Line.PROGRESS, done, total, flush=True))
        print(_Line.RESULT, json.dumps(record, separators=(",", ":")), flush=True)
    except Exception as exc:  # the parent shows it in words
        print(_Line.ERROR, f"{type(exc).__name__}: {exc}", flush=True)


def _lines(stream: Any, inbox: queue.Queue) -> None:
    for line in stream:
        inbox.put(line)
    inbox.put(None)


def _converse(child: subprocess.Popen, progress: Callable[[int, int], None] | None,
              timeout: float) -> dict[str, Any]:
    inbox: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(child.stdout, inbox), daemon=True).start()
    deadline = time.monotonic() + timeout
    while True:
        try:
            line = inbox.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise TrainingFailed(f"the run took longer than {timeout:g} s and was stopped") from None
        if line is None:
            raise TrainingFailed("the training process ended without a result")
        tag, _, rest = line.rstrip("\n").partition(" ")
        kind = _TAGS.get(tag)  # None for any other line (a stray print of a library)
        if kind is _Line.PROGRESS and progress is not None:
            done, total = (int(word) for word in rest.split())
            progress(done, total)
        elif kind is _Line.RESULT:
            return json.loads(rest)
        elif kind is _Line.ERROR:
            raise TrainingFailed(rest)


def train_live(config: SinksConfig, *, progress: Callable[[int, int], None] | None = None,
               timeout: float = LIVE_TIMEOUT) -> dict[str, Any]:
    """Train one run in a child process after waiting for this host's training slot.

    Parameters
    ----------
    config : SinksConfig
        The run (the app offers the classroom size only).
    progress : callable, optional
        Called as ``progress(done, total)`` (optimizer steps) as the child trains.
    timeout : float
        Wall seconds the run may take once it has the slot.

    Returns
    -------
    dict
        The record ``polarize.sinks.train.train`` returns (``config`` as a plain dict).

    Raises
    ------
    ImportError
        The ``sinks`` extra is not installed (the message says how to install it).
    polarize.serve.admission.ServerBusy
        Too many live runs are waiting already.
    TrainingFailed
        The run failed or overshot ``timeout``.
    ClusterUnavailable
        ``POLARIZE_SCHEDULER`` is set and its scheduler does not answer (the run goes to its workers,
        which need the ``sinks`` extra; this server then does not).
    """
    cluster = connected()
    if cluster is not None:
        try:
            return cluster_training(cluster, config.to_dict(), progress, timeout)
        except TimeoutError as exc:
            raise TrainingFailed(str(exc)) from None
        except (ImportError, ServerBusy, ClusterUnavailable):  # this server's or the cluster's, said as such
            raise
        except Exception as exc:  # the worker's failure, in words
            raise TrainingFailed(f"{type(exc).__name__}: {exc}") from None
    if not available():
        raise ImportError(MISSING_MESSAGE)
    slot = TRAININGS.enter()
    try:
        env = {**os.environ, **{name: "1" for name in _THREADS}}
        child = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                 close_fds=True, env=env)
        try:
            assert child.stdin is not None
            try:
                child.stdin.write(json.dumps(config.to_dict()) + "\n")
                child.stdin.close()
            except OSError:
                raise TrainingFailed("the training process did not start") from None
            return _converse(child, progress, timeout)
        finally:
            if child.poll() is None:
                child.kill()
            child.wait()
    finally:
        TRAININGS.leave(slot)
