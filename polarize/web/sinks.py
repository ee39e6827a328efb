"""The "Attention sinks" page: shipped induction runs of the paper's section 7, read without JAX."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from polarize.plots.sinks import attention_figure, training_figure
from polarize.sinks.runs import read_run, run_info, shipped_runs
from polarize.web.controls import Control
from polarize.web.page import Columns, Metric, PageSpec, Plot, Table, Text, View

__all__ = ["PAGE"]

CHECKPOINTS = 16  # the classroom size's checkpoints (step 0 and 15 more)

TIE_BACK = (
    "**Why a sink?** In the value-softmax model, gradient flow moves each score by its fitness minus "
    "the mean fitness, weighted by its own share (the replicator form): the richest token gets richer. "
    "Inside a softmax head the BOS key is such a token: it is in every row, so when attending to it "
    "costs the least, its score is pushed up in every row at once and the head polarizes onto it, a "
    "sink that does nothing but park attention. Sigmoid and linear attention have no mean-fitness "
    "term and no shared budget; the paper reports no sinks for them. In the shipped classroom runs "
    "most of them do not learn the task in the short budget (see the table), and one row-normalized "
    "sigmoid run that did learn it grew a near-sink: dividing rows by their sum brings back a shared "
    "budget and a mean-centred term. The BOS residual "
    "norm growing in the right panel is the toy's massive activation, like the tied model's "
    "growing column.")


@functools.lru_cache(maxsize=8)
def _run(name: str) -> dict[str, Any]:
    return read_run(shipped_runs()[name])


def _controls() -> tuple[Control, ...]:
    names = tuple(shipped_runs()) or ("none",)
    return (Control("run", "Run", "select", options=names,
                    help="A shipped classroom run: attention variant and seed."),
            Control("checkpoint", "Checkpoint", "slider", low=0, high=CHECKPOINTS - 1, step=1, integer=True,
                    help="Which training checkpoint the attention maps show (0: before training)."),
            Control("sequence", "Sequence", "radio", options=(0, 1),
                    help="One of the two stored evaluation sequences."))


def _defaults(preset: str | None) -> dict[str, Any]:
    names = tuple(shipped_runs())
    first = next((n for n in names if "softmax" in n), names[0] if names else "none")
    return {"run": first, "checkpoint": CHECKPOINTS - 1, "sequence": 0}


def _table() -> Table:
    rows = []
    for name in shipped_runs():
        info, record = run_info(name, _run(name)), _run(name)
        last = np.asarray(record["sink_scores"])[-1]
        rows.append({"run": name, "variant": info.variant, "seed": info.seed,
                     "accuracy": round(info.accuracy, 3), "top sink, layer 1": round(float(last.max()), 3),
                     "sink heads": info.sinks})
    return Table(tuple(rows))


def view(job: tuple[tuple[str, Any], ...]) -> View:
    values: Mapping[str, Any] = dict(job)
    if values["run"] not in shipped_runs():
        return View(error="No shipped runs are installed with this copy of polarize.")
    record = _run(values["run"])
    checkpoint = min(int(values["checkpoint"]), len(record["maps"]) - 1)
    info = run_info(values["run"], record)
    last = np.asarray(record["sink_scores"])[-1]
    metrics = (Metric("Induction accuracy", f"{info.accuracy:.3f}", "final, on held-out sequences"),
               Metric("Top sink score, layer 1", f"{float(last.max()):.3f}", "over 0.9 is a sink"),
               Metric("Sink heads", str(info.sinks), "counted only above 0.95 accuracy"))
    blocks = (Columns(tuple((metric,) for metric in metrics)),
              Plot("sinks-attention", attention_figure(record, checkpoint, int(values["sequence"])),
                   "Each panel is one head: rows are queries, columns keys (the query token is primed). "
                   "A sink head puts its rows' weight in the first column, on BOS."),
              Plot("sinks-training", training_figure(record),
                   "Left: sink score of every head (colour: head, dash: layer) and induction accuracy "
                   "(thick). Right: the residual-stream norm at BOS after each layer."),
              Text(TIE_BACK), _table())
    return View(blocks=blocks, data=record)


PAGE = PageSpec(
    name="sinks", nav_title="Attention sinks", title="Attention sinks", icon=":material/anchor:",
    url_path="sinks", controls=_controls(), defaults=_defaults, view=view, spinner="Reading the run...",
    caption=lambda values: (
        "Small transformers trained on the paper's induction task (section 7): with softmax attention a "
        "head of the second layer (layer 1) parks over 90% of its attention on the first token. Pick a "
        "variant and seed; train your own with `polarize sinks train`."))
