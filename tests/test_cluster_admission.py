"""One admission for the whole cluster (``polarize.serve.cluster_admission``): two replicas, each a process
with its own client, share a real ``dask scheduler`` and ONE one-thread worker.

Runs beyond the cluster's threads wait in one queue, told their place, their time limit not yet
running; a light run gets the reserve beside a heavy run holding the only thread; a replica killed
while holding slots frees them. The heavy runs are ``gated``: they run until the test opens their
gate, so what is asserted is an order of states, never a length of time.
"""

from __future__ import annotations

import time

import pytest
from support.cluster import DaskCluster, Replica

pytest.importorskip("distributed")


def _wait_lines(log, count: int, seconds: float = 120.0) -> list[int]:
    """The pids ``count`` runs wrote to ``log`` as they started (AssertionError after ``seconds``)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        lines = log.read_text().split() if log.exists() else []
        if len(lines) >= count:
            return [int(pid) for pid in lines]
        time.sleep(0.05)
    raise AssertionError(f"{count} runs did not start in {seconds} s")


def _tasks(address: str) -> list[str]:
    """The keys of the tasks the scheduler holds now."""
    from dask.distributed import Client

    with Client(address, timeout="20s", set_as_default=False) as look:
        return look.run_on_scheduler(lambda dask_scheduler: [str(key) for key in dask_scheduler.tasks])


@pytest.fixture
def one_thread(tmp_path):
    """A scheduler with one one-thread worker, two replicas of it, a log of the runs' starts and a gate."""
    with DaskCluster(tmp_path, workers=1) as one:
        replicas = [Replica(one.address), Replica(one.address)]
        gate = tmp_path / "gate"
        try:
            yield one, replicas, tmp_path / "runs.log", gate
        finally:
            gate.touch()  # the gated runs end, wherever they are
            for replica in replicas:
                replica.close()


def _fill(replica: Replica, runs, gate) -> list[str]:
    """``replica``'s heavy (gated) runs, added one at a time until one is told to wait: every slot the
    cluster lends is held (its thread, and its spare one once a run there is heavy). Their names; the
    run numbered k returns k."""
    names: list[str] = []
    while True:
        names.append(f"filler{len(names) + 1}")
        replica.run(names[-1], "gated", str(runs), float(len(names)), str(gate))
        deadline = time.monotonic() + 120
        while len(runs.read_text().split() if runs.exists() else []) < len(names):
            if replica.said(names[-1]):
                return names  # it waits, told its place
            assert time.monotonic() < deadline, f"{names[-1]} neither started nor waited: {replica.events}"
            time.sleep(0.05)


def test_runs_past_the_clusters_threads_wait_told_their_place_their_limit_not_yet_counting(one_thread):
    """Every slot of the cluster held by one replica's heavy runs: the other replica's run waits in the
    cluster's queue, told its place, not yet sent to Dask; it waits longer than its 2 s limit, and once
    a thread is free it runs and is served. (Each replica counted only its own runs: it was sent to
    Dask at once, untold, behind the other's.)"""
    one, (first, second), runs, gate = one_thread
    fillers = _fill(first, runs, gate)
    second.run("light", "counted", str(runs), 0.5, 0.5, timeout=2.0)
    asked = time.monotonic()
    assert second.wait("light", "place") >= 1
    assert not [key for key in _tasks(one.address) if "counted" in key]  # waiting here, not in Dask's queue
    while time.monotonic() - asked < 3.0:  # longer than its limit
        assert "value" not in second.said("light")[-1], second.events
        time.sleep(0.1)
    gate.touch()
    assert second.wait("light", "value") == 0.5
    assert [first.wait(name, "value") for name in fillers] == [float(k) for k in range(1, len(fillers) + 1)]
    assert len(_wait_lines(runs, len(fillers) + 1)) == len(fillers) + 1


def test_a_light_run_gets_the_reserve_beside_a_heavy_run_holding_the_only_thread(one_thread):
    """One replica's heavy run holds the cluster's only thread; the other replica's light run is served
    while the heavy one still runs, on the same worker (it used to wait behind it in Dask's queue)."""
    _, (first, second), runs, gate = one_thread
    first.run("heavy", "gated", str(runs), 1.0, str(gate))
    _wait_lines(runs, 1)
    second.run("light", "counted", str(runs), 2.0, 0.0, timeout=60.0)
    assert second.wait("light", "value", seconds=60.0) == 2.0
    assert first.said("heavy") == [] and not gate.exists()  # the heavy run is still running
    pids = _wait_lines(runs, 2)
    assert len(pids) == 2 and pids[0] == pids[1]  # beside it, on the one worker
    gate.touch()
    assert first.wait("heavy", "value") == 1.0


