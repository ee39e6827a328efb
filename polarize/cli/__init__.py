"""The ``polarize`` command line: run an experiment from JSON or a preset.

    polarize run CONFIG.json|- -o RESULT.json [--allow-large] [--progress]
    polarize run --preset NAME -o RESULT.json
    polarize presets
    polarize normalizers
    polarize losses
    polarize reproduce -o DIR
    polarize animate (CONFIG.json | --preset NAME) -o OUT.gif|OUT.mp4 [--fps N] [--width W] [--frames N]
    polarize sinks train|runs ...   (see polarize.cli.sinks)
    polarize sweep run|query ...    (see polarize.cli.sweep; needs polarize[sweep])

The command line sits at the top of the layers, beside the app's ``ui``: ``reproduce`` (the
paper's figures), ``sinks`` (the transformer's commands) and ``sweep`` are its other modules.

Every failure is one line on stderr and a nonzero status, never a traceback:
a bad configuration, environment variable or command line exits with status 2
naming what is wrong, a file that cannot be read or written with 2, anything
unforeseen with 1. A run that would write more than ``MAX_OUTPUT_BYTES`` is
refused before it starts unless ``--allow-large`` is given. The caps are the
command line's (``polarize.env.local_caps``): every preset runs in full, also
by descent (``paper-kl`` with method gd takes the notebook's 1e7 steps).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn, TextIO

import numpy as np

from polarize.budget import MAX_OUTPUT_BYTES, result_bytes
from polarize.cli import sinks as sinks_cli
from polarize.cli import sweep as sweeps_cli
from polarize.config import ConfigError, Experiment
from polarize.env import environment_problem, local_caps
from polarize.integrate import simulate
from polarize.losses import LOSSES
from polarize.methods import METHODS
from polarize.normalizers import NORMALIZERS, takes
from polarize.presets import PRESETS, get_preset
from polarize.serialize import max_text_bytes, strict_dumps
from polarize.switching import kinks_of
from polarize.textfile import read_text

__all__ = ["main"]


class _OneLineParser(argparse.ArgumentParser):
    """argparse, with its usage errors on one line (``polarize -h`` still prints the usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"polarize: error: {message.splitlines()[0] if message else 'bad arguments'}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(prog="polarize", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineParser)
    run = commands.add_parser("run", help="simulate one experiment and write the result as JSON")
    source = run.add_mutually_exclusive_group(required=True)
    source.add_argument("config", nargs="?", type=Path,
                        help="experiment as a JSON file (- for standard input)")
    source.add_argument("--preset", help="a preset name (see 'polarize presets')")
    run.add_argument("-o", "--output", type=Path, required=True, help="where to write the result JSON")
    run.add_argument("--allow-large", action="store_true",
                     help=f"write a result larger than {MAX_OUTPUT_BYTES >> 20} MiB")
    run.add_argument("--progress", action="store_true",
                     help="always show the progress bar (by default: on a terminal, after a second)")
    commands.add_parser("presets", help="list the presets")
    commands.add_parser("normalizers", help="list the normalizers (the registry NORMALIZERS) and their facts")
    commands.add_parser("losses", help="list the losses (the registry LOSSES) and their facts")
    clip = commands.add_parser("animate", help="the Explorer's dashboard of one run as a GIF or MP4 clip")
    source = clip.add_mutually_exclusive_group(required=True)
    source.add_argument("config", nargs="?", type=Path, help="experiment as a JSON file")
    source.add_argument("--preset", help="a preset name (see 'polarize presets')")
    clip.add_argument("-o", "--output", type=Path, required=True, help="OUT.gif or OUT.mp4")
    clip.add_argument("--fps", type=float, default=12.0, help="frames per second (default 12)")
    clip.add_argument("--width", type=int, default=1280,
                      help="pixels, 160 to 1,920 (default 1280; height follows)")
    clip.add_argument("--frames", type=int, default=100, help="about how many frames, 2 to 300 (default 100)")
    again = commands.add_parser("reproduce", help="recompute the paper's toy figures into a folder")
    again.add_argument("-o", "--output", type=Path, required=True, help="folder for HTML, PNG, SVG, summary")
    again.add_argument("--html-only", action="store_true", help="skip the PNG/SVG export")
    sinks_cli.add_parser(commands)
    sweeps_cli.add_parser(commands)
    return parser


def _load(path: Path) -> Experiment:
    """The experiment in a JSON file (``-``: standard input), its size bounded before it is parsed."""
    return Experiment.from_json(read_text(path, field="config", most=max_text_bytes(), larger=(
        ", more than arrays within the caps need (POLARIZE_MAX_SIZE)")))


@contextlib.contextmanager
def _writing(path: Path) -> Iterator[None]:
    """Turn a failure to write to ``path`` into the ``output`` field's one-line error."""
    try:
        yield
    except OSError as exc:
        raise ConfigError("output", f"cannot write {path}: {exc.strerror or exc}") from None


def _experiment(args: argparse.Namespace) -> Experiment:
    """The experiment a ``run`` or ``animate`` command names: a preset or a config file."""
    return get_preset(args.preset).experiment if args.preset is not None else _load(args.config)


class _Progress:
    """A bar on stderr, redrawn in place: on a terminal once a run has taken a second, or always.

    It fills by the share of the work done: descent's steps up to the last saved
    time (the saved times are log-spaced, so the last ones hold most of the
    steps), or the flow's share of saved times (its adaptive steps grow with time).
    """

    def __init__(self, experiment: Experiment, stream: TextIO, always: bool):
        steps = experiment.save_at().steps
        uniform = np.arange(len(steps)) / (len(steps) - 1)
        self.work = steps / steps[-1] if METHODS[experiment.method].stepped else uniform
        self.stream, self.always = stream, always
        self.start = self.drawn_at = time.monotonic()
        self.drawn = False

    def __call__(self, saved: int, total: int) -> None:
        now = time.monotonic()
        due = self.always or (self.stream.isatty() and now - self.start > 1.0)
        if not due or (self.drawn and now - self.drawn_at < 0.2 and saved < total):
            return
        share = float(self.work[min(saved, len(self.work)) - 1])
        filled = round(30 * share)
        self.stream.write(f"\rpolarize: [{'#' * filled}{'.' * (30 - filled)}] {100 * share:3.0f}% "
                          f"({saved}/{total} saved times, {now - self.start:.0f} s)")
        self.stream.flush()
        self.drawn, self.drawn_at = True, now

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")


def _run(args: argparse.Namespace) -> int:
    experiment = _experiment(args)
    size = result_bytes(experiment)
    if size > MAX_OUTPUT_BYTES and not args.allow_large:
        raise ConfigError("output", f"the result would take about {size / 2**20:.0f} MiB, more than "
                          f"{MAX_OUTPUT_BYTES >> 20} MiB; pass --allow-large to write it anyway")
    progress = _Progress(experiment, sys.stderr, args.progress)
    try:
        with warnings.catch_warnings():  # a stepper's complaints end in the result's message, in words
            warnings.simplefilter("ignore")
            result = simulate(experiment, progress=progress)  # may still refuse a start it cannot measure
    finally:
        progress.close()
    with _writing(args.output):
        args.output.write_text(strict_dumps(result.to_dict()))
    if not result.finished:
        print(f"polarize: warning: {result.message}", file=sys.stderr)
    print(f"t = {result.t[-1]:.3g}: max s = {result.s[-1].max():.6f} (token {result.winner}), "
          f"entropy {result.entropy[-1]:.4g}, loss {result.loss[-1]:.4g}")
    return 0


def _animate(args: argparse.Namespace) -> int:
    """``polarize animate``: refuse what cannot be written before running anything."""
    from polarize.clips import animate
    from polarize.plots.static import find_browser, start_browser

    suffix = args.output.suffix.lower()
    absent = animate.missing(suffix)
    checks = [(suffix in animate.FORMATS, "output", f"{args.output.name} is neither .gif nor .mp4"),
              (0 < args.fps <= 60, "fps", f"{args.fps:g} is not in (0, 60]"),
              (animate.LEAST_WIDTH <= args.width <= animate.MOST_WIDTH, "width",
               f"{args.width} is not in [{animate.LEAST_WIDTH}, {animate.MOST_WIDTH:,}] (the cap on a clip's "
               "width)"),
              (2 <= args.frames <= animate.MOST_FRAMES, "frames",
               f"{args.frames} is not in [2, {animate.MOST_FRAMES:,}] (the cap on a clip's frames)"),
              (not absent, "output",
               f"{suffix} clips need {', '.join(absent)}: pip install 'polarize[animate]'"),
              (find_browser() is not None, "output", "no Chromium or Chrome found for the static export "
                                                     "(apt-get install chromium)")]
    for ok, field, message in checks:
        if not ok:
            raise ConfigError(field, message)
    experiment = _experiment(args)
    start_browser()  # Chromium starts while the run is computed and drawn
    with _writing(args.output):
        clip = animate.write_result_clip(simulate(experiment), args.output, frames=args.frames, fps=args.fps,
                                         width=args.width)
    print(f"wrote {clip.path}: {clip.frames} frames, {clip.width} x {clip.height}, {clip.fps:g} fps, "
          f"in {clip.seconds:.1f} s")
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    from polarize.cli.reproduce import reproduce

    with _writing(args.output):
        args.output.mkdir(parents=True, exist_ok=True)  # before the runs: a bad folder fails at once
        summary = reproduce(args.output, images=not args.html_only)
    print(f"wrote {len(summary['figures'])} figures to {args.output} in {summary['seconds']:.1f} s "
          f"(computing {summary['seconds_compute']:.1f} s; images: {summary['images']})")
    return 0


def _presets(args: argparse.Namespace) -> int:
    width = max(map(len, PRESETS))
    for name, preset in PRESETS.items():
        print(f"{name:<{width}}  {preset.description}")
    return 0


def _normalizers(args: argparse.Namespace) -> int:
    """One line per registered normalizer: its name (a config's ``normalizer``), its label and facts."""
    width = max(map(len, NORMALIZERS))
    for name, cls in NORMALIZERS.items():
        facts = ["on the simplex" if cls.on_simplex else "not always on the simplex"]
        if kinks_of(cls) is not None:
            facts.append("kinks")
        facts += [f"takes {option}" for option in ("temperature", "eps") if takes(name, option)]
        print(f"{name:<{width}}  {cls.label} ({', '.join(facts)})")
    return 0


def _losses(args: argparse.Namespace) -> int:
    """One line per registered loss: its name (a config's ``loss``), its label and facts."""
    width = max(map(len, LOSSES))
    for name, kind in LOSSES.items():
        facts = [f"target {kind.target.what}"]
        if kind.data is not None:
            facts.append(f"on a data set X: {kind.data}")
        if kind.takes_kappa:
            facts.append("takes kappa")
        if kind.floor is not None:
            facts.append(f"floor {kind.floor_name}")
        print(f"{name:<{width}}  {kind.label} ({'; '.join(facts)})")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0, 1 unforeseen, 2 bad input, 130 interrupted)."""
    args = _parser().parse_args(argv)
    command = {"run": _run, "animate": _animate, "reproduce": _reproduce, "presets": _presets,
               "normalizers": _normalizers, "losses": _losses, "sinks": sinks_cli.run,
               "sweep": sweeps_cli.run}[args.command]
    problem = environment_problem()  # a bad POLARIZE_* stops every command, not only the runs that read it
    if problem:
        return _fail(problem, 2)
    try:
        with local_caps():  # the app's caps guard a shared server; here every preset runs in full
            return command(args)
    except ConfigError as exc:
        return _fail(str(exc), 2)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except Exception as exc:  # the promise is one line, whatever went wrong
        return _fail(f"unexpected {type(exc).__name__}: {exc}", 1)


def _fail(message: str, status: int) -> int:
    first = message.splitlines()[0] if message else ""
    print(f"polarize: error: {first}", file=sys.stderr)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
