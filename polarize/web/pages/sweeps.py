"""The Sweeps page: a sweep's grid and the figures a researcher wants, without writing code.

It reads a results folder written by ``polarize sweep run`` (one of the shipped
examples, or a folder under ``POLARIZE_DATA_DIR/sweeps``, listed again at every
rerun, so a folder written after the app started appears) with
``polarize.sweeps.load`` (pyarrow: neither Dask nor DuckDB needed). What a kind of
sweep counts and draws is the kind's (``polarize.sweeps.kinds``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from polarize.fields import ConfigError
from polarize.plots.sweeps import fraction_figure
from polarize.registry import LiveList
from polarize.sweeps import load, store
from polarize.sweeps.examples import EXAMPLES, example, user_sweeps
from polarize.sweeps.kinds import KINDS, SweepKind
from polarize.sweeps.rows import ERROR
from polarize.sweeps.spec import Sweep
from polarize.sweeps.store import manifest_sweep
from polarize.sweeps.summary import fraction_table, pick_axes
from polarize.web.controls import Control
from polarize.web.echo import echo
from polarize.web.experiment_controls import CONTROLS as CONTROLS_OF_RUNS
from polarize.web.leads import LEADS
from polarize.web.page import PageSpec
from polarize.web.view import Columns, Metric, Plot, Table, Text, View

__all__ = ["PAGE", "sources"]

MEASURES = {key: words for kind in KINDS.values() for key, words in kind.measures.items()}
"""Every measure a kind can draw the spread of, in words (the measure control's options)."""
CHOSEN_FRACTIONS = {what: short for kind in KINDS.values() if len(kind.fractions) > 1
                    for what, (short, _) in kind.fractions.items()}
"""The fractions a kind offers a choice of (the fraction control's options), by their short names."""
AXES = {"variant": "attention", **{c.key: c.label[0].lower() + c.label[1:] if c.label[1:2].islower()
                                   else c.label for c in CONTROLS_OF_RUNS}}
"""A sweep's axes and settings in words (the Explorer's labels); any other key is shown as it is."""
WHY = {"example-runs": (
    "Softmax is 0% polarized at every n because t = 1000 is early for it: under the logistic loss its "
    "1 - max s is still 0.05 to 0.55 there and falls below 0.01 only between t \u2248 1e6 and 4.5e8 "
    "(like 1/log\u00b2 t); under the square loss it settles at 0.6 to 0.92 and never polarizes.")}
"""What a shipped example shows that a reader would ask about, in one line (tested against runs
made again to a longer horizon)."""


def sources() -> dict[str, Path]:
    """The results folders the page offers: the shipped examples first, then the user's, by option name.

    Listed afresh at each call (a folder listing, no file read): a folder written after the app
    started is offered at the next rerun.
    """
    found = {f"example-{name}": example(name) for name in EXAMPLES}
    try:
        found.update({f"data:{name}": path for name, path in user_sweeps().items()})
    except OSError:  # an unreadable data folder: the examples still work
        pass
    return found


@functools.lru_cache(maxsize=8)
def _frame(path: str, stamp: tuple):
    return load(Path(path))


def _stamp(path: Path) -> tuple:
    """What the folder holds: every entry's name, size and times (the folder's own time misses a file
    rewritten in place or files deleted within its clock's tick)."""
    try:
        with os.scandir(path) as entries:
            return tuple(sorted((e.name, e.stat(follow_symlinks=False).st_size,
                                 e.stat(follow_symlinks=False).st_mtime_ns,
                                 e.stat(follow_symlinks=False).st_ino) for e in entries))
    except OSError:
        return ()


@functools.lru_cache(maxsize=32)
def _manifest_at(path: str, stamp: tuple) -> dict | None:
    return store.read_manifest(Path(path))


def _manifest(folder: Path) -> dict | None:
    """The folder's manifest (None if unreadable), read once until the file changes (its size, time
    and inode are the key), however many controls and views ask for it."""
    try:
        info = os.stat(folder / store.MANIFEST)
        stamp: tuple = (info.st_size, info.st_mtime_ns, info.st_ino)
    except (OSError, ValueError):
        stamp = ()
    return _manifest_at(str(folder), stamp)


def _read(name: str):
    """The manifest (None if unreadable) and the rows of a source (rows cached until the folder's
    contents change); ``ConfigError`` when the folder is gone or its files cannot be one table."""
    path = sources().get(name)
    if path is None:
        raise ConfigError("sweep", f"{name} is no longer among the results folders")
    return _manifest(path), _frame(str(path), _stamp(path))


def _kind(values: Mapping[str, Any]) -> SweepKind | None:
    """The kind the chosen folder's manifest names, or None when it names none."""
    path = sources().get(values["sweep"])
    kind = (_manifest(path) or {}).get("kind") if path is not None else None
    return KINDS[kind] if isinstance(kind, str) and kind in KINDS else None


def _chooses_fraction(values: Mapping[str, Any]) -> bool:
    kind = _kind(values)
    return kind is not None and len(kind.fractions) > 1


def _has_measures(values: Mapping[str, Any]) -> bool:
    kind = _kind(values)
    return kind is not None and bool(kind.measures)


CONTROLS = (
    Control("sweep", "Sweep", "select", options=LiveList(lambda: sources()),
            help="A shipped example, or a results folder under POLARIZE_DATA_DIR/sweeps "
                 "(polarize sweep run SWEEP.toml -o that folder)."),
    Control("fraction", "Fraction", "select", options=tuple(CHOSEN_FRACTIONS), names=CHOSEN_FRACTIONS,
            applies=_chooses_fraction, off_help=" (this kind of sweep counts one thing)"),
    Control("measure", "Measure", "select", options=tuple(MEASURES), names=MEASURES,
            applies=_has_measures, off_help=" (this kind of sweep has no measure to spread)"),
)


def _grid_table(sweep: Sweep) -> Table:
    """The grid's axes, then the settings every cell shares (a run's horizon says what "polarized by
    the end" means: softmax sharpens slowly, and a default start is not yet polarized at t = 1000)."""
    rows = tuple({"axis": _words(key), "values": ", ".join(map(str, values)), "count": len(values)}
                 for key, values in sweep.grid)
    fixed = tuple({"axis": _words(key), "values": f"{value} (every cell)", "count": 1}
                  for key, value in sweep.base.items())
    return Table(rows + fixed)


def _words(key: str) -> str:
    """A sweep's axis or setting in words (``AXES``), else its key, shown as text."""
    return AXES.get(key) or echo(key)


def _metrics(frame, sweep: Sweep) -> Columns:
    errors = int((frame["status"] == ERROR).sum()) if len(frame) else 0
    metrics = (Metric("Rows", f"{len(frame):,}", "one per run, chunk of starts or training"),
               Metric("Grid cells", f"{sweep.n_cells:,}", "the product of the axes"),
               Metric("Errors", str(errors), "cells whose config or run failed (a row each)"),
               Metric("Worker time", f"{worker_seconds(frame):.0f} s",
                      "summed over every task (a chunk's seconds once, however many rows it wrote)"))
    return Columns(tuple((m,) for m in metrics))


def worker_seconds(frame) -> float:
    """The work behind the rows: each cell's seconds counted once (a chunk of starts writes one row per
    start when ``ensemble.rows = "starts"``, each carrying the chunk's seconds)."""
    return float(frame.drop_duplicates("hash")["seconds"].sum()) if len(frame) else 0.0


def _fraction_plot(frame, sweep: Sweep, what: str, narrow: bool) -> Plot:
    kind = sweep.entry
    x, colour = (kind.fraction_x, None) if kind.fraction_x else pick_axes(frame, sweep.axes)
    by = [a for a in (x, colour) if a]
    table = fraction_table(frame, kind, what, by)
    short, label = kind.fraction_words(what, sweep.settings)
    if x is None:
        row = table.iloc[0]
        table = table.assign(all="all")
        x = "all"
        label = f"{label}: {row['hits']:.0f} of {row['trials']:.0f}"
    return Plot("sweeps-fraction", fraction_figure(table, x, colour, short, narrow=narrow),
                f"The share of {kind.unit} where {label}, by {_words(x)}"
                + (f" and {_words(colour)}" if colour else "") + ", pooled over the other axes, "
                + _band_words(table) + " Hover for the counts.")


def _band_words(table) -> str:
    """Which 95% band the figure draws (``fraction_table``'s ``band`` column), in words."""
    bands = set(table["band"])
    seeds = ("with a 95% band from the spread between seeds (a t interval on the seeds' own shares, "
             "around their mean): the starts of one seed share its V\u2080, so they are not independent "
             "trials.")
    if bands == {"seeds"}:
        return seeds
    if bands == {"wilson"}:
        return "in its 95% Wilson band (Wilson 1927), each run an independent trial."
    return seeds[:-1] + "; where a point has one seed, Wilson's band on its starts (Wilson 1927)."


def view(job: tuple[tuple[str, Any], ...], narrow: bool = False) -> View:
    values = dict(job)
    try:
        manifest, frame = _read(values["sweep"])
    except ConfigError as exc:
        return View(error=f"This results folder cannot be read: {echo(exc, most=300)}")
    try:  # the folder's sweep.json, which its owner may have edited: validated as a sweep file is
        sweep = manifest_sweep(manifest)
    except ConfigError as exc:
        return View(error=f"This results folder's {store.MANIFEST} cannot be read: {echo(exc, most=200)}")
    if not len(frame):
        return View(error="This results folder holds no finished cells yet.")
    kind, axes = sweep.entry, sweep.axes
    what = values["fraction"] if values["fraction"] in kind.fractions else next(iter(kind.fractions))
    blocks: list[Any] = [Text(f"A {echo(sweep.kind)} sweep over {len(axes)} axes: "
                              f"{', '.join(map(_words, axes))}."),
                         _metrics(frame, sweep), _grid_table(sweep),
                         _fraction_plot(frame, sweep, what, narrow)]
    if values["sweep"] in WHY and what == "polarized":
        blocks.append(Text(WHY[values["sweep"]]))
    blocks += [Plot(key, figure, caption)
               for key, figure, caption in kind.figures(frame, sweep, values, _words, narrow=narrow)]
    errors = frame[frame["status"] == ERROR]
    warnings = (f"{len(errors)} cells failed; the first says: {echo(errors['message'].iloc[0], most=300)}",
                ) if len(errors) else ()
    return View(blocks=tuple(blocks), warnings=warnings, data=frame)


PAGE = PageSpec(
    name="sweeps",
    lead=LEADS["sweeps"], nav_title="Sweeps", title="Sweeps", icon=":material/grid_view:", url_path="sweeps",
    controls=CONTROLS, view=view, spinner="Reading the results...",
    defaults=lambda preset: {"sweep": "example-runs", "fraction": "polarized", "measure": "one_minus_max"},
    caption=lambda values: (
        "Your own sweep: `polarize sweep run SWEEP.toml -o RESULTS/` runs it on a local Dask cluster "
        "(or `--scheduler tcp://HOST:8786`) into Parquet, and `polarize sweep query RESULTS/ \"SQL\"` "
        "asks it in DuckDB; the README's Sweeps section has the file's format."))
