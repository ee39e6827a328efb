"""Sweeps on a real Dask cluster: a scheduler and workers started with the ``dask`` command line.

Every row is checked against ``simulate`` of its cell run here; the fault tests kill a
worker, interrupt a sweep, truncate a result file, and check that each cell ends up
once. One cluster (scheduler + 2 workers on 127.0.0.1) serves the whole module.

``--scheduler`` is honoured: a malformed or unreachable address is refused before any work, and every
task of a scheduler's run runs on that cluster; Ctrl-C while the local cluster starts says one line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from support.cluster import cluster_fixture
from support.cluster import start_worker as _worker
from support.cluster import wait_workers as _wait_workers
from support.sweeps import runs_sweep as _runs_sweep

pytest.importorskip("distributed")

from polarize.cli import main
from polarize.fields import ConfigError
from polarize.integrate import simulate
from polarize.sweeps import load, read_sweep, run_sweep

GRID24 = """kind = "runs"
name = "twenty-four"
[base]
horizon = 200
a_init = "gaussian"
[grid]
normalizer = ["softmax", "sparsemax", "l2"]
loss = ["logistic", "square"]
seed = {from = 0, to = 3}
"""


cluster = cluster_fixture(workers=2)


def _sweep_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    return path


def test_every_row_is_simulate_of_its_cell(cluster, tmp_path, capsys, flow_tol):
    path = _sweep_file(tmp_path, GRID24)
    out = tmp_path / "results"
    assert main(["sweep", "run", str(path), "-o", str(out), "--scheduler", cluster["address"]]) == 0
    printed = capsys.readouterr().out
    assert "24 grid cells" in printed and "dashboard http" in printed and "done: 24 cells run" in printed
    frame = load(out)
    sweep = read_sweep(path)
    assert len(frame) == 24 and frame["hash"].is_unique
    assert sorted(map(tuple, frame[["normalizer", "loss", "seed"]].values.tolist())) == sorted(
        (c["normalizer"], c["loss"], c["seed"]) for c in sweep.cells())
    assert frame["worker"].nunique() >= 2  # the cluster's workers ran cells (and the client its sample)
    for row in frame.itertuples():
        result = simulate(sweep.config({"normalizer": row.normalizer, "loss": row.loss, "seed": row.seed}))
        assert row.status == result.status == "finished", row.message
        assert row.winner == result.winner
        flow_tol.assert_close(row.one_minus_max, result.one_minus_max[-1])
        flow_tol.assert_close(row.entropy_end, result.entropy[-1])
        flow_tol.assert_close(row.loss_end, result.loss[-1])
        assert row.t_end == result.t[-1] == 200
        assert row.polarized == (result.one_minus_max[-1] < 0.01)
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["name"] == "twenty-four" and manifest["environment"]["versions"]["polarize"]
    assert manifest["sweep"]["grid"]["seed"] == [0, 1, 2, 3]


def test_query_prints_a_table_and_writes_csv(cluster, tmp_path, capsys):
    path = _sweep_file(tmp_path, GRID24.replace("seed = {from = 0, to = 3}", "seed = [0, 1]"))
    out = tmp_path / "results"
    assert main(["sweep", "run", str(path), "-o", str(out), "--scheduler", cluster["address"]]) == 0
    capsys.readouterr()
    sql = "SELECT normalizer, count(*) AS n, avg(polarized::int) AS share FROM runs GROUP BY 1 ORDER BY 1"
    assert main(["sweep", "query", str(out), sql]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["normalizer", "n", "share"] and [ln.split()[:2] for ln in lines[1:]] == [
        ["l2", "4"], ["softmax", "4"], ["sparsemax", "4"]]
    assert main(["sweep", "query", str(out), sql, "-o", str(tmp_path / "q.csv")]) == 0
    assert (tmp_path / "q.csv").read_text().splitlines()[0] == "normalizer,n,share"
    assert main(["sweep", "query", str(out), "SELECT nope FROM runs"]) == 2
    assert capsys.readouterr().err.startswith("polarize: error: query: ")


def test_interrupted_then_rerun_does_only_the_missing_cells(cluster, tmp_path):
    sweep = read_sweep(_sweep_file(tmp_path, GRID24.replace('"sparsemax", ', "")))  # 16 cells
    out = tmp_path / "results"

    def stop_after_six(progress):
        if progress.done >= 6:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(sweep, out, scheduler=cluster["address"], progress=stop_after_six)
    first = {p.name: p.stat().st_mtime_ns for p in out.glob("task-*.parquet")}
    assert 6 <= len(first) < 16 and not list(out.glob(".tmp-*"))
    again = run_sweep(sweep, out, scheduler=cluster["address"])
    assert (again.skipped, again.to_run, again.done) == (len(first), 16 - len(first), 16 - len(first))
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("task-*.parquet") if p.name in first} == first
    frame = load(out)
    assert len(frame) == 16 and frame["hash"].is_unique and (frame["status"] == "finished").all()


def test_a_truncated_file_is_redone_and_a_failing_cell_is_a_row(cluster, tmp_path):
    text = 'kind = "runs"\n[base]\nhorizon = 100\n[grid]\nnormalizer = ["softmax", "l2"]\nseed = [0, 1, 2]\n'
    sweep = read_sweep(_sweep_file(tmp_path, text))
    out = tmp_path / "results"
    run_sweep(sweep, out, scheduler=cluster["address"])
    frame = load(out)
    failed = frame[frame["normalizer"] == "l2"]
    assert len(failed) == 3 and (failed["status"] == "error").all()
    assert failed["message"].str.contains("undefined").all() and failed["winner"].isna().all()
    victim = out / f"task-{frame.loc[0, 'task']}.parquet"
    victim.write_bytes(victim.read_bytes()[:100])
    again = run_sweep(sweep, out, scheduler=cluster["address"], sample=False)
    assert (again.skipped, again.done) == (5, 1)  # the error rows are results too: not redone
    frame2 = load(out)
    assert len(frame2) == 6 and frame2["hash"].is_unique
    assert frame2.drop(columns=["seconds", "worker"]).equals(frame.drop(columns=["seconds", "worker"]))


def test_a_worker_killed_mid_sweep_still_gives_every_cell_once(cluster, tmp_path):
    extra = _worker(cluster["file"], "victim", cluster["folder"] / "victim.log")
    try:
        addresses = _wait_workers(cluster["address"], 3)
        text = GRID24.replace('["softmax", "sparsemax", "l2"]', '["sparsemax", "relu"]').replace(
            "horizon = 200", "horizon = 2000").replace("{from = 0, to = 3}", "{from = 0, to = 7}")
        sweep = read_sweep(_sweep_file(tmp_path, text))  # 32 cells of a fifth of a second or more
        out, outcome = tmp_path / "results", {}
        runner = threading.Thread(target=lambda: outcome.update(p=run_sweep(
            sweep, out, scheduler=cluster["address"], sample=False)))
        runner.start()
        _kill_when_busy(cluster["address"], addresses["victim"], extra)
        runner.join(timeout=120)
        assert not runner.is_alive()
    finally:
        if extra.poll() is None:
            extra.kill()
    assert extra.wait(timeout=10) == -signal.SIGKILL
    frame = load(out)
    assert outcome["p"].failed == 0 and outcome["p"].done == 32
    assert len(frame) == 32 and frame["hash"].is_unique and (frame["status"] == "finished").all()


def _kill_when_busy(address: str, victim: str, proc: subprocess.Popen) -> None:
    """SIGKILL the victim worker once it holds a task (so that the task must be redone elsewhere)."""
    from dask.distributed import Client

    with Client(address, timeout="20s") as client:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not client.processing().get(victim):
            time.sleep(0.02)
        assert client.processing().get(victim), "the victim never got a task"
    os.kill(proc.pid, signal.SIGKILL)


def test_the_default_is_a_local_cluster(tmp_path, capsys):
    path = _sweep_file(tmp_path, 'kind = "runs"\n[base]\nhorizon = 10\n[grid]\nseed = [0, 1, 2]\n')
    assert main(["sweep", "run", str(path), "-o", str(tmp_path / "r"), "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "dask: 1 workers" in out and "done: 3 cells run (0 with errors, 0 failed)" in out
    assert len(load(tmp_path / "r")) == 3


ENSEMBLE = """kind = "ensemble"
[base]
n = 3
d = 3
horizon = 100
[grid]
scale = [0.5, 3.0]
seed = [0, 1]
[ensemble]
starts = 500
chunk = 200
rows = "ROWS"
"""


def test_an_ensemble_sweep_splits_cells_into_chunks_and_counts_every_start(cluster, tmp_path):
    by_cell = tmp_path / "cells"
    run_sweep(read_sweep(_sweep_file(tmp_path, ENSEMBLE.replace("ROWS", "cells"))), by_cell,
              scheduler=cluster["address"])
    counts = load(by_cell)
    assert len(counts) == 4 * 3 and counts["hash"].is_unique  # 500 starts in chunks of 200, 200, 100
    totals = counts.groupby(["scale", "seed"])["n_starts"].sum()
    assert (totals == 500).all() and len(totals) == 4
    assert all(sum(w) == n for w, n in zip(counts["wins"], counts["n_starts"], strict=True))
    by_start = tmp_path / "starts"
    run_sweep(read_sweep(_sweep_file(tmp_path, ENSEMBLE.replace("ROWS", "starts"))), by_start,
              scheduler=cluster["address"])
    starts = load(by_start)
    assert len(starts) == 2000 and starts.groupby(["scale", "seed"])["start"].nunique().eq(500).all()
    # the same starts, counted two ways: per chunk, and one row each
    naive = starts.groupby(["scale", "seed"])["naive_holds"].sum()
    assert naive.to_dict() == counts.groupby(["scale", "seed"])["n_naive"].sum().to_dict()


def test_a_sinks_sweep_without_jax_says_what_is_missing(tmp_path, capsys, monkeypatch):
    import polarize.sinks.backend as backend

    monkeypatch.setattr(backend, "available", lambda: False)
    path = _sweep_file(tmp_path, 'kind = "sinks"\n[grid]\nvariant = ["softmax"]\n')
    assert main(["sweep", "run", str(path), "-o", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("polarize: error: kind: sinks sweeps: ") and "polarize[sinks]" in err


@pytest.mark.slow
def test_a_sinks_cell_is_the_training_of_its_config(tmp_path):
    pytest.importorskip("jax")
    from polarize.sinks.metrics import sink_heads
    from polarize.sweeps.tasks import make_cells, make_tasks, run_task

    sweep = read_sweep(_sweep_file(tmp_path, 'kind = "sinks"\n[base]\nwidth = 8\nheads = 2\nsteps = 3\n'
                                   'train_size = 32\neval_size = 8\nbatch = 4\ncheckpoints = 1\n'
                                   '[grid]\nvariant = ["sigmoid-unnormalized"]\nseed = [3]\n'))
    row = run_task(make_tasks(sweep, make_cells(sweep))[0])[0].to_pylist()[0]
    record = json.loads(row["run"])  # the training's own record (without its attention maps)
    assert record["config"] == sweep.config({"variant": "sigmoid-unnormalized", "seed": 3}).to_dict()
    assert record["config"]["steps"] == 3 and record["history"][-1]["step"] == 3
    assert row["status"] == "finished" and row["variant"] == "sigmoid-unnormalized" and row["seed"] == 3
    assert row["accuracy"] == record["accuracy"]
    assert row["sink_scores"] == [v for layer in record["sink_scores"] for v in layer]
    assert [row["sink_l1_h0"], row["sink_l1_h1"]] == record["sink_scores"][1]
    assert row["sinks"] == int(sink_heads(record["sink_scores"], record["accuracy"]).sum())


# ---- --scheduler honoured: refused before any work when malformed or unreachable --------------------


@pytest.mark.parametrize("address", ["nonsense", "tcp://", "tcp://host", "tcp://host:port", "127.0.0.1:8786",
                                     "", 8786])
def test_a_malformed_scheduler_is_refused_before_any_work(tmp_path, monkeypatch, address):
    from polarize.serve import cluster as app_cluster
    from polarize.sweeps import run_sweep

    monkeypatch.setattr(app_cluster, "CONNECT_SECONDS", 2)  # 127.0.0.1:8786: nobody answers, 10 s otherwise
    out = tmp_path / "results"
    with pytest.raises(ConfigError) as info:
        run_sweep(_runs_sweep(), out, scheduler=address)
    assert info.value.field == "scheduler" and "\n" not in str(info.value)
    assert not out.exists()


def test_the_command_line_refuses_a_malformed_scheduler_in_one_line(tmp_path, capsys):
    from polarize.cli import main

    path = tmp_path / "s.toml"
    path.write_text('kind = "runs"\n[base]\nhorizon = 10\n[grid]\nseed = [0, 1]\n')
    out = tmp_path / "results"
    assert main(["sweep", "run", str(path), "-o", str(out), "--scheduler", "tcp://host:port"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("polarize: error: scheduler: ") and err.count("\n") == 1 and not out.exists()


def test_an_unreachable_scheduler_is_refused_before_any_work(tmp_path, monkeypatch):
    import socket

    from polarize.serve import cluster as app_cluster
    from polarize.sweeps import run_sweep

    monkeypatch.setattr(app_cluster, "CONNECT_SECONDS", 2)  # how long it tries is not what is tested
    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "results"
    with pytest.raises(ConfigError) as info:
        run_sweep(_runs_sweep(), out, scheduler=f"tcp://127.0.0.1:{port}")
    assert info.value.field == "scheduler" and not out.exists()


@pytest.fixture(scope="module")
def dask_cluster(cluster):
    """The module's cluster, under the name the scheduler tests below take it by."""
    return cluster