def test_a_replica_killed_holding_slots_frees_them(one_thread):
    """One replica holds every slot, the other's run waits told its place; the first replica killed, the
    waiting run is served while the killed replica's runs have not ended."""
    _, (first, second), runs, gate = one_thread
    _fill(first, runs, gate)
    second.run("light", "counted", str(runs), 0.5, 0.0, timeout=60.0)
    assert second.wait("light", "place") >= 1
    first.kill()
    assert second.wait("light", "value", seconds=60.0) == 0.5
    assert not gate.exists() and first.proc.poll() is not None  # served with the holders' runs unended


def _tickets(address: str) -> int:
    """How many runs the cluster's admission holds now (waiting, running, or sharing another's)."""
    from dask.distributed import Client

    from polarize.serve.cluster_admission import NAME

    with Client(address, timeout="20s", set_as_default=False) as look:
        return look.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.plugins[NAME].owner))


def test_a_run_another_replica_is_running_already_is_joined_not_queued(one_thread):
    """The cluster full (one replica's heavy runs on its thread and its spare slot): the same run as the
    first, asked by the other replica, is not queued behind them (it would then be computed again, its
    twin's result let go by then) but shares the running one: never told a place, computed once."""
    one, (first, second), runs, gate = one_thread
    fillers = _fill(first, runs, gate)
    second.run("twin", "gated", str(runs), 1.0, str(gate))  # filler1's run: the same task key
    deadline = time.monotonic() + 120
    while _tickets(one.address) < len(fillers) + 1:
        assert time.monotonic() < deadline, second.events
        time.sleep(0.1)
    gate.touch()
    assert second.wait("twin", "value") == 1.0 == first.wait("filler1", "value")
    assert [first.wait(name, "value") for name in fillers] == [float(k) for k in range(1, len(fillers) + 1)]
    assert second.said("twin") == [{"name": "twin", "value": 1.0}]  # never told a place
    assert len(_wait_lines(runs, len(fillers))) == len(fillers)  # filler1's run computed once


def test_a_replica_not_heard_of_for_its_lease_loses_its_slots():
    """A replica stopped or cut off (its connection open, its questions gone) holds its slots only for
    its lease: the scheduler's plugin, on a stand-in for the scheduler, frees them for the next run."""
    import asyncio
    from types import SimpleNamespace

    from polarize.serve.cluster_admission import AdmissionPlugin

    scheduler = SimpleNamespace(handlers={}, clients={"silent", "waiting"}, total_nthreads=1)
    plugin = AdmissionPlugin(reserve=0, lease=60.0)
    asyncio.run(plugin.start(scheduler))
    held = plugin.take("silent")["ticket"]
    waiting = plugin.take("waiting")["ticket"]
    assert plugin._where(held) == (0, 0) and plugin._where(waiting) == (1, 0)
    plugin.heard["silent"] -= 61.0  # its last question, past its lease
    answer = asyncio.run(plugin.places("waiting", [[waiting, 1]], timeout=5.0))
    assert answer == [[waiting, 0, 0]] and plugin._where(held) == (-1, 0)


def test_each_replica_counts_the_cluster_s_runs_for_work_done_ahead(tmp_path):
    """``runner.idle`` (a view made ahead of need runs only while no one's run would wait for it) asks
    the admission its counts: a replica's side of the cluster's queue had none, and every view made
    ahead on a cluster failed ("'SharedAdmission' object has no attribute 'counts'" in the log)."""
    from dask.distributed import Client

    from polarize.serve.cluster_admission import SharedAdmission

    with DaskCluster(tmp_path, workers=1) as one, Client(one.address, set_as_default=False) as mine, \
            Client(one.address, set_as_default=False) as theirs:
        here, there = SharedAdmission(mine, lost=RuntimeError), SharedAdmission(theirs, lost=RuntimeError)
        assert here.counts() == (0, 0) and here.size == 1  # the one worker's one thread
        slot = there.enter()  # the other replica's run holds it
        assert here.counts() == (1, 0)
        there.leave(slot)
        assert here.counts() == (0, 0)
