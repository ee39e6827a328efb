"""The "Attention sinks" page: induction runs of the paper's section 7, shipped or trained live.

A shipped run (classroom or paper size) is read without JAX. A live run (the classroom size, any seed)
trains in a child process through ``polarize.serve.training``: one at a time on the
host, the others queued with their place shown, a progress bar while it trains;
without the ``sinks`` extra the page says which extra to install.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from polarize.env import scheduler
from polarize.fields import ConfigError
from polarize.integrate import simulate
from polarize.plots.transformer import attention_figure, massive_figure, training_figure
from polarize.presets import paper_tied
from polarize.serve.admission import ServerBusy
from polarize.serve.cache import SharedCache
from polarize.serve.cluster import ClusterUnavailable
from polarize.serve.training import TrainingFailed, train_live
from polarize.sinks.backend import MISSING_MESSAGE, available
from polarize.sinks.config import SIZES, VARIANTS, variant_config
from polarize.sinks.metrics import counts_sinks
from polarize.sinks.runs import check_run, read_run, run_info, run_json, shipped_runs
from polarize.web import export
from polarize.web.controls import Control
from polarize.web.leads import LEADS
from polarize.web.page import PageSpec
from polarize.web.progress import report
from polarize.web.view import Columns, Download, Metric, Plot, Table, Text, View

__all__ = ["PAGE"]

SIZE = "classroom"  # the size trained live (the paper size takes 20 CPU-minutes a run)
TIED_SIZE = 10  # the tied model drawn beside the BOS norm: the paper's smallest D

TIE_BACK = (
    "**Why a sink?** In the value-softmax model, gradient flow moves each score by its fitness minus "
    "the mean fitness, weighted by its own share (the replicator form): the richest token gets richer. "
    "Inside a softmax head the BOS key is such a token: it is in every row, so when attending to it "
    "costs the least, its score is pushed up in every row at once and the head polarizes onto it, a "
    "sink that does nothing but park attention. Sigmoid and linear attention have no mean-fitness "
    "term and no shared budget; the paper reports no sinks for them. Row-normalized sigmoid and "
    "linear attention divide each row by its sum, which brings back a shared budget and a "
    "mean-centred term: compare them with the unnormalized ones in the table. Raw attention weights "
    "are signed, so their sink score (BOS's share of the row sum) can leave [0, 1] and says nothing "
    "about sinks. At the paper's size (twice the steps, four times the batch) both shipped "
    "unnormalized sigmoid runs end with sinks all the same: by the sink score seed 0 has two layer-1 "
    "sink heads and two nearly so, seed 1 one; in row mass one head puts 0.6 to 0.9 of a unit of "
    "weight on BOS while the other heads of the layer switch almost off, which the classroom runs "
    "stop short of. The BOS residual norm grows as the tied toy model's winning "
    "column does (bottom): the same massive activation.")


def _shipped_name(size: str, variant: str, seed: int) -> str:
    return f"{size}-{variant}-seed{seed}"


def _shipped_seeds(size: str, variant: str) -> list[int]:
    prefix = _shipped_name(size, variant, 0)[:-1]
    return sorted(int(name[len(prefix):]) for name in shipped_runs() if name.startswith(prefix))


CONTROLS = (
    Control("variant", "Attention", "select", options=VARIANTS,
            help="softmax; sigmoid(qk/\u221ad); linear (elu + 1 kernel); raw qk/\u221ad. Normalized: each "
                 "row divided by its sum."),
    Control("seed", "Seed", "number", low=0, high=99, step=1, integer=True,
            help="Seeds the data, the initial weights and the batch order. Shipped: seeds 0 and 1 of every "
                 "variant at both sizes, and 2 of softmax and unnormalized sigmoid and linear at the "
                 "classroom size."),
    Control("source", "Run", "radio", options=("shipped", "live"),
            names={"shipped": "shipped", "live": "train live"},
            help="Read the run shipped with polarize, or train it here (about a minute; needs "
                 "pip install 'polarize[sinks]'). The same variant and seed give the same run."),
    Control("size", "Size", "radio", options=(SIZE, *(size for size in SIZES if size != SIZE)),
            help="Shipped runs only. Classroom: width 64, batch 64, 2,000 steps (about a minute to train). "
                 "Paper: section 7's settings, width 128, batch 256, 3,900 steps (about 20 CPU-minutes "
                 "a run). The table at the bottom lists every shipped run."),
    Control("sequence", "Sequence", "radio", options=(0, 1),
            help="One of the two stored evaluation sequences whose attention is drawn."),
)


@functools.lru_cache(maxsize=16)
def _shipped(name: str) -> dict[str, Any]:
    return read_run(shipped_runs()[name])


LIVE = SharedCache(8)
"""Live runs trained on this server, shared by every session: two visitors asking for the same variant
and seed while it trains wait for the one training (its progress is drawn for the visitor who started it)."""


def _live(variant: str, seed: int) -> dict[str, Any]:
    """A classroom run trained live, once per variant and seed on this server (failures are raised,
    so not kept)."""
    return LIVE.get((variant, seed), lambda: _train(variant, seed))


def _train(variant: str, seed: int) -> dict[str, Any]:
    """Train a classroom run live, reporting its progress."""
    config = variant_config(SIZE, variant, seed=seed)
    report(0.0, f"Training {variant}, seed {seed}: starting (compiling takes a few seconds)...")
    record = train_live(config, progress=lambda done, total: report(
        done / total, f"Training {variant}, seed {seed}: step {done:,} of {total:,}"))
    return check_run({"size": SIZE, **record}, "the live run")


@functools.lru_cache(maxsize=1)
def _tied() -> Any:
    """The tied toy model of the Massive activations page, at D = ``TIED_SIZE`` (a fraction of a second)."""
    return simulate(paper_tied(TIED_SIZE))


def _record(values: Mapping[str, Any]) -> dict[str, Any] | str:
    """The run the controls name, or why there is none (in words)."""
    variant, seed, size = values["variant"], int(values["seed"]), values["size"]
    if values["source"] == "shipped":
        name = _shipped_name(size, variant, seed)
        if name in shipped_runs():
            return _shipped(name)
        seeds = ", ".join(map(str, _shipped_seeds(size, variant))) or "none"
        live = ", or train this one live" if size == SIZE else ", or the classroom size"
        return (f"No shipped run of {variant} at the {size} size with seed {seed} (shipped seeds: {seeds}). "
                f"Choose one of those{live}.")
    if size != SIZE:
        return (f"Live training is for the {SIZE} size only: a {size}-size run takes about 20 CPU-minutes. "
                f"Train one from a terminal: polarize sinks train --size {size}.")
    if not available() and scheduler() is None:  # on a cluster, its workers train (and need the extra)
        return f"Live training is not installed here: {MISSING_MESSAGE}. The shipped runs need no extra."
    try:
        return _live(variant, seed)
    except ServerBusy:
        return "Live runs are queued one at a time and the queue is full. Try again in a minute."
    except (TrainingFailed, ImportError, ConfigError, ClusterUnavailable) as exc:
        return f"The live run failed: {exc}"


@functools.lru_cache(maxsize=1)
def _table() -> Table:
    """Every shipped run's summary, made once: the runs are package data, and building it reads them all
    (more than ``_shipped`` keeps, so each view read every file again)."""
    rows = []
    for name in shipped_runs():
        record = _shipped(name)
        info = run_info(name, record)
        rows.append({"variant": info.variant, "seed": info.seed, "size": info.size,
                     "accuracy": round(info.accuracy, 3),
                     "top sink, layer 1": round(float(np.max(record["sink_scores"][-1])), 3),
                     "sink heads": (str(info.sinks) if counts_sinks(info.variant)
                                    else "\u2014 (signed weights)")})
    return Table(tuple(rows))


def _heading(record: Mapping[str, Any], sequence: int) -> tuple[str, str]:
    """The title lines of the run's clips and offline figure: its settings, then its verdict."""
    config, scores = record["config"], np.asarray(record["sink_scores"])  # scores: (layers, heads)
    info = run_info(config.variant, dict(record))
    settings = (f"Attention sinks: {config.variant} attention, {record.get('size', 'custom')} size, "
                f"seed {config.seed}, {config.steps:,} steps, evaluation sequence {sequence}")
    counted = (f"{info.sinks} sink head{'' if info.sinks == 1 else 's'}" if counts_sinks(config.variant)
               else "no sink count (raw attention's weights are signed)")
    verdict = (f"{counted}: induction accuracy "
               f"{info.accuracy:.3f}, top sink score in layer {scores.shape[0] - 1} "
               f"{float(scores[-1].max()):.3f}")
    return settings, verdict


