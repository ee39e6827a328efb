"""Phase portrait: the replicator picture of a softmax run, its rest points, and which start ends where."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from polarize.config import ConfigError, Experiment
from polarize.ensemble import simulate_many
from polarize.integrate import simulate
from polarize.plots.phase import basin_figure, odds_figure, portrait_figure
from polarize.science import format_time, phase
from polarize.web.comparisons.common import Drawn, explorer_control, field_problem, horizon, intro, study_view
from polarize.web.controls import Control
from polarize.web.page import Metric, PageSpec, Plot, Problem, View

MOST_TOKENS = 6
TIMES = (0.0, 0.1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6)
ODDS_SCALES = tuple(float(x) for x in np.geomspace(0.03, 10.0, 8))
ODDS_STARTS = 120
COSTLY_GRID = 50
"""Largest basin grid for the square and cross-entropy losses, whose runs are not the closed system."""
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
    Control("resolution", "Basin grid", "select", options=(30, 50, 70, 100),
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
    if values["loss"] != "logistic" and values["resolution"] > COSTLY_GRID:
        return Problem(("resolution",), f"Basin grid: at most {COSTLY_GRID} x {COSTLY_GRID} for this loss, "
                       "whose runs cost more than the logistic loss's closed system.")
    if values["at"] > values["horizon"]:
        return Problem(("at",), "Field at time t: choose a time up to the horizon.")
    try:
        experiment(values)
    except ConfigError as exc:
        return field_problem(exc, LABELS)
    return None


def study(values: dict[str, Any]) -> dict[str, Any]:
    """Everything the page draws (runs in a worker)."""
    e = experiment(values).resolved()
    tokens = _tokens(values)
    V = phase.values_at(e, values["at"])
    shares, velocity = phase.portrait_field(e, V, 13, tokens)
    basins = phase.basins(e, values["resolution"], tokens, trajectories=True)
    pick = np.array([[values["pick_a"], values["pick_b"], 1 - values["pick_a"] - values["pick_b"]]])
    picked = simulate_many(e, phase.slice_logits(pick, tokens, np.asarray(e.a0)), trajectories=True)
    return {"experiment": e, "tokens": tokens, "rest": phase.rest_points(e, V, tokens),
            "shares": shares, "velocity": velocity, "basins": basins, "picked": picked,
            "odds": phase.naive_odds(e, ODDS_SCALES, ODDS_STARTS, seed=values["seed"]),
            "reference": simulate(e)}


def draw(values: Mapping[str, Any], out: dict[str, Any]) -> Drawn:
    basins, tokens, picked = out["basins"], out["tokens"], out["picked"]
    paths_idx = np.linspace(0, len(basins.shares) - 1, PATHS).astype(int)
    paths = [phase.slice_shares(basins.ensemble.s_path[k], tokens) for k in paths_idx]
    mine = phase.slice_shares(picked.s_path[0], tokens)
    when = format_time(values["at"])
    field = Plot("field", portrait_figure(
        out["shares"], out["velocity"], rest=out["rest"], paths=paths, picked=mine, tokens=tokens,
        n=values["n"], title=f"The field ds/dt with V held at its value at t = {when}"), (
        "Arrows: the direction the scores move with V frozen at the chosen time (colour: speed). Grey: runs "
        "from starts across the triangle, V learning along the way; red: the run from the start you chose. "
        "Filled circle: a stable rest point; open circle: unstable; diamond: a saddle. Under logistic loss "
        "the fitness is c p, so with V frozen the only rest points are the vertices and the largest p wins; "
        "moving the time shows the ranking of p change as V learns."
        + ("" if values["n"] == 3 else " For n > 3 this is a slice: the other tokens keep logits 0, the "
           "triangle shows the three tokens' shares among themselves, and the rest points are those of the "
           "field on the slice (where those shares stand still). The other tokens still pull on the mean "
           "fitness, so there a vertex attracts or repels along both edges at once, and rest points can "
           "sit on edges even under logistic loss.")))
    naive = basins.naive
    largest = ("largest p\u1d62(0) = v\u1d62\u00b7\u03b2*" if values["loss"] == "logistic"
               else "largest fitness u\u1d62 at a(0) = 0")
    basin = Plot("basins", basin_figure(basins, picked=mine, title="Which token wins from each start"), (
        "Click a start to run from it. "
        f"Each start of a {basins.resolution} x {basins.resolution} grid, coloured by the token that wins "
        f"at t = {format_time(values['horizon'])}. The naive prediction says token {naive} ({largest}) "
        "wins, as it does from a(0) = 0 under logistic loss; faded squares are where it does. "
        "The dotted line is where it stops holding: a start that favours another token gives it a larger "
        "share s\u1d62, and since dp\u1d62/dt = c s\u1d62 its value projection then grows faster and "
        "overtakes (the rich get richer)."), selects=CLICK)
    odds = out["odds"]
    odds_plot = Plot("odds", odds_figure(odds), (
        f"From a(0) = scale x randn ({odds.starts} starts per scale), how often the token with the largest "
        "p\u1d62(0) still wins, with a 95% Wilson interval: near 1 for small scales, falling towards "
        f"chance (1/{values['n']}) as the random logits swamp the value projections."))
    share = float(np.mean(basins.naive_holds))
    metrics = (Metric("naive prediction holds on", f"{share:.0%}",
                      help="Share of the basin grid's starts won by the token with the largest pᵢ(0)."),
               Metric("your start's winner", f"token {int(picked.winner[0])}"),
               Metric("starts run", f"{len(basins.shares) + len(odds.scales) * odds.starts + 1:,}"))
    table = [{f"shares of tokens {tokens}": str(np.round(r.shares, 3).tolist()), "support": str(r.support),
              "stability": r.stability} for r in out["rest"]]
    return Drawn(plots=(field, basin, odds_plot), table=table, runs={"from a(0) = 0": out["reference"]},
                 metrics=metrics)


def view(job: tuple[tuple[str, Any], ...]) -> View:
    return study_view("phase", dict(job), lambda v: (study, (v,)), draw)


PAGE = PageSpec(
    name="phase", nav_title="Phase portrait", title="Phase portrait", icon=":material/scatter_plot:",
    url_path="phase", controls=CONTROLS, check=check, view=view, defaults=defaults,
    spinner="Running every start...",
    caption=intro("The replicator picture of softmax gradient flow on the simplex: the field, its rest "
                  "points, and which token wins from each start, with the value matrix learning as it goes."))
