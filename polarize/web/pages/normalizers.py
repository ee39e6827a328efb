"""Normalizers side by side: one start under every normalizer, small multiples that play together."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from polarize.config import ConfigError, Experiment
from polarize.methods import METHODS
from polarize.normalizers import NORMALIZERS
from polarize.plots import normalizers_figure
from polarize.science import compare_normalizers, describe_normalizers, format_time
from polarize.science.deadline import Partial
from polarize.web import overtime, precomputed
from polarize.web.experiment_controls import build_experiment, preset_values
from polarize.web.leads import LEADS
from polarize.web.page import PageSpec, Problem
from polarize.web.study import (
    Drawn,
    Runs,
    explorer_control,
    field_problem,
    gd_problem,
    horizons,
    intro,
    stopped_notes,
    study_view,
)
from polarize.web.view import Plot, View

PRESETS = ("paper-compare-logistic", "paper-compare-square")
KEYS = ("loss", "method", "lr", "horizon", "seed")
CONTROLS = (explorer_control("preset", options=PRESETS), *(explorer_control(k) for k in KEYS[:2]),
            explorer_control("lr", applies=lambda v: METHODS[v["method"]].stepped),
            *(explorer_control(k) for k in KEYS[3:]))
LABELS = {c.key: c.label for c in CONTROLS}


def defaults(preset: str | None) -> dict[str, Any]:
    values = preset_values(preset if preset in PRESETS else PRESETS[0])
    return {"preset": values["preset"], **{k: values[k] for k in KEYS}}


def experiment(values: Mapping[str, Any]) -> Experiment:
    return build_experiment({"preset": values["preset"], **{k: values[k] for k in KEYS}})


def check(values: Mapping[str, Any]) -> Problem | None:
    if METHODS[values["method"]].stepped:
        problem = gd_problem(values, (values["lr"],), "lr", "Learning rate")
        if problem:
            return problem
    try:
        experiment(values)
    except ConfigError as exc:
        return field_problem(exc, LABELS)
    return None


def draw(values: Mapping[str, Any], rows: list[Any], narrow: bool = False) -> Drawn:
    table = [{"normalizer": r.normalizer,  # no entropy where every score is 0 (a dead run): empty
              "final entropy": round(r.entropy, 4) + 0.0 if math.isfinite(r.entropy) else None,
              "max s": round(r.max_s, 4), "loss": f"{r.loss:.3g}", "on simplex": r.stayed_on_simplex,
              "status": r.result.status, "message": r.result.message} for r in rows]
    runs = {r.normalizer: r.result for r in rows}
    n = rows[0].result.s.shape[1]
    plot = Plot("grid", normalizers_figure(rows, narrow=narrow), (
        f"The same start (n = {n}) under each normalizer; press Play and the {len(rows)} panels run "
        f"together, evenly in log time. At t = {format_time(max(float(r.result.t[-1]) for r in rows))}: "
        f"{describe_normalizers(rows)} Only softmax moves each logit in proportion to its own share; "
        "the normalized maps (ReLU, L1, L2, sparsemax, sum) share its centring u\u1d62 \u2212 s\u00b7u but "
        "not that weighting, and sigmoid has a weighting s\u1d62(1 \u2212 s\u1d62) but no centring. "
        "A panel that stops early says why, in red."))
    return Drawn(plots=(plot,), table=table, runs=runs, notes=stopped_notes(runs))


def advice(values: Mapping[str, Any], partial: Partial | None) -> str:
    """The run's own advice (``overtime.advice``): every normalizer's run shares the settings."""
    return overtime.advice(experiment(values), partial.earliest() if partial else None, horizons(CONTROLS))


def runs(values: Mapping[str, Any]) -> Runs:
    """One run per normalizer (``compare_normalizers`` of it alone), all from the start drawn here once."""
    base = experiment(values).resolved()
    return Runs({name: (compare_normalizers, (base, (name,))) for name in NORMALIZERS},
                lambda rows: [row for part in rows.values() for row in part])


def view(job: tuple[tuple[str, Any], ...], narrow: bool = False) -> View:
    return study_view("normalizers", dict(job), runs, draw,
                      advise=advice, stored=lambda v: precomputed.stored_rows(experiment(v)), narrow=narrow)


PAGE = PageSpec(
    name="normalizers",
    lead=LEADS["normalizers"], nav_title="Normalizers side by side", title="Normalizers side by side",
    icon=":material/view_module:", url_path="normalizers", controls=CONTROLS, defaults=defaults, check=check,
    view=view, spinner="Running the comparison...",
    caption=intro("One starting point run under every normalizer \u03c3 (the paper's comparison, "
                  "10 \u00d7 10). Only softmax has the replicator form "
                  "\u0227\u1d62 = s\u1d62(u\u1d62 \u2212 s\u00b7u)."))