def _downloads(record: Mapping[str, Any], figure: Any, sequence: int) -> tuple[Download, ...]:
    """The run as JSON; its attention on ``sequence`` as offline HTML and as clips, titled by ``_heading``."""
    config = record["config"]
    stem = f"polarize-sinks-{record.get('size', 'custom')}-{config.variant}-seed{config.seed}"
    title = _heading(record, sequence)
    return (
        Download("run", "Run (JSON)", lambda: run_json(record), f"{stem}.json", "application/json",
                 ":material/data_object:",
                 "The whole run (settings, history, attention maps) as `polarize sinks train -o` writes it."),
        Download("attention-html", "Attention (HTML)",
                 lambda: export.dashboard_html(figure, title=stem, heading=title),
                 f"{stem}-attention{sequence}.html", "text/html", ":material/movie:",
                 "The attention animation as one file that plays offline (plotly.js embedded)."),
        *export.clip_downloads(
            figure, key="attention-", name="Attention clip", title=title, stem=f"{stem}-attention{sequence}",
            help_text="The attention animation as a clip for slides (takes a few seconds)."),
    )


def view(job: tuple[tuple[str, Any], ...], narrow: bool = False) -> View:
    values: Mapping[str, Any] = dict(job)
    record = _record(values)
    if isinstance(record, str):
        return View(error=record, passing=values["source"] == "live")
    info, config = run_info(values["variant"], record), record["config"]
    last = np.asarray(record["sink_scores"])[-1]
    signed = not counts_sinks(config.variant)
    metrics = (Metric("Induction accuracy", f"{info.accuracy:.3f}", "final, on held-out sequences"),
               Metric("Top sink score, layer 1", f"{float(last.max()):.3f}",
                      "raw attention's weights are signed: this score can leave [0, 1] and marks no sink"
                      if signed else "over 0.9 is a sink"),
               Metric("Sink heads", "\u2014" if signed else str(info.sinks),
                      "not counted: raw attention's signed weights make the score say nothing about sinks"
                      if signed else "counted only above 0.95 accuracy"),
               Metric("Training", f"{config.steps:,} steps",
                      f"AdamW lr {config.lr:g}, batch {config.batch}, width {config.width}"))
    sequence = int(values["sequence"])
    attention = attention_figure(record, sequence, narrow=narrow)
    # Why a sink comes after the figure: 12 lines before it put Play a screen below the window.
    blocks = (Columns(tuple((metric,) for metric in metrics)),
              Plot("sinks-attention", attention,
                   "Each panel is one head: rows are queries, columns keys (the query token is primed). "
                   "It opens at the end of training; press play to watch training from the start: a "
                   "sink head moves its rows' weight into the first column, onto BOS (\u2605 marks a sink "
                   "head, from the checkpoint where it counts)."),
              Text(TIE_BACK),
              Plot("sinks-training", training_figure(record, narrow=narrow),
                   "Sink score of every head (colour: head, dash: layer) and induction accuracy (thick)."),
              Plot("sinks-massive", massive_figure(record, _tied(), narrow=narrow),
                   "Left: the residual-stream norm at BOS after each layer, over training. Right: the "
                   "tied toy model (the Massive activations page): the column of U at the winning token "
                   "grows while the others stay near 1."),
              _table())
    return View(blocks=blocks, data=record, downloads=_downloads(record, attention, sequence))


PAGE = PageSpec(
    name="sinks",
    lead=LEADS["sinks"], nav_title="Attention sinks", title="Attention sinks", icon=":material/anchor:",
    url_path="sinks", controls=CONTROLS, view=view, spinner="Preparing the run...",
    defaults=lambda preset: {"variant": "softmax", "seed": 0, "source": "shipped", "size": SIZE,
                             "sequence": 0},
    caption=lambda values: (
        "Small transformers trained on the paper's induction task (section 7): with softmax attention a "
        "head of the second layer (layer 1) parks over 90% of its attention on the first token. Pick a "
        "variant and seed, or train one live; from a terminal: `polarize sinks train`."))
