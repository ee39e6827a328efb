"""The ``polarize`` command line: run an experiment from JSON or a preset.

    polarize run CONFIG.json -o RESULT.json
    polarize run --preset NAME -o RESULT.json
    polarize presets
    polarize reproduce -o DIR
    polarize sinks train|runs ...   (see polarize.sinks.cli)

A bad configuration exits with status 2 and one line naming the field.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from polarize.config import ConfigError, Experiment
from polarize.integrate import simulate
from polarize.presets import PRESETS, get_preset
from polarize.sinks import cli as sinks_cli

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="polarize", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="simulate one experiment and write the result as JSON")
    source = run.add_mutually_exclusive_group(required=True)
    source.add_argument("config", nargs="?", type=Path, help="experiment as a JSON file")
    source.add_argument("--preset", help="a preset name (see 'polarize presets')")
    run.add_argument("-o", "--output", type=Path, required=True, help="where to write the result JSON")
    commands.add_parser("presets", help="list the presets")
    again = commands.add_parser("reproduce", help="recompute the paper's toy figures into a folder")
    again.add_argument("-o", "--output", type=Path, required=True, help="folder for HTML, PNG, SVG, summary")
    again.add_argument("--html-only", action="store_true", help="skip the PNG/SVG export")
    sinks_cli.add_parser(commands)
    return parser


def _load(path: Path) -> Experiment:
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError("config", f"cannot read {path}: {exc.strerror}") from None
    return Experiment.from_json(text)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "sinks":
        return sinks_cli.run(args)
    if args.command == "reproduce":
        from polarize.reproduce import reproduce

        summary = reproduce(args.output, images=not args.html_only)
        print(f"wrote {len(summary['figures'])} figures to {args.output} in {summary['seconds']:.1f} s "
              f"(computing {summary['seconds_compute']:.1f} s; images: {summary['images']})")
        return 0
    if args.command == "presets":
        width = max(map(len, PRESETS))
        for name, preset in PRESETS.items():
            print(f"{name:<{width}}  {preset.description}")
        return 0
    try:
        experiment = get_preset(args.preset).experiment if args.preset else _load(args.config)
        result = simulate(experiment)  # may still refuse a start where the normalizer is undefined
    except ConfigError as exc:
        print(f"polarize: error: {exc}", file=sys.stderr)
        return 2
    try:
        args.output.write_text(json.dumps(result.to_dict()))
    except OSError as exc:
        print(f"polarize: error: output: cannot write {args.output}: {exc.strerror}", file=sys.stderr)
        return 2
    if not result.finished:
        print(f"polarize: warning: {result.message}", file=sys.stderr)
    summary = (f"t = {result.t[-1]:.3g}: max s = {result.s[-1].max():.6f} (token {result.winner}), "
               f"entropy {result.entropy[-1]:.4g}, loss {result.loss[-1]:.4g}")
    print(summary)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
