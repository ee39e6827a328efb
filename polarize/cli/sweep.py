"""``polarize sweep``: run a sweep on Dask, or query its results with SQL.

    polarize sweep run SWEEP.toml -o RESULTS/ [--scheduler tcp://HOST:8786] [--workers N] [--allow-large]
    polarize sweep run SWEEP.toml -o RESULTS/ --dry-run      # validate and print the size only
    polarize sweep query RESULTS/ "SELECT normalizer, avg(polarized::int) FROM runs GROUP BY 1" [-o OUT.csv]

Both need the optional extra (``pip install 'polarize[sweep]'``); without it they say so in one line.
Running the same command again resumes: cells already in ``RESULTS/`` are skipped.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from polarize.fields import ConfigError

__all__ = ["add_parser", "run"]


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register ``sweep run`` and ``sweep query`` on the main parser's subcommands."""
    sweep = commands.add_parser("sweep", help="grids of runs, ensembles or sink trainings on Dask")
    verbs = sweep.add_subparsers(dest="sweep_command", required=True)
    go = verbs.add_parser("run", help="run a sweep file (TOML) into a results folder (resumes)")
    go.add_argument("sweep", type=Path, help="the sweep, a TOML file")
    go.add_argument("-o", "--output", type=Path, required=True, help="results folder")
    go.add_argument("--scheduler", help="a running Dask scheduler (tcp://HOST:8786); default a local cluster")
    go.add_argument("--workers", type=int, help="worker processes of the local cluster (default: one a core)")
    go.add_argument("--allow-large", action="store_true", help="run more cells or starts than the caps")
    go.add_argument("--dry-run", action="store_true", help="validate and print the sweep's size only")
    ask = verbs.add_parser(
        "query", help="SQL over a results folder (DuckDB; the rows are table runs)",
        description="SQL over a results folder with DuckDB: the rows are the table runs, the saved series "
                    "the table series. The SQL runs with your own rights on this machine: DuckDB can read "
                    "and write any file you can (read_csv('...'), COPY ... TO '...', ATTACH), so run only "
                    "SQL you trust. polarize.sweeps.query, for code built on it, is read-only and reaches "
                    "no file.")
    ask.add_argument("results", type=Path, help="results folder")
    ask.add_argument("sql", help='e.g. "SELECT normalizer, avg(polarized::int) FROM runs GROUP BY 1"')
    ask.add_argument("-o", "--output", type=Path, help="write OUT.csv or OUT.parquet instead of printing")


class _Bar:
    """Cells done and failed, elapsed and ETA, on one line of stderr (redrawn at most 5 times a second)."""

    def __init__(self) -> None:
        self.shown = 0.0

    def __call__(self, p) -> None:
        now = time.monotonic()
        finished = p.done + p.failed
        if finished < p.to_run and now - self.shown < 0.2:
            return
        self.shown = now
        share = finished / max(p.to_run, 1)
        eta = f", ETA {p.eta:.0f} s" if p.eta is not None and finished < p.to_run else ""
        sys.stderr.write(f"\r[{'#' * round(30 * share)}{'.' * (30 - round(30 * share))}] "
                         f"{finished}/{p.to_run} cells, {p.errors} with errors, {p.failed} failed, "
                         f"{p.elapsed:.0f} s{eta}   ")
        sys.stderr.flush()


def _run(args: argparse.Namespace) -> int:
    from polarize.sweeps.run import MISSING_MESSAGE, dask_available, run_sweep
    from polarize.sweeps.spec import read_sweep

    sweep = read_sweep(args.sweep, allow_large=args.allow_large)
    if args.workers is not None and not 1 <= args.workers <= 1024:
        raise ConfigError("workers", f"must be in [1, 1024]; got {args.workers}")
    if args.scheduler is not None and dask_available():
        from polarize.sweeps.run import check_scheduler

        check_scheduler(args.scheduler)  # a typo in the address is named before anything runs
    if args.dry_run:  # counted, not built: a dry run of a large sweep is as quick as of a small one
        print(f"{sweep.name}: {sweep.kind} sweep, {sweep.n_cells} grid cells, "
              f"{sweep.n_results} result cells, {sweep.n_tasks} tasks")
        return 0
    if not dask_available():
        raise ConfigError("sweep", MISSING_MESSAGE)
    bar = _Bar()
    try:
        with _quiet_on_interrupt():
            p = run_sweep(sweep, args.output, scheduler=args.scheduler, workers=args.workers, progress=bar,
                          report=lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        sys.stderr.write(f"\nstopped: the finished cells are in {args.output}; "
                         "run the same command again to resume\n")
        raise
    sys.stderr.write("\n")
    for message in p.messages:
        print(f"  e.g.: {message}")
    print(f"done: {p.done} cells run ({p.errors} with errors, {p.failed} failed), {p.skipped} already there, "
          f"in {p.elapsed:.1f} s; results in {args.output}")
    return 1 if p.failed else 0


@contextlib.contextmanager
def _quiet_on_interrupt() -> Iterator[None]:
    """At Ctrl-C, Dask's own complaints (its event loop's, a half-started cluster closed at exit,
    unretrieved tasks) are silenced before the interrupt is raised: one line says what happened."""
    def interrupted(signum: int, frame: object) -> None:
        import logging

        for name in ("distributed", "asyncio", "tornado"):
            logging.getLogger(name).disabled = True
        sys.unraisablehook = lambda unraisable: None
        raise KeyboardInterrupt

    try:
        before = signal.signal(signal.SIGINT, interrupted)
    except ValueError:  # not the main thread: Ctrl-C is not this thread's to catch
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _query(args: argparse.Namespace) -> int:
    from polarize.sweeps.query import query

    frame = query(args.results, args.sql, anywhere=True)  # one's own command line (its help says so)
    if args.output is None:
        import pandas as pd

        with pd.option_context("display.max_rows", 200, "display.max_columns", 30, "display.width", 160):
            print(frame.to_string(index=False, max_rows=200))
        return 0
    suffix = args.output.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise ConfigError("output", f"{args.output.name} is neither .csv nor .parquet")
    try:
        frame.to_csv(args.output, index=False) if suffix == ".csv" else frame.to_parquet(args.output)
    except OSError as exc:
        raise ConfigError("output", f"cannot write {args.output}: {exc.strerror or exc}") from None
    print(f"wrote {len(frame)} rows to {args.output}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Dispatch ``polarize sweep run|query``."""
    return {"run": _run, "query": _query}[args.sweep_command](args)
