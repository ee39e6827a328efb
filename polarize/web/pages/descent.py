"""Flow vs descent: the exact flow against gradient descent at several learning rates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from polarize.config import ConfigError, Experiment
from polarize.plots import descent_figure
from polarize.science import flow_vs_descent
from polarize.science.deadline import Partial
from polarize.status import Status
from polarize.web import overtime
from polarize.web.controls import Control
from polarize.web.experiment_controls import MAX_GD_STEPS
from polarize.web.leads import LEADS
from polarize.web.page import PageSpec, Problem
from polarize.web.study import (
    Drawn,
    Runs,
    explorer_control,
    field_problem,
    gd_problem,
    horizon,
    horizons,
    intro,
    start,
    study_view,
)
from polarize.web.view import Plot, View

CONTROLS = (*start(32), explorer_control("loss", options=("logistic", "square")), explorer_control("a_scale"),
            horizon(10, 1e5),
            Control("lrs", "Learning rates", "multiselect",
                    options=(0.01, 0.05, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0), most=5,
                    help=f"One column per step size; each needs horizon / lr \u2264 {MAX_GD_STEPS:,} steps."))
LABELS = {c.key: c.label for c in CONTROLS}


def experiment(values: Mapping[str, Any]) -> Experiment:
    return Experiment(n=values["n"], d=values["n"], loss=values["loss"], horizon=values["horizon"],
                      seed=values["seed"], a_init="gaussian", a_scale=values["a_scale"])


def check(values: Mapping[str, Any]) -> Problem | None:
    if not values["lrs"]:
        return Problem(("lrs",), "Learning rates: choose at least one.")
    try:
        experiment(values)
    except ConfigError as exc:
        return field_problem(exc, LABELS)
    return gd_problem(values, values["lrs"], "lrs", "Learning rates")


def draw(values: Mapping[str, Any], comparisons: list[Any], narrow: bool = False) -> Drawn:
    runs = {f"flow lr={c.lr:g}": c.flow for c in comparisons[:1]}
    runs |= {f"gd lr={c.lr:g}": c.descent for c in comparisons}
    # Words and numbers, never Python's None, True or tuples: a diverged descent has no winner.
    table = [{"lr": f"{c.lr:g}", "steps": f"{round(values['horizon'] / c.lr):,}",
              "flow winner": f"token {c.flow.winner}",
              "descent winner": "none: it diverged" if c.diverged else f"token {c.descent.winner}",
              "largest distance": f"{float(c.distance.max()):.3g}" if len(c.distance) else "\u2014",
              "same winner": "yes" if c.same_winner else "no", "diverged": "yes" if c.diverged else "no",
              "what happened": c.message}
             for c in comparisons]
    plot = Plot("descent", descent_figure(comparisons, narrow=narrow), (
        "Top: the exact flow (solid) and gradient descent (dashed, same colours) at each step size, "
        "on the time axis t = steps \u00d7 lr. Bottom: how far apart their scores are. Small steps retrace "
        "the flow; large ones drift, may crown another token, or diverge (reported in words and in red, "
        "drawn only while finite)."))
    return Drawn(plots=(plot,), table=table, runs=runs,
                 notes=tuple(c.message for c in comparisons if c.diverged or (not c.same_winner
                             and Status.OUT_OF_TIME not in (c.flow.status, c.descent.status))))


def advice(values: Mapping[str, Any], partial: Partial | None) -> str:
    """Leave out the smallest step size (it takes the most steps), lower the horizon, fewer tokens."""
    lrs, horizon = sorted(values["lrs"]), values["horizon"]
    smallest = (f"leave out the smallest learning rate (lr = {lrs[0]:g} takes {round(horizon / lrs[0]):,} "
                "steps)") if len(lrs) > 1 else f"raise the learning rate (now {lrs[0]:g})"
    reached = partial.earliest() if partial else None
    return overtime.to_see([smallest, overtime.lower_horizon(horizon, reached, horizons(CONTROLS)),
                            overtime.fewer_tokens(values["n"])], "every learning rate to the end")


def runs(values: Mapping[str, Any]) -> Runs:
    """One part per learning rate: its flow and its descent (``flow_vs_descent`` of it alone), all from
    the start drawn here once."""
    base = experiment(values).resolved()
    return Runs({f"lr = {lr:g}": (flow_vs_descent, (base, (lr,))) for lr in values["lrs"]},
                lambda parts: [c for part in parts.values() for c in part])


def view(job: tuple[tuple[str, Any], ...], narrow: bool = False) -> View:
    return study_view("descent", dict(job), runs, draw, advise=advice, narrow=narrow)


PAGE = PageSpec(
    name="descent",
    lead=LEADS["descent"], nav_title="Flow vs descent", title="Flow vs descent", icon=":material/stairs:",
    url_path="descent", controls=CONTROLS, check=check, view=view, spinner="Running the comparison...",
    defaults=lambda _: {"n": 6, "seed": 0, "loss": "square", "a_scale": 1.0, "horizon": 1000.0,
                        "lrs": (0.1, 2.0, 5.0, 20.0)},
    caption=intro("The exact gradient flow against gradient descent at several learning rates, from the same "
                  "start (a(0) = scale \u00d7 randn). Descent's time is steps \u00d7 lr."))
