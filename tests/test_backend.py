"""The backend protocol (``polarize.serve.backend``): the same tests for its three implementations,
this server's worker processes, a real Dask cluster (a ``dask scheduler`` and a worker) and the
calling process, each chosen as the app chooses it (``runner.backend``, from the environment).

A result, a time limit said in words, a cancel, progress in order, and an engine error crossing to
the caller as its own type with its field; then ``serve/`` has no import circle at any depth.
"""

from __future__ import annotations

import os
import threading
import time

import pytest
from support.cluster import ROOT, cluster_fixture

from polarize import ConfigError, Experiment
from polarize.integrate import simulate
from polarize.serve import cluster as app_cluster
from polarize.serve import runner
from polarize.serve.errors import RunCancelled, RunTimeout
from polarize.serve.inprocess import InProcess
from polarize.serve.local import LocalPool

cluster = cluster_fixture(workers=1)
KINDS = {"local": LocalPool, "dask": app_cluster._Cluster, "in-process": InProcess}


@pytest.fixture(params=list(KINDS))
def backend(request, monkeypatch):
    """Each backend, as ``runner.backend()`` picks it from the environment."""
    monkeypatch.delenv("POLARIZE_SCHEDULER", raising=False)
    monkeypatch.delenv("POLARIZE_APP_INPROCESS", raising=False)
    if request.param == "dask":
        pytest.importorskip("distributed")
        monkeypatch.setenv("POLARIZE_SCHEDULER", request.getfixturevalue("cluster")["address"])
    elif request.param == "in-process":
        monkeypatch.setenv("POLARIZE_APP_INPROCESS", "1")
    else:  # the workers import the tests' helpers by name, as the cluster's do
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
        runner.shutdown()  # workers started before, without that path, are replaced
    chosen = runner.backend()
    assert isinstance(chosen, KINDS[request.param])
    yield chosen
    if request.param == "dask":
        app_cluster.disconnect()
    elif request.param == "local":
        runner.shutdown()


def _ticking(steps: int, pause: float):
    from support.backend import ticking

    return ticking, (steps, pause)


def test_a_run_gives_its_result(backend):
    assert backend.submit(max, (2, 3), seconds=60).wait() == 3
    assert backend.submit(simulate, (Experiment(n=4, d=3, seed=7, horizon=10),), seconds=60).wait() \
        .experiment.seed == 7


def test_a_run_reports_its_progress_in_order(backend):
    seen: list[tuple[int, int]] = []
    function, args = _ticking(3, 0.01)
    handle = backend.submit(function, args, seconds=60,
                            progress=lambda done, total: seen.append((done, total)))
    assert handle.wait() == 3
    assert seen == [(1, 3), (2, 3), (3, 3)] and handle.progress() == (3, 3)


def test_a_run_past_its_limit_is_stopped_in_words(backend):
    function, args = _ticking(200, 0.05)  # 10 s
    handle = backend.submit(function, args, seconds=1.0, progress=lambda done, total: None)
    with pytest.raises(RunTimeout, match=r"^the run took longer than 1 s and was stopped$") as caught:
        handle.wait()
    assert caught.value.seconds == 1.0
    assert backend.submit(max, (4, 5), seconds=60).wait() == 5  # and the next run is served


def test_a_cancelled_run_stops_and_says_so(backend):
    function, args = _ticking(600, 0.05)  # 30 s
    handle = backend.submit(function, args, seconds=120, progress=lambda done, total: None)
    outcome: dict[str, BaseException] = {}

    def wait() -> None:
        try:
            handle.wait()
        except BaseException as exc:
            outcome["raised"] = exc

    waiter = threading.Thread(target=wait)
    waiter.start()
    deadline = time.monotonic() + 60
    while handle.progress() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert handle.progress() is not None  # it runs
    handle.cancel()
    waiter.join(timeout=30)
    assert not waiter.is_alive() and isinstance(outcome.get("raised"), RunCancelled)
    done, _ = handle.progress()
    assert done < 600
    assert backend.submit(max, (6, 7), seconds=60).wait() == 7


def test_an_engine_error_crosses_as_its_own_type_with_its_field(backend):
    handle = backend.submit(simulate, (Experiment(normalizer="l2"),), seconds=60)
    with pytest.raises(ConfigError) as caught:
        handle.wait()
    assert caught.value.field == "a_init" and str(caught.value).startswith("a_init: ")
    with pytest.raises(ConfigError):
        handle.wait()  # the same outcome, asked again
