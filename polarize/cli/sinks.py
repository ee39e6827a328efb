"""``polarize sinks``: train an attention-sink run, or list the shipped ones.

    polarize sinks train --attention softmax --size classroom --seed 0 -o RUN.json
    polarize sinks train --attention sigmoid --unnormalized --size paper -o RUN.json
    polarize sinks runs

Training needs the optional extra (``pip install 'polarize[sinks]'``); listing does not.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from polarize.fields import ConfigError
from polarize.sinks.backend import MISSING_MESSAGE, available
from polarize.sinks.config import ATTENTIONS, SIZES, make_config
from polarize.sinks.runs import read_run, run_info, shipped_runs, write_run

__all__ = ["add_parser", "run"]


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register ``sinks train`` and ``sinks runs`` on the main parser's subcommands."""
    sinks = commands.add_parser("sinks", help="attention sinks in a tiny transformer (paper section 7)")
    verbs = sinks.add_subparsers(dest="sinks_command", required=True)
    train = verbs.add_parser("train", help="train one run and write it as JSON (needs polarize[sinks])")
    train.add_argument("--attention", choices=list(ATTENTIONS), required=True)
    rows = train.add_mutually_exclusive_group()
    rows.add_argument("--normalized", dest="normalized", action="store_true", default=True,
                      help="divide attention rows by their sum (the default; softmax always is)")
    rows.add_argument("--unnormalized", dest="normalized", action="store_false",
                      help="leave attention rows unnormalized (not for softmax)")
    train.add_argument("--size", choices=tuple(SIZES), default="classroom")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("-o", "--output", type=Path, required=True, help="where to write the run JSON")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    verbs.add_parser("runs", help="list the shipped runs")


class _Bar:
    """A one-line text progress bar on stderr, redrawn at most ten times a second."""

    def __init__(self, label: str):
        self.label, self.start, self.shown = label, time.perf_counter(), 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if done < total and now - self.shown < 0.1:
            return
        self.shown = now
        filled = int(30 * done / max(total, 1))
        elapsed = now - self.start
        left = elapsed / done * (total - done) if done else 0.0
        stream = sys.stderr  # looked up per call, so that a redirected stderr is honoured
        stream.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total} "
                          f"{elapsed:.0f}s elapsed, ~{left:.0f}s left")
        if done >= total:
            stream.write("\n")
        stream.flush()


def _train(args: argparse.Namespace) -> int:
    config = make_config(args.size, args.attention, normalized=args.normalized, seed=args.seed)
    if not available():
        print(f"polarize: error: {MISSING_MESSAGE}", file=sys.stderr)
        return 2
    from polarize.sinks.train import train

    progress = None if args.quiet else _Bar(f"{config.variant} {args.size} seed {args.seed}")
    record = {"size": args.size, **train(config, progress=progress)}
    try:
        write_run(record, args.output)
    except OSError as exc:
        print(f"polarize: error: output: cannot write {args.output}: {exc.strerror}", file=sys.stderr)
        return 2
    scores = record["sink_scores"]
    top = max(max(row) for row in scores)
    print(f"{config.variant} ({args.size}, seed {args.seed}): induction accuracy {record['accuracy']:.3f}, "
          f"top sink score {top:.3f}, {record['timing']['seconds']:.1f} s")
    return 0


def _runs() -> int:
    runs = shipped_runs()
    if not runs:
        print("no shipped runs")
        return 0
    print(f"{'name':<40} {'size':<9} {'variant':<22} {'seed':>4} {'accuracy':>8} "
          f"{'top sink':>8} {'sinks':>5}")
    for name, path in runs.items():
        info = run_info(name, read_run(path))
        print(f"{info.name:<40} {info.size:<9} {info.variant:<22} {info.seed:>4} {info.accuracy:>8.3f} "
              f"{info.top_sink:>8.3f} {info.sinks:>5}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Carry out a parsed ``sinks`` command; a bad setting exits 2 naming the field."""
    try:
        return _train(args) if args.sinks_command == "train" else _runs()
    except ConfigError as exc:
        print(f"polarize: error: {exc}", file=sys.stderr)
        return 2
