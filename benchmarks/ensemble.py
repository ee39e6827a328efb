"""simulate_many against a loop over simulate, side by side, on a grid of starts on the triangle.

    python benchmarks/ensemble.py                  # 100 x 100 grid, n = 3, logistic, horizon 1e4
    python benchmarks/ensemble.py --loop 200       # time the loop on 200 starts instead of 50
    python benchmarks/ensemble.py --quick          # 5 x 5 grid, horizon 100: checks that it runs

The ensemble runs the whole grid (median of ``--repeats`` runs). The loop costs
the same per start wherever the start is, so it is timed on ``--loop`` starts
spread over the grid and scaled to the grid's size; the same starts are checked
against the ensemble (same winner, largest difference in ``s``).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import time

import numpy as np

from polarize import Experiment, simulate, simulate_many
from polarize.science.flow_field import triangle_grid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resolution", type=int, default=100, help="grid of resolution^2 starts")
    parser.add_argument("--horizon", type=float, default=1e4)
    parser.add_argument("--loop", type=int, default=50, help="starts timed one by one with simulate")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true",
                        help="5 x 5 grid, horizon 100, 5 starts looped, one run (a second; for the tests)")
    args = parser.parse_args()
    if args.quick:
        args.resolution, args.horizon, args.loop, args.repeats = 5, 100.0, 5, 1

    experiment = Experiment(n=3, d=3, loss="logistic", horizon=args.horizon, seed=0).resolved()
    starts = np.log(triangle_grid(args.resolution))
    times, cpu = [], []
    for _ in range(args.repeats):
        begin, begin_cpu = time.perf_counter(), time.process_time()
        ensemble = simulate_many(experiment, starts)
        times.append(time.perf_counter() - begin)
        cpu.append(time.process_time() - begin_cpu)
    many = statistics.median(times)

    sample = np.linspace(0, len(starts) - 1, args.loop).astype(int)
    begin, begin_cpu = time.perf_counter(), time.process_time()
    results = [simulate(dataclasses.replace(experiment, a0=starts[k])) for k in sample]
    per_start = (time.perf_counter() - begin) / len(sample)
    loop = per_start * len(starts)
    loop_cpu = (time.process_time() - begin_cpu) / len(sample) * len(starts)

    same = sum(r.winner == ensemble.winner[k] for r, k in zip(results, sample, strict=True))
    gap = max(np.max(np.abs(r.s[-1] - ensemble.s[k])) for r, k in zip(results, sample, strict=True))
    print(f"{len(starts)} starts, n = 3, logistic, horizon {args.horizon:g}")
    print(f"  simulate_many       {many:8.2f} s wall, {statistics.median(cpu):.2f} s CPU "
          f"(median of {args.repeats}; target < 2 s)")
    print(f"  loop over simulate  {loop:8.1f} s wall, {loop_cpu:.1f} s CPU "
          f"({per_start * 1e3:.1f} ms per start, timed on {args.loop})")
    print(f"  speed-up            {loop / many:8.0f} x wall, {loop_cpu / statistics.median(cpu):.0f} x CPU "
          "(target >= 30 x)")
    print(f"  load average now    {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall time stretches)")
    print(f"  agreement on those {args.loop}: same winner {same}/{args.loop}, "
          f"largest |s difference| {gap:.1e}")
    print(f"  starts run alone by simulate: {ensemble.alone}")


if __name__ == "__main__":
    main()
