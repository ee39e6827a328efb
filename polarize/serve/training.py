"""Train a live run through the app's backend (``polarize.serve.backend``), reporting its progress.

The app's server must not import JAX nor spend its own threads on a minute of training, and a
hosted demo must not train one run per student at once. So a live run waits its turn in a queue
of its own (``TRAININGS``: one trains at a time on this host, a few may wait), then goes to the
same backend as every other run: one of this server's worker processes (whose priority is lowered
once the run turns long, so that the simulation pages beside it get the CPU first; the worker is
replaced after it), or a worker of the Dask cluster of ``POLARIZE_SCHEDULER`` (which has its own
queue in front of it). The run's reports come back through the backend as ``progress(done,
total)``; a run that overshoots ``timeout`` (wall seconds, from when it starts) is stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from polarize.serve import runner
from polarize.serve.admission import Admission
from polarize.serve.errors import ClusterUnavailable, RunTimeout, ServerBusy, TrainingFailed, in_words
from polarize.sinks.backend import MISSING_MESSAGE, available
from polarize.sinks.config import SinksConfig

__all__ = ["LIVE_TIMEOUT", "TRAININGS", "TrainingFailed", "train_live"]

LIVE_TIMEOUT = 600.0
"""Wall seconds a live run may take once started (a classroom run takes about a minute of CPU)."""

TRAININGS = Admission(1, reserve=0, most_waiting=3)
"""The host's queue of live runs: one trains, three may wait, more are refused (``ServerBusy``)."""


def _train(config: dict[str, Any], *, progress: Callable[[int, int], None]) -> dict[str, Any]:
    """On the backend's worker: train ``config`` (a ``SinksConfig`` as a dict), reporting each chunk."""
    from polarize.sinks.train import train

    return train(SinksConfig.from_dict(config), progress=progress)


def train_live(config: SinksConfig, *, progress: Callable[[int, int], None] | None = None,
               timeout: float = LIVE_TIMEOUT) -> dict[str, Any]:
    """Train one run on the app's backend after waiting for this host's training slot.

    Parameters
    ----------
    config : SinksConfig
        The run (the app offers the classroom size only).
    progress : callable, optional
        Called as ``progress(done, total)`` (optimizer steps) as the run trains.
    timeout : float
        Wall seconds the run may take once it has started.

    Returns
    -------
    dict
        The record ``polarize.sinks.train.train`` returns (``config`` as a plain dict).

    Raises
    ------
    ImportError
        The ``sinks`` extra is not installed here, and the run would be trained here.
    polarize.serve.admission.ServerBusy
        Too many live runs are waiting already.
    TrainingFailed
        The run failed or overshot ``timeout``.
    ClusterUnavailable
        ``POLARIZE_SCHEDULER`` is set and its scheduler does not answer (the run goes to its workers,
        which need the ``sinks`` extra; this server then does not).
    """
    report = progress or (lambda done, total: None)  # reported either way: the limit on a worker reads them
    backend = runner.backend()
    if backend.here and not available():
        raise ImportError(MISSING_MESSAGE)
    slot = TRAININGS.enter() if backend.here else None
    try:
        handle = backend.submit(_train, (config.to_dict(),), key=None, seconds=float(timeout),
                                progress=report)
        return handle.wait()
    except RunTimeout as exc:
        raise TrainingFailed(str(exc)) from None
    except (ImportError, ServerBusy, ClusterUnavailable):  # this server's or the cluster's, said as such
        raise
    except Exception as exc:  # the run's failure, in words
        raise TrainingFailed(in_words(exc)) from None
    finally:
        if slot is not None:
            TRAININGS.leave(slot)
