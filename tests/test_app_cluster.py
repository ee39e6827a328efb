"""The app's runs on a real Dask cluster (``POLARIZE_SCHEDULER``): a ``dask scheduler`` and two
``dask worker`` processes, as ``polarize sweep run --scheduler`` uses them.

The same numbers as the server's own workers give, the same run from two replicas computed once, a
worker lost mid-run survived, an unreachable scheduler said in one line (to visitors arriving together
at once), a scheduler lost and restarted used again without restarting the app, a cluster without
workers said at once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from support.cluster import (
    ROOT,
    DaskCluster,
    cluster_fixture,
    counted,
    noted,
    start_worker,
    unused_address,
    wait_workers,
)

pytest.importorskip("distributed")

from polarize import Experiment
from polarize.budget import within
from polarize.integrate import simulate_within
from polarize.science.basins import basins
from polarize.science.deadline import within_budget
from polarize.science.studies import compare_normalizers
from polarize.serve import cluster as app_cluster
from polarize.serve.runner import RunTimeout, call_with_timeout
from polarize.web.pages import COMPARISONS

cluster = cluster_fixture(workers=2)
LIMIT = 120.0  # seconds: a busy test machine must not cut the runs compared here


@pytest.fixture
def on_cluster(cluster, monkeypatch):
    """``POLARIZE_SCHEDULER`` set to the test cluster for this test (its client closed after)."""
    monkeypatch.setenv("POLARIZE_SCHEDULER", cluster["address"])
    yield cluster
    app_cluster.disconnect()


def _local_and_on_cluster(monkeypatch, address, function, *args):
    monkeypatch.delenv("POLARIZE_SCHEDULER", raising=False)
    here = call_with_timeout(function, *args, timeout=LIMIT)
    monkeypatch.setenv("POLARIZE_SCHEDULER", address)
    try:
        assert app_cluster.connected() is not None
        there = call_with_timeout(function, *args, timeout=LIMIT)
    finally:
        app_cluster.disconnect()
    return here, there


def test_an_explorer_run_gives_the_same_numbers_on_the_cluster(cluster, monkeypatch, flow_tol):
    experiment = Experiment(n=5, seed=3, horizon=1e3)
    here, there = _local_and_on_cluster(monkeypatch, cluster["address"], simulate_within, experiment,
                                        within(LIMIT))
    assert there.status == here.status == "finished" and there.winner == here.winner
    for name in ("one_minus_max", "entropy", "loss"):
        flow_tol.assert_close(getattr(there, name), getattr(here, name), err_msg=name)


def test_a_study_and_a_basin_map_give_the_same_numbers_on_the_cluster(cluster, monkeypatch, flow_tol):
    experiment = Experiment(n=3, seed=1, horizon=300, a_init="gaussian")
    here, there = _local_and_on_cluster(monkeypatch, cluster["address"], within_budget, compare_normalizers,
                                        within(LIMIT), experiment)
    assert there.complete and here.complete
    assert [r.normalizer for r in there.outcome] == [r.normalizer for r in here.outcome]
    for mine, theirs in zip(here.outcome, there.outcome, strict=True):
        assert mine.stayed_on_simplex == theirs.stayed_on_simplex
        assert mine.result.winner == theirs.result.winner
        for name in ("max_s", "entropy", "loss"):
            flow_tol.assert_close(getattr(theirs, name), getattr(mine, name), err_msg=mine.normalizer)
    here, there = _local_and_on_cluster(monkeypatch, cluster["address"], within_budget, basins,
                                        within(LIMIT), experiment, 6)
    assert there.complete and here.complete
    np.testing.assert_array_equal(there.outcome.ensemble.winner, here.outcome.ensemble.winner)
    np.testing.assert_array_equal(there.outcome.naive_holds, here.outcome.naive_holds)


_REPLICA = """
import json, sys
from support.cluster import counted
from polarize.serve.runner import call_with_timeout
print(json.dumps(call_with_timeout(counted, sys.argv[1], 7.0, 3.0, timeout=60)))
"""


def test_the_same_run_from_two_replicas_is_computed_once(on_cluster, tmp_path):
    """Two app processes (replicas) ask for the same run at once: one task, one result for both."""
    log = tmp_path / "runs.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    replicas = [subprocess.Popen([sys.executable, "-c", _REPLICA, str(log)], env=env, cwd=ROOT,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    answers = [replica.communicate(timeout=120) for replica in replicas]
    assert all(replica.returncode == 0 for replica in replicas), [err[-2000:] for _, err in answers]
    results = [json.loads(out) for out, _ in answers]
    assert results[0] == results[1] and results[0]["value"] == 7.0
    assert len(log.read_text().split()) == 1  # the task ran once on the cluster


def test_a_run_whose_worker_is_lost_is_run_again(on_cluster, tmp_path):
    log, answer = tmp_path / "runs.log", {}
    helper = threading.Thread(target=lambda: answer.update(call_with_timeout(counted, str(log), 1.0, 4.0,
                                                                            timeout=120)))
    helper.start()
    try:
        victim = noted(log)[0]
        os.kill(victim, signal.SIGKILL)  # the worker running it dies (no nanny restarts it)
        # A replacement, stopped with the module's cluster: two workers for the tests after this one.
        replacement = start_worker(on_cluster["file"], "replacement", on_cluster["folder"] / "r.log")
        on_cluster["procs"].append(replacement)
        helper.join(timeout=120)
        assert not helper.is_alive()
        pids = [int(pid) for pid in log.read_text().split()]
        assert len(pids) == 2 and pids[0] == victim and answer["pid"] == pids[1] != victim
        wait_workers(on_cluster["address"], 2)
    finally:
        helper.join(timeout=1)


def test_a_run_whose_task_the_scheduler_forgets_is_sent_again(on_cluster, tmp_path):
    """The scheduler cancels the task while this server's client stays connected (Dask forgets a client's
    futures when its connection breaks for a moment on a loaded host; here another client cancels the
    key): the run is sent again and served. It raised Dask's own "timed out after 1 s." or said the
    scheduler was lost."""
    from dask.distributed import Client, Future

    log, answer = tmp_path / "runs.log", {}

    def run() -> None:
        try:
            answer.update(call_with_timeout(counted, str(log), 5.0, 3.0, timeout=LIMIT))
        except Exception as exc:
            answer["raised"] = exc

    helper = threading.Thread(target=run)
    helper.start()
    try:
        noted(log)  # it runs on a worker
        key = app_cluster.task_key(counted, (str(log), 5.0, 3.0))
        with Client(on_cluster["address"], timeout="20s", set_as_default=False) as other:
            other.cancel([Future(key, client=other)], force=True)
        helper.join(timeout=LIMIT)
        assert not helper.is_alive() and "raised" not in answer, answer
        assert answer["value"] == 5.0
    finally:
        helper.join(timeout=1)


def test_the_queue_grows_and_shrinks_with_the_clusters_workers(on_cluster, monkeypatch):
    monkeypatch.setattr(app_cluster, "RESIZE_SECONDS", 0.0)  # look each time
    here = app_cluster.connected()
    assert here is not None and here.admission.size == 2
    added = start_worker(on_cluster["file"], "added", on_cluster["folder"] / "added.log")
    try:
        wait_workers(on_cluster["address"], 3)
        here.resize()
        assert here.admission.size == 3  # a worker added for a course is used without a restart
    finally:
        added.terminate()
        added.wait(timeout=30)
    deadline = time.monotonic() + 60
    while here.admission.size != 2 and time.monotonic() < deadline:
        time.sleep(0.1)
        here.resize()
    assert here.admission.size == 2


def test_a_run_past_the_limit_is_given_up_and_said(on_cluster, tmp_path):
    with pytest.raises(RunTimeout, match="longer than 1 s"):
        call_with_timeout(counted, str(tmp_path / "slow.log"), 2.0, 5.0, timeout=1.0)


def test_the_time_limit_counts_from_the_runs_start_on_a_worker(tmp_path, monkeypatch):
    """Another replica's 10 s run holds the only worker: this server's 0.5 s run waits in Dask's queue
    longer than its 5 s limit, then runs, and is served (it was cut at the limit before it had begun)."""
    from dask.distributed import Client

    runs = tmp_path / "runs.log"
    with DaskCluster(tmp_path, workers=1) as own:
        monkeypatch.setenv("POLARIZE_SCHEDULER", own.address)
        with Client(own.address, timeout="20s", set_as_default=False) as other_replica:
            try:
                assert app_cluster.connected() is not None  # connected before: the run is sent at once
                ahead = other_replica.submit(counted, str(runs), 0.0, 10.0, key="the-other-replicas-run")
                noted(runs)  # it holds the worker now, for 10 s
                answer = call_with_timeout(counted, str(runs), 1.0, 0.5, timeout=5.0)
                assert answer["value"] == 1.0 and ahead.result(timeout=60)["value"] == 0.0
                assert len(runs.read_text().split()) == 2  # the other's, then this one (one worker thread)
            finally:
                app_cluster.disconnect()


def test_an_unreachable_scheduler_is_one_line_naming_the_variable(monkeypatch):
    address = unused_address()
    monkeypatch.setenv("POLARIZE_SCHEDULER", address)
    monkeypatch.setattr(app_cluster, "CONNECT_SECONDS", 2)
    with pytest.raises(app_cluster.ClusterUnavailable, match="POLARIZE_SCHEDULER") as caught:
        call_with_timeout(counted, "/dev/null", 0.0, 0.0, timeout=10)
    assert "\n" not in str(caught.value) and address in str(caught.value)
    from polarize.web.failures import failure_view

    view = failure_view(caught.value)
    assert view.passing and "cannot be reached" in view.error and "POLARIZE_SCHEDULER" in view.error
    app_cluster.disconnect()


def test_visitors_arriving_together_at_an_unreachable_scheduler_share_one_attempt(monkeypatch):
    """Six visitors at once: one connection attempt, all six told its outcome, none waiting for another's
    attempt; the next visit once the failure is no longer remembered tries again."""
    address = unused_address()
    monkeypatch.setenv("POLARIZE_SCHEDULER", address)
    monkeypatch.setattr(app_cluster, "CONNECT_SECONDS", 2)
    attempts, made = [], app_cluster._Cluster
    monkeypatch.setattr(app_cluster, "_Cluster", lambda to: attempts.append(to) or made(to))
    answers: list[BaseException] = []

    def visit() -> None:
        try:
            call_with_timeout(counted, "/dev/null", 0.0, 0.0, timeout=10)
        except Exception as exc:
            answers.append(exc)

    visitors = [threading.Thread(target=visit) for _ in range(6)]
    try:
        for visitor in visitors:
            visitor.start()
        for visitor in visitors:
            visitor.join(timeout=120)
        assert len(answers) == 6
        for answer in answers:
            assert isinstance(answer, app_cluster.ClusterUnavailable)
            assert "cannot be reached" in str(answer) and address in str(answer) and "\n" not in str(answer)
        assert attempts == [address]  # one attempt for all six (one each, one after another, before)
        monkeypatch.setattr(app_cluster, "RETRY_SECONDS", 0.0)
        with pytest.raises(app_cluster.ClusterUnavailable, match="cannot be reached"):
            call_with_timeout(counted, "/dev/null", 0.0, 0.0, timeout=10)
        assert attempts == [address, address]
    finally:
        app_cluster.disconnect()


def test_a_scheduler_lost_then_restarted_is_used_again_without_restarting_the_app(tmp_path, monkeypatch):
    """Lost for longer than Dask's client tries to reconnect: the runs meanwhile fail in one line, and the
    first run once a scheduler is back on the same address is served (it was "Client is closed" until
    the app was restarted)."""
    monkeypatch.setattr(app_cluster, "CONNECT_SECONDS", 3)  # Dask's client gives up reconnecting after it
    log = str(tmp_path / "runs.log")
    with DaskCluster(tmp_path, workers=1) as own:
        monkeypatch.setenv("POLARIZE_SCHEDULER", own.address)
        try:
            assert call_with_timeout(counted, log, 1.0, 0.0, timeout=LIMIT)["value"] == 1.0
            here = app_cluster.connected()
            own.lose_scheduler()
            with pytest.raises(app_cluster.ClusterUnavailable, match="POLARIZE_SCHEDULER") as caught:
                call_with_timeout(counted, log, 2.0, 0.0, timeout=LIMIT)
            assert own.address in str(caught.value) and "\n" not in str(caught.value)
            deadline = time.monotonic() + 60
            while here.client.status != "closed" and time.monotonic() < deadline:
                time.sleep(0.1)
            assert here.client.status == "closed"  # Dask's client has given up for good
            own.restart()
            monkeypatch.setattr(app_cluster, "RETRY_SECONDS", 0.0)  # a failure meanwhile is not waited out
            assert call_with_timeout(counted, log, 3.0, 0.0, timeout=LIMIT)["value"] == 3.0
        finally:
            app_cluster.disconnect()


def test_a_cluster_without_workers_is_said_at_once(tmp_path, monkeypatch):
    """No worker: said at once, not after the time limit; a worker that joins is used by the next run; a run
    whose last worker goes is told so rather than waiting out its limit."""
    from polarize.web.failures import failure_view

    runs = tmp_path / "runs.log"
    log = str(runs)
    monkeypatch.setattr(app_cluster, "RESIZE_SECONDS", 0.0)  # look at the workers at each step
    monkeypatch.setattr(app_cluster, "REJOIN_SECONDS", 2.0)  # no worker comes back here
    with DaskCluster(tmp_path, workers=0) as bare:
        monkeypatch.setenv("POLARIZE_SCHEDULER", bare.address)
        try:
            with pytest.raises(app_cluster.NoWorkers, match="has no workers") as caught:
                call_with_timeout(counted, log, 1.0, 0.0, timeout=20)  # was: the 20 s waited, then RunTimeout
            view = failure_view(caught.value)
            assert "has no workers" in view.error and bare.address in view.error and "\n" not in view.error
            late = start_worker(bare.file, "late", tmp_path / "late.log")
            bare.procs.append(late)
            wait_workers(bare.address, 1)
            assert call_with_timeout(counted, log, 2.0, 0.0, timeout=LIMIT)["value"] == 2.0
            answer: dict[str, BaseException] = {}

            def wait_for_a_long_run() -> None:
                try:
                    call_with_timeout(counted, log, 3.0, 60.0, timeout=LIMIT)
                except Exception as exc:
                    answer["raised"] = exc

            waiting = threading.Thread(target=wait_for_a_long_run)
            waiting.start()
            deadline = time.monotonic() + 60
            while len(runs.read_text().split()) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            late.kill()  # the only worker, mid-run
            waiting.join(timeout=60)
            assert not waiting.is_alive()
            assert isinstance(answer.get("raised"), app_cluster.NoWorkers)
        finally:
            app_cluster.disconnect()


def test_a_run_whose_only_worker_is_restarted_waits_for_it(tmp_path, monkeypatch):
    """The only worker killed mid-run and started again once the waiting run has seen the cluster
    without workers twice: the run is done by the new worker (it was told NoWorkers at the first look,
    though a nanny or an orchestrator restarts a worker within seconds; ``REJOIN_SECONDS``)."""
    runs = tmp_path / "runs.log"
    workerless, check = [], app_cluster._Cluster.check

    def looked(cluster) -> None:
        try:
            check(cluster)
        except app_cluster.NoWorkers:
            workerless.append(time.monotonic())
            raise

    monkeypatch.setattr(app_cluster, "RESIZE_SECONDS", 0.0)  # look at the workers at each step
    monkeypatch.setattr(app_cluster._Cluster, "check", looked)
    with DaskCluster(tmp_path, workers=1) as one:
        monkeypatch.setenv("POLARIZE_SCHEDULER", one.address)
        answer: dict[str, object] = {}

        def run() -> None:
            try:
                answer.update(call_with_timeout(counted, str(runs), 1.0, 4.0, timeout=LIMIT))
            except Exception as exc:
                answer["raised"] = exc

        try:
            waiting = threading.Thread(target=run)
            waiting.start()
            deadline = time.monotonic() + 60
            victim = noted(runs)[0]
            os.kill(victim, signal.SIGKILL)
            while len(workerless) < 2 and waiting.is_alive() and time.monotonic() < deadline + 60:
                time.sleep(0.05)
            again = start_worker(one.file, "again", tmp_path / "again.log")
            one.procs.append(again)
            waiting.join(timeout=LIMIT)
            assert "raised" not in answer, answer
            assert answer["value"] == 1.0 and answer["pid"] != victim
        finally:
            app_cluster.disconnect()


def test_an_unreachable_scheduler_does_not_stop_the_app_starting(monkeypatch):
    """``prestart`` (the app's first request) reads the variable, it does not connect."""
    from polarize.serve import runner

    monkeypatch.setenv("POLARIZE_SCHEDULER", "tcp://127.0.0.1:9")
    monkeypatch.setattr(runner, "connected", lambda: pytest.fail("prestart connected"))
    runner.prestart()  # neither raises nor starts local workers


def test_a_malformed_scheduler_is_refused_before_any_run(monkeypatch):
    from polarize.config import ConfigError
    from polarize.env import environment_problem

    monkeypatch.setenv("POLARIZE_SCHEDULER", "udp://somewhere:8786")
    assert environment_problem() == "POLARIZE_SCHEDULER: scheme must be tcp:// or tls://, got " \
                                    "'udp://somewhere:8786'"
    with pytest.raises(ConfigError, match="POLARIZE_SCHEDULER"):
        call_with_timeout(counted, "/dev/null", 0.0, 0.0, timeout=10)


_LINK_KEYS = """
import concurrent.futures

from polarize.serve.cluster import task_key
from polarize.web import limited
from polarize.web.links import read_link
from polarize.web.pages import COMPARISONS, EXPLORER


def submitted(function, *args, timeout=None):
    print(page.name, task_key(function, args))
    raise RuntimeError("the key is all this process needs")


class Submitted:  # what runner.call_all hands a comparison page: futures, failed once their keys are out

    def __init__(self, calls, timeout=None):
        self.futures = [concurrent.futures.Future() for _ in calls]
        for (function, args), future in zip(calls, self.futures):
            print(page.name, task_key(function, args))
            future.set_exception(RuntimeError("the key is all this process needs"))

    def completed(self):
        yield from range(len(self.futures))


limited.call_with_timeout = submitted
limited.call_all = Submitted
for page, link in ((EXPLORER, {"n": "5", "seed": "3"}), *((p, {}) for p in COMPARISONS)):
    values, _ = read_link(page, link)
    page.show(page.make_job(page.settle(values)))
"""


def test_the_same_link_has_the_same_key_on_every_replica():
    """Issue 43: the Explorer's resolved experiment holds arrays (``FrozenArray``) whose pickle carried
    Python's hash, salted per process, so two replicas gave the same link two task keys and the
    cluster computed it twice. Each replica here is a process with its own hash seed, opening the
    same links; the keys are the ones their runs are submitted with."""
    keys = [subprocess.run([sys.executable, "-c", _LINK_KEYS], capture_output=True, text=True, check=True,
                           cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed})
            .stdout for seed in ("1", "2")]
    assert "explorer polarize-polarize.integrate.simulate_within-" in keys[0]
    assert keys[0] == keys[1]
    lines = keys[0].splitlines()
    assert len(set(lines)) == len(lines) >= 2  # one a run, none alike
    assert {line.split()[0] for line in lines} == {"explorer", *(p.name for p in COMPARISONS)}


