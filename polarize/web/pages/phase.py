"""Phase portrait: the replicator picture of a softmax run, its rest points, and which start ends where."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from polarize.config import ConfigError, Experiment
from polarize.losses import LOSSES
from polarize.plots.portrait import basin_figure, odds_figure, portrait_figure
from polarize.science import basins as outcomes
from polarize.science import flow_field, format_time, rest_points
from polarize.science.deadline import Deadline, Partial
from polarize.web import overtime
from polarize.web.controls import Control
from polarize.web.leads import LEADS
from polarize.web.page import PageSpec, Problem
from polarize.web.study import (
    Drawn,
    explorer_control,
    field_problem,
    horizon,
    horizons,
    intro,
    study_view,
)
from polarize.web.view import Metric, Plot, View

MOST_TOKENS = 6
TIMES = (0.0, 0.1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6)
ODDS_SCALES = tuple(float(x) for x in np.geomspace(0.03, 10.0, 8))
ODDS_STARTS = 120
COSTLY_GRID = 50
"""Largest basin grid for the square and cross-entropy losses, whose runs are not the closed system."""
RESOLUTIONS = (30, 50, 70, 100)
"""The basin grids offered (``resolution x resolution`` starts)."""
PATHS = 24
"""Runs drawn over the field, spread over the basin grid."""

CONTROLS = (
    explorer_control("n", high=MOST_TOKENS, help="Tokens; beyond 3 the page shows a slice through three."),
    explorer_control("loss"),
    explorer_control("seed"),
    horizon(10, 1e6),
    Control("at", "Field at time t", "select_slider", options=TIMES, names_of=format_time,
            help="The value matrix V at this time of the run from a(0) = 0 sets the field: as V learns, "
                 "the field and its rest points move."),
    Control("resolution", "Basin grid", "select", options=RESOLUTIONS,
            names_of=lambda r: f"{r} x {r} starts", help="Starts on the triangle, each run to the horizon."),
    Control("pick_a", "Start: share of the 1st token", "number", 0.001, 0.98, step=0.001, half=True,
            group="One run from a start you choose", help="Or click a start on the basin map."),
    Control("pick_b", "Start: share of the 2nd token", "number", 0.001, 0.98, step=0.001, half=True,
            help="Or click a start on the basin map."),
    Control("tokens", "Slice through tokens", "multiselect", options=tuple(range(MOST_TOKENS)), most=3,
            applies=lambda v: v["n"] > 3, off_help=" (n = 3 shows the whole simplex)",
            help="Three tokens; the others keep the logits 0 of the start."),
)
LABELS = {c.key: c.label for c in CONTROLS}
CLICK = {"pick_a": 1, "pick_b": 2}
"""A clicked start of the basin map sets the chosen start (its customdata: index, s_a, s_b)."""


def defaults(_preset: str | None = None) -> dict[str, Any]:
    return {"n": 3, "loss": "logistic", "seed": 0, "horizon": 1e4, "at": 0.0, "resolution": 50,
            "pick_a": 0.2, "pick_b": 0.5, "tokens": (0, 1, 2)}


def _tokens(values: Mapping[str, Any]) -> tuple[int, int, int]:
    return (0, 1, 2) if values["n"] == 3 else tuple(sorted(values["tokens"]))


def experiment(values: Mapping[str, Any]) -> Experiment:
    return Experiment(n=values["n"], d=values["n"], loss=values["loss"], seed=values["seed"],
                      horizon=values["horizon"], samples=120)


def check(values: Mapping[str, Any]) -> Problem | None:
    if values["n"] > 3 and (len(values["tokens"]) != 3 or max(values["tokens"]) >= values["n"]):
        return Problem(("tokens",), f"Slice through tokens: choose three tokens below n = {values['n']}.")
    if values["pick_a"] + values["pick_b"] >= 1:
        return Problem(("pick_b", "pick_a"), "The start's two shares must add up to less than 1.")
    if not LOSSES[values["loss"]].margin and values["resolution"] > COSTLY_GRID:
        return Problem(("resolution",), f"Basin grid: at most {COSTLY_GRID} x {COSTLY_GRID} for this loss, "
                       "whose runs cost more than the logistic loss's closed system.")
    if values["at"] > values["horizon"]:
        return Problem(("at",), "Field at time t: choose a time up to the horizon.")
    try:
        experiment(values)
    except ConfigError as exc:
        return field_problem(exc, LABELS)
    return None


FIELD_CAPTION = (
    "Arrows: the direction the scores move with V frozen at the chosen time (colour: speed). Grey: runs "
    "from starts across the triangle, V learning along the way; red: the run from the start you chose. "
    "Filled circle: a stable rest point; open circle: unstable; diamond: a saddle; open square: "
    "degenerate. The labels come from the replicator's rates at the point: along its face, the eigenvalues "
    "of the field on that face; off it, each missing token's rate uⱼ - s·u (whether it grows "
    "back); degenerate where one of them is zero and so does not decide (zero against its own size: along "
    "a face the rates shrink with the square of the smallest share, so a point near a vertex is still "
    "labelled). A thick line is a line of rest points (a value matrix of rank below n can make one, under "
    "any loss), labelled by the rates across it; a whole triangle at rest is outlined. Under logistic loss "
    "the fitness is c p, so with V frozen the only rest points are the vertices and the largest p wins; "
    "moving the time shows the ranking of p change as V learns.")
SLICE_CAPTION = (
    " For n > 3 this is a slice: the other tokens keep logits 0, the "
    "triangle shows the three tokens' shares among themselves, and the rest points are those of the "
    "field on the slice (where those shares stand still). The other tokens still pull on the mean "
    "fitness, so there a vertex attracts or repels along both edges at once, and rest points can "
    "sit on edges even under logistic loss.")


def study(values: dict[str, Any], *, deadline: Deadline | None = None) -> dict[str, Any]:
    """Everything the page draws (runs in a worker): the single runs first, the ensembles last.

    The parts a ``deadline`` leaves out are None (the odds keep the scales done in time).
    """
    deadline = deadline or Deadline()
    e = experiment(values).resolved()
    tokens = _tokens(values)
    reference = deadline.simulate("the run from a(0) = 0", e)  # first: what the page's data holds
    V = flow_field.values_at(e, values["at"])
    shares, velocity = flow_field.portrait_field(e, V, 13, tokens)
    pick = np.array([[values["pick_a"], values["pick_b"], 1 - values["pick_a"] - values["pick_b"]]])
    out: dict[str, Any] = {"experiment": e, "tokens": tokens, "rest": rest_points.rest_points(e, V, tokens),
                           "shares": shares, "velocity": velocity, "reference": reference}
    # One start: a plain run (as ``simulate_many`` would make it), so the deadline can cut it.
    out["picked"] = deadline.simulate("your start", dataclasses.replace(
        e, a0=flow_field.slice_logits(pick, tokens, np.asarray(e.a0), e.temperature)[0]))
    odds = outcomes.naive_odds(e, ODDS_SCALES, ODDS_STARTS, seed=values["seed"], deadline=deadline)
    out["odds"] = odds if len(odds.scales) else None
    # The costliest part last, row by row of its grid: when time is short, the rows done are drawn.
    out["basins"] = outcomes.basins(e, values["resolution"], tokens, trajectories=True, deadline=deadline)
    return out


def draw(values: Mapping[str, Any], out: dict[str, Any], narrow: bool = False) -> Drawn:
    basins, tokens, picked, odds = out["basins"], out["tokens"], out["picked"], out["odds"]
    paths = [] if basins is None else [flow_field.slice_shares(basins.ensemble.s_path[k], tokens)
                                       for k in np.linspace(0, len(basins.ensemble) - 1, PATHS).astype(int)]
    mine = None if picked is None else flow_field.slice_shares(picked.s, tokens)
    when = format_time(values["at"])
    plots = (Plot("field", portrait_figure(
        out["shares"], out["velocity"], rest=out["rest"], paths=paths, picked=mine, tokens=tokens,
        n=values["n"], title=f"The field ds/dt with V held at its value at t = {when}"), FIELD_CAPTION
        + ("" if values["n"] == 3 else SLICE_CAPTION)),)
    metrics: tuple[Metric, ...] = ()
    if basins is not None:
        plots += (_basin_plot(values, basins, mine),)
        metrics += (Metric("naive prediction holds on", f"{float(np.mean(basins.naive_holds)):.0%}",
                           help="Share of the basin grid's starts (of those run) won by the token "
                                + _naive_name(values["loss"]) + "."),)
    if odds is not None:
        plots += (Plot("odds", odds_figure(odds), (
            f"From a(0) = scale x randn ({odds.starts} starts per scale), how often the token "
            f"{_naive_name(values['loss'])} still wins, with a 95% Wilson interval. How high it starts at "
            "small scales depends on the seed (it is one V\u2080 per seed); it falls towards chance "
            f"(1/{values['n']}) as the random logits swamp the value projections.")),)
    if picked is not None:
        metrics += (Metric("your start's winner", f"token {int(picked.winner)}"),)
    started = sum((len(basins.ensemble) if basins else 0, len(odds.scales) * odds.starts if odds else 0,
                   1 if picked else 0))
    metrics += (Metric("starts run", f"{started:,}"),)
    names = ", ".join(map(str, tokens))
    table = [{f"shares of tokens {names}": _where(r),
              "support": ("token " if len(r.support) == 1 else "tokens ") + ", ".join(map(str, r.support)),
              "stability": r.stability} for r in out["rest"]]
    runs = {} if out["reference"] is None else {"from a(0) = 0": out["reference"]}
    return Drawn(plots=plots, table=table, runs=runs, metrics=metrics)


def _naive_name(loss: str) -> str:
    """The naive guess's token in words (``LossKind.naive``: p is the value projection only under a
    margin loss)."""
    return LOSSES[loss].naive


def _where(point: Any) -> str:
    """A rest point's shares, or the ends of the line (the corners of the region) of rest points it is on."""
    def shares(r: np.ndarray) -> str:
        return ", ".join(f"{x:.3f}" for x in r)
    if point.continuum is None:
        return shares(point.shares)
    what = "a line of rest points" if len(point.continuum) == 2 else "a region of rest points"
    return f"{what} from ({shares(point.continuum[0])}) to ({shares(point.continuum[-1])})"


