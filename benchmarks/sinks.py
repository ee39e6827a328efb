"""Seconds per training step of the attention-sink transformer (a script, not a test).

    nice python benchmarks/sinks.py [--size paper|classroom] [--attention softmax] [--steps 60]
    nice python benchmarks/sinks.py --quick   # a tiny model (width 16), 20 steps: checks that it runs

Runs the first ``--steps`` optimizer steps of a size (single-threaded XLA, as
``polarize sinks train``), and prints the compile-and-first-chunk time and the
steady seconds per step, in wall and CPU time with the load average, and the
full run's projected length. On a shared machine the CPU time is the steadier
number: wall time grows with the other processes' load.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time

from polarize.sinks.config import ATTENTIONS, SIZES, make_config
from polarize.sinks.train import CHUNK, train

QUICK = {"width": 16, "heads": 2, "mlp_ratio": 2, "batch": 8, "train_size": 200, "eval_size": 20}
"""What ``--quick`` shrinks: a model and data set that train in seconds."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", choices=tuple(SIZES), default="paper")
    parser.add_argument("--attention", choices=ATTENTIONS, default="softmax")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--quick", action="store_true",
                        help="a tiny model and data set, the fewest steps (seconds; for the tests)")
    args = parser.parse_args()
    full = make_config(args.size, args.attention)
    config = dataclasses.replace(full, steps=max(args.steps, 2 * CHUNK), checkpoints=1)
    if args.quick:
        config = dataclasses.replace(config, steps=2 * CHUNK, **QUICK)
    marks: list[tuple[int, float, float]] = []
    wall0, cpu0 = time.perf_counter(), time.process_time()
    train(config, progress=lambda done, total: marks.append(
        (done, time.perf_counter() - wall0, time.process_time() - cpu0)))
    (s0, w0, c0), (s1, w1, c1) = marks[0], marks[-1]
    wall, cpu = (w1 - w0) / (s1 - s0), (c1 - c0) / (s1 - s0)
    size = "a tiny model (--quick)" if args.quick else args.size
    print(f"{size} {args.attention}: first chunk (with compile) {w0:.1f} s wall, {c0:.1f} s CPU")
    print(f"per step: {wall:.4f} s wall, {cpu:.4f} s CPU; load average {os.getloadavg()[0]:.1f}")
    which = " of that tiny model" if args.quick else ""
    print(f"full run of {full.steps} steps{which}: ~{full.steps * wall / 60:.1f} min wall at this load, "
          f"~{full.steps * cpu / 60:.1f} min CPU")


if __name__ == "__main__":
    main()
