"""Engine speed against a plain numpy gradient-descent loop, side by side.

    python benchmarks/engine.py            # loops timed on a slice, extrapolated
    python benchmarks/engine.py --full     # run every loop to the end (about 15 minutes)
    python benchmarks/engine.py --quick    # the first case once, 100 loop steps: checks that it runs

For each case the engine's exact flow (``simulate``, median of a few runs, in a
fresh process so that its peak memory is its own) runs to the horizon that the
official notebook reaches with gradient descent, and the loop written as the
notebook writes it runs the same number of steps. A loop's cost per step is
constant, so timing a slice of it and scaling by the step count is accurate; the
table says which loops were extrapolated.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support import official_loops as official  # the notebook's loops, with the tests' helpers

CASES = {
    # name: (experiment kwargs or preset, learning rate, steps of the official loop,
    #        loop kind, steps timed without --full, target)
    "paper-logistic": ({"preset": "paper-logistic"}, 0.1, 1_000_000, "logistic", 20_000, "< 40 ms"),
    "paper-kl": ({"preset": "paper-kl"}, 0.1, 10_000_000, "kl", 20_000, "< 0.5 s"),
    "logistic n=4096 d=128": (
        {"n": 4096, "d": 128, "horizon": 1e6, "samples": 200}, 0.1, 10_000_000, "logistic", 200,
        "< 1 s, < 300 MB",
    ),
}

ENGINE_SNIPPET = """
import json, resource, statistics, sys, time
from polarize import Experiment, simulate
from polarize.presets import get_preset
spec = json.loads(sys.argv[1])
e = get_preset(spec["preset"]).experiment if "preset" in spec else Experiment(**spec)
times = []
for _ in range({repeats}):
    start = time.perf_counter()
    result = simulate(e)
    times.append(time.perf_counter() - start)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"seconds": statistics.median(times), "peak_mb": peak,
                   "max_s": float(result.s[-1].max()), "status": result.status}}))
"""


def engine(spec: dict, repeats: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", ENGINE_SNIPPET.format(repeats=repeats), json.dumps(spec)],
        capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout)


def loop_seconds(spec: dict, lr: float, steps: int, kind: str, budget: int | None) -> tuple[float, bool]:
    """Seconds for ``steps`` iterations of the plain loop (timed on ``budget`` of them)."""
    from polarize import Experiment
    from polarize.presets import get_preset

    e = (get_preset(spec["preset"]).experiment if "preset" in spec else Experiment(**spec)).resolved()
    V, a, target = np.array(e.V0), np.array(e.a0), np.array(e.target)
    run = min(steps, budget) if budget else steps
    start = time.perf_counter()
    if kind == "logistic":
        official.logistic(V, a, target, lr, run)
    else:
        official.kl(V.T.copy(), a, target, lr, run)
    elapsed = time.perf_counter() - start
    return elapsed * steps / run, run < steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--full", action="store_true", help="run every loop to the end")
    parser.add_argument("--repeats", type=int, default=5, help="engine runs per case (median)")
    parser.add_argument("--quick", action="store_true",
                        help="the first case, one engine run, 100 loop steps (a few seconds; for the tests)")
    args = parser.parse_args()
    cases = dict(list(CASES.items())[:1]) if args.quick else CASES
    if args.quick:
        args.repeats, args.full = 1, False

    header = f"{'case':<24}{'engine':>10}{'peak MB':>9}{'loop':>12}{'ratio':>9}  {'target':<16}max s"
    print(header)
    print("-" * len(header))
    for name, (spec, lr, steps, kind, timed, target) in cases.items():
        got = engine(spec, args.repeats)
        budget = None if args.full else 100 if args.quick else timed
        loop, extrapolated = loop_seconds(spec, lr, steps, kind, budget)
        mark = "*" if extrapolated else " "
        print(f"{name:<24}{got['seconds'] * 1e3:>8.1f}ms{got['peak_mb']:>9.0f}{loop:>11.1f}s{mark}"
              f"{loop / got['seconds']:>8.0f}x  {target:<16}{got['max_s']:.6f}")
    if not args.full:
        print("* loop timed on a slice of its steps and scaled to the full count (--full runs it all)")
    print(f"engine: median of {args.repeats} runs after process start; peak MB is the engine "
          "process's maximum resident set")
    print(f"numpy {np.__version__}; {statistics.__name__} median")


if __name__ == "__main__":
    main()