def test_every_task_of_a_scheduler_run_runs_on_that_cluster(dask_cluster, tmp_path):
    import os

    from polarize.sweeps import load, run_sweep

    progress = run_sweep(_runs_sweep(), tmp_path / "two", scheduler=dask_cluster["address"])
    frame = load(tmp_path / "two")
    assert progress.done == 2 and len(frame) == 2
    assert not any(w.endswith(f":{os.getpid()}") for w in frame["worker"]), list(frame["worker"])


def test_a_sweep_takes_its_client_from_the_apps_dask_backend(dask_cluster, tmp_path, monkeypatch):
    """One place makes Dask clients (``polarize.serve.cluster``): the sweep reaches the scheduler with it
    before any work, runs its tasks through it, and closes it."""
    import contextlib

    from polarize.serve import cluster as backend
    from polarize.sweeps import run as sweep_run

    made, real = [], backend.dask_client

    @contextlib.contextmanager
    def recorded(address=None, *, workers=None):
        with real(address, workers=workers) as client:
            made.append((address, client))
            yield client

    monkeypatch.setattr(sweep_run, "dask_client", recorded)
    progress = run_sweep(_runs_sweep(), tmp_path / "r", scheduler=dask_cluster["address"])
    assert progress.done == 2 and len(load(tmp_path / "r")) == 2
    assert [address for address, _ in made] == [dask_cluster["address"]] * 2  # reached first, then the run
    assert all(client.status == "closed" for _, client in made)


