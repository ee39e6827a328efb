"""A sweep on a local Dask cluster against the same cells in a plain loop, the per-task overhead,
and an ensemble sweep of many starts.

    python benchmarks/sweep.py                 # 200 cells, 2 workers, 10^6 starts (a few minutes)
    python benchmarks/sweep.py --quick         # 24 cells, 10^4 starts (what the test suite runs)

The cells are the default preset from Gaussian logits (four normalizers x seeds, horizon 1000).
The sweep's time is from submitting the first task to writing the last file, the cluster
already started and its workers warm (its start-up is printed apart); the loop runs
``simulate`` on each cell's config in this process. Both give each cell's winner, compared here.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from polarize import simulate
from polarize.sweeps import load, parse_sweep, run_sweep


def _runs(cells: int):
    seeds = max(1, cells // 4)
    return parse_sweep({"kind": "runs", "name": "bench", "base": {"horizon": 1000, "a_init": "gaussian"},
                        "grid": {"normalizer": ["softmax", "sparsemax", "relu", "l2"],
                                 "seed": {"from": 0, "to": seeds - 1}}})


def _empty(cells: int):
    """Runs that do next to nothing: what is left is the cost of a task (send, run, return, write)."""
    return parse_sweep({"kind": "runs", "name": "empty", "base": {"horizon": 1e-9, "samples": 2},
                        "grid": {"seed": {"from": 0, "to": cells - 1}}})


def _timed_sweep(sweep, address: str) -> tuple[float, Path]:
    folder = Path(tempfile.mkdtemp(prefix="polarize-bench-"))
    begin = time.perf_counter()
    run_sweep(sweep, folder, scheduler=address, sample=False)
    return time.perf_counter() - begin, folder


def _cpu(processes) -> float:
    """CPU seconds (user + system) the processes have used so far."""
    return sum(sum(p.cpu_times()[:2]) for p in processes)


def _task_cost(cells: int, address: str, processes) -> tuple[float, float, float]:
    """Per near-empty task: CPU seconds of the workers, of this process (client and scheduler), and
    the wall time of the sweep. CPU time is what a task costs whatever else the machine runs; on a
    busy machine the wall time also holds the waits for a core."""
    begin = [_cpu(processes[1:]), _cpu(processes[:1])]
    wall, folder = _timed_sweep(_empty(cells), address)
    shutil.rmtree(folder, ignore_errors=True)
    return (_cpu(processes[1:]) - begin[0]) / cells, (_cpu(processes[:1]) - begin[1]) / cells, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="24 cells and 10^4 starts")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--starts", type=float, help="ensemble starts (default 1e6, quick 1e4)")
    args = parser.parse_args()
    cells = 24 if args.quick else 200
    starts = int(args.starts or (1e4 if args.quick else 1e6))

    import psutil  # a dependency of dask.distributed
    from dask.distributed import Client, LocalCluster

    begin = time.perf_counter()
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           dashboard_address=":0")
    with Client(cluster) as client:
        processes = [psutil.Process()] + [psutil.Process(pid) for pid in client.run(os.getpid).values()]
    startup = time.perf_counter() - begin
    try:
        _task_cost(cells, cluster.scheduler_address, processes)  # warms the workers up (imports, solver)
        worker_cpu, client_cpu, empty_wall = _task_cost(4 * cells, cluster.scheduler_address, processes)
        sweep = _runs(cells)
        wall, folder = _timed_sweep(sweep, cluster.scheduler_address)
        frame = load(folder)
        begin = time.perf_counter()
        loop = [simulate(sweep.config(c)).winner for c in sweep.cells()]
        loop_wall = time.perf_counter() - begin
        same = sum(int(w) == loop[i] for i, w in zip(frame["cell"], frame["winner"], strict=True))
        big = parse_sweep({"kind": "ensemble", "name": "odds", "base": {"n": 3, "d": 3, "horizon": 1e3},
                           "grid": {"scale": [0.5, 2.0]},
                           "ensemble": {"starts": starts // 2, "chunk": min(50_000, starts // 4)}})
        ens_wall, ens_folder = _timed_sweep(big, cluster.scheduler_address)
        ens = load(ens_folder)
    finally:
        cluster.close()
    for f in (folder, ens_folder):
        shutil.rmtree(f, ignore_errors=True)
    print(f"local cluster of {args.workers} workers: started in {startup:.1f} s "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"runs sweep, {cells} cells: {wall:.2f} s on the cluster, {loop_wall:.2f} s in a plain loop; "
          f"speed-up {loop_wall / wall:.2f} x (target >= 1.7 x on 2 cores); same winner {same}/{cells}")
    per_task = worker_cpu + client_cpu
    print(f"per-task overhead: {per_task * 1e3:.1f} ms of CPU per near-empty task (horizon 1e-9; "
          f"{worker_cpu * 1e3:.1f} ms on a worker, {client_cpu * 1e3:.1f} ms in the client and scheduler; "
          f"target < 20 ms); {4 * cells} such tasks took {empty_wall:.2f} s on {args.workers} workers")
    print(f"ensemble sweep: {int(ens['n_starts'].sum())} starts in {len(ens)} tasks in {ens_wall:.1f} s "
          f"({int(ens['n_naive'].sum())} won by the naive prediction)")


if __name__ == "__main__":
    main()
