"""Sweeps on a real Dask cluster: a scheduler and workers started with the ``dask`` command line.

Every row is checked against ``simulate`` of its cell run here; the fault tests kill a
worker, interrupt a sweep, truncate a result file, and check that each cell ends up
once. One cluster (scheduler + 2 workers on 127.0.0.1) serves the whole module.
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

pytest.importorskip("distributed")

from polarize.cli import main
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