# ---- Ctrl-C while the local cluster starts -----------------------------------------------------------


def test_ctrl_c_while_the_local_cluster_starts_says_one_line(tmp_path):
    """SIGINT to the whole process group (as a terminal sends it) just as the cluster starts."""
    import os
    import signal
    import subprocess
    import sys

    pytest.importorskip("distributed")
    root = Path(__file__).resolve().parents[1]
    path = tmp_path / "s.toml"
    path.write_text('kind = "runs"\n[base]\nhorizon = 10\n[grid]\nseed = {from = 0, to = 7}\n')
    proc = subprocess.Popen([sys.executable, "-m", "polarize", "sweep", "run", str(path), "-o",
                             str(tmp_path / "r"), "--workers", "2"], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(root)},
                            start_new_session=True)
    try:
        for line in proc.stdout:  # the sample is done: the cluster starts next
            if line.startswith("estimate from"):
                break
        _wait_for_workers_starting(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("\r")]
    after = lines[next(k for k, line in enumerate(lines) if "interrupted" in line):]
    assert len(after) <= 2 and "Traceback" not in err, err


def _wait_for_workers_starting(pid: int) -> None:
    """Until ``pid`` has a worker process importing Dask (``spawn_main``, with a C extension of Dask's
    imports loaded): the moment a Ctrl-C made it print its traceback."""
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
                if int(stat.rsplit(")", 1)[1].split()[1]) != pid or b"spawn_main" not in cmdline:
                    continue
                maps = (entry / "maps").read_text()
            except (OSError, ValueError, IndexError):
                continue
            if "yaml" in maps or "msgpack" in maps or "psutil" in maps:
                return
        time.sleep(0.01)
    pytest.fail("no worker process started")