def _basin_plot(values: Mapping[str, Any], basins: Any, mine: np.ndarray | None) -> Plot:
    naive = basins.naive
    largest = _naive_name(values["loss"])
    return Plot("basins", basin_figure(basins, picked=mine, title="Which token wins from each start"), (
        "Click a start to run from it. "
        f"Each start of a {basins.resolution} x {basins.resolution} grid, coloured by the token that wins "
        f"at t = {format_time(values['horizon'])}. The naive prediction says token {naive} ({largest}) "
        "wins, as it does from a(0) = 0 under logistic loss; faded squares are where it does. "
        "The dotted line is where it stops holding." + (
            f" Under {LOSSES[values['loss']].label} loss, a start that favours another token gives it a "
            "larger share s\u1d62, and since dp\u1d62/dt = c s\u1d62 its value projection then grows faster "
            "and overtakes (the rich get richer)." if LOSSES[values["loss"]].margin else "") + (
            f" Grey: the {basins.missing:,} starts not run in the time a page allows." if basins.missing
            else "")), selects=CLICK)


def advice(values: Mapping[str, Any], partial: Partial | None) -> str:
    """What makes this page's runs cheaper: a smaller basin grid, the logistic loss, a lower horizon."""
    smaller = [r for r in RESOLUTIONS if r < values["resolution"]]
    grid = f"a smaller basin grid (now {values['resolution']} x {values['resolution']})" if smaller else None
    name = LOSSES.labels.get(values["loss"], values["loss"])
    loss = (f"the logistic loss (its runs are a closed system, far cheaper than the {name} loss's)"
            if not LOSSES[values["loss"]].margin else None)
    reached = partial.earliest() if partial else None
    horizon = overtime.lower_horizon(values["horizon"], reached, horizons(CONTROLS))
    return overtime.to_see([grid and f"use {grid}", loss and f"use {loss}", horizon,
                            "use n = 3" if values["n"] > 3 else None], "every part of it")


def view(job: tuple[tuple[str, Any], ...], narrow: bool = False) -> View:
    return study_view("phase", dict(job), lambda v: (study, (v,)), draw, advise=advice, narrow=narrow)


PAGE = PageSpec(
    name="phase",
    lead=LEADS["phase"], nav_title="Phase portrait", title="Phase portrait", icon=":material/scatter_plot:",
    url_path="phase", controls=CONTROLS, check=check, view=view, defaults=defaults,
    spinner="Running every start...",
    caption=intro("The replicator picture of softmax gradient flow on the simplex: the field, its rest "
                  "points, and which token wins from each start, with the value matrix learning as it goes."))
