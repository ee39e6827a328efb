"""``polarize reproduce`` end to end against the official notebook's loops, figure by figure.

    python benchmarks/reproduce.py           # loops timed on a slice of their steps, scaled
    python benchmarks/reproduce.py --full    # every loop to the end (about 15 minutes)
    python benchmarks/reproduce.py --quick   # no PNG/SVG, 50 loop steps a run: checks that it runs

The engine side times ``reproduce()`` (every paper figure: its runs, its figure, the
HTML) once with the PNG/SVG export and reports the two parts separately: the
export's time is the browser's, not the engine's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support import official_loops as official  # the notebook's loops, with the tests' helpers

from polarize.cli.reproduce import PAPER_FIGURES, reproduce
from polarize.presets import PAPER_KAPPAS, PAPER_TIED_SIZES, PRESETS


def _arrays(name):
    e = PRESETS[name].experiment.resolved()
    return (np.array(e.V0), np.array(e.a0), np.array(e.target),
            None if e.X is None else np.array(e.X), None if e.y is None else np.array(e.y), e)


def _time(run, steps, budget):
    """Seconds for ``steps`` iterations of ``run(k)``, measured on ``min(steps, budget)``."""
    k = steps if budget is None else min(steps, budget)
    start = time.perf_counter()
    run(k)
    return (time.perf_counter() - start) * steps / k


def loop_seconds(figure: str, budget: int | None) -> float:
    """The official loops behind one figure, as many steps as the notebook takes."""
    total = 0.0
    if figure == "logistic":
        V, a, b, _, _, e = _arrays("paper-logistic")
        total += _time(lambda k: official.logistic(V, a, b, e.lr, k), 1_000_000, budget)
    elif figure.startswith("compare-"):
        loss = figure.removeprefix("compare-")
        V, a, b, _, _, e = _arrays(f"paper-compare-{loss}")
        steps = round(e.horizon / e.lr)
        # Eight normalizers, each a loop of the same cost per step.
        total += 8 * _time(lambda k: official.comparison(V, a, b, e.lr, k, loss), steps, budget)
    elif figure == "tied":
        for D in PAPER_TIED_SIZES:
            U, a, b, _, _, e = _arrays(f"paper-tied-{D}")
            total += _time(lambda k, U=U, a=a, b=b: official.tied(U, a, b, 0.05, k), 10_000, budget)
    elif figure == "regression":
        for kappa in PAPER_KAPPAS:
            W, a, _, X, y, _ = _arrays(f"paper-regression-kappa-{kappa}")
            total += _time(lambda k, W=W, a=a, X=X, y=y: official.regression(W, a, X, y, 0.001, k),
                           300_000, budget)
    elif figure == "kl":
        V, a, p, _, _, _ = _arrays("paper-kl")
        total += _time(lambda k: official.kl(V.T.copy(), a, p, 0.1, k), 10_000_000, budget)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--full", action="store_true", help="run every loop to the end")
    parser.add_argument("--slice", type=int, default=5000, help="loop steps timed per run without --full")
    parser.add_argument("--quick", action="store_true",
                        help="no PNG/SVG export, 50 loop steps a run (seconds; for the tests)")
    args = parser.parse_args()
    if args.quick:
        args.full, args.slice = False, 50

    with tempfile.TemporaryDirectory() as folder:
        lines = []
        summary = reproduce(folder, images=not args.quick, log=lines.append)
    compute, total = summary["seconds_compute"], summary["seconds"]
    budget = None if args.full else args.slice
    loops = {name: loop_seconds(name, budget) for name in PAPER_FIGURES}
    print(f"{'figure':<20}{'official loops':>16}")
    for name, seconds in loops.items():
        print(f"{name:<20}{seconds:>15.1f}s")
    everything = sum(loops.values())
    print(f"{'all figures':<20}{everything:>15.1f}s{'' if args.full else '  (scaled from slices)'}")
    print(f"\npolarize reproduce: {compute:.2f} s computing and drawing (HTML), {total:.2f} s with "
          f"PNG/SVG ({summary['images']}); target under 5 s")
    print(f"ratio: {everything / compute:.0f}x faster than the loops (engine and HTML), "
          f"{everything / total:.0f}x with the static export")


if __name__ == "__main__":
    main()