def test_a_live_training_on_the_cluster_reports_its_progress_and_matches_one_here(on_cluster):
    pytest.importorskip("jax")
    from test_sinks_training import _tiny

    from polarize.serve.training import train_live
    from polarize.sinks.train import train

    config = _tiny("softmax", True, batch=16, steps=20, train_size=400, eval_size=32, checkpoints=1)
    seen = []
    record = train_live(config, progress=lambda done, total: seen.append((done, total)), timeout=300)
    assert seen and seen[-1] == (20, 20)  # a line per chunk, from the worker
    here = train(config)
    assert record["config"] == config.to_dict()
    assert record["history"][-1]["loss"] == pytest.approx(here["history"][-1]["loss"], rel=1e-4)


def test_a_live_training_past_its_time_stops_on_its_worker(on_cluster):
    pytest.importorskip("jax")
    from test_sinks_training import _tiny

    from polarize.serve.training import TrainingFailed, train_live

    with pytest.raises(TrainingFailed, match=r"longer than 0\.5 s"):
        train_live(_tiny("softmax", True, steps=2000), timeout=0.5)


class _LateFuture:
    """A Dask future already done whose ``result(timeout=...)`` still raises its wait's ``TimeoutError``,
    as Dask's did in a course of 1,000 (the gather, under load, took longer than the wait)."""

    def __init__(self):
        self.callbacks = []

    def done(self):
        return True

    def cancelled(self):
        return False

    def add_done_callback(self, callback):
        callback(self)

    def result(self, timeout=None):
        if timeout is not None:
            raise TimeoutError("timed out after 1 s.")
        return "the run's result"


def test_a_run_done_is_taken_even_when_dasks_timed_wait_would_raise():
    finished = threading.Event()
    future = _LateFuture()
    future.add_done_callback(lambda _: finished.set())
    assert app_cluster._result_within(future, finished, 1.0) == "the run's result"
