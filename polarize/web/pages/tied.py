"""Massive activations: the tied model's winning column of U grows, the others stay near 1."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from polarize.plots import tied_figure
from polarize.presets import PAPER_TIED_SIZES, get_preset, paper_tied
from polarize.science.deadline import Deadline, Partial
from polarize.web import overtime
from polarize.web.controls import Control
from polarize.web.leads import LEADS
from polarize.web.page import PageSpec, Problem
from polarize.web.study import Drawn, Runs, horizon, horizons, intro, stopped_notes, study_view
from polarize.web.view import Plot, View

CONTROLS = (Control("sizes", "Sizes D", "multiselect", options=(2, 5, 10, 20, 50, 100, 150), most=5,
                    help="One row of panels per size (the paper: 10, 20, 50, 100)."),
            horizon(10, 5e4))


def study(sizes: tuple[int, ...], horizon: float, *, deadline: Deadline | None = None) -> dict[int, Any]:
    """The paper's tied model for each size ``D`` up to ``horizon`` (D -> Result; not those the
    ``deadline`` left out)."""
    deadline = deadline or Deadline()
    results = {D: deadline.simulate(f"D = {D}", dataclasses.replace(paper_tied(D), horizon=horizon))
               for D in sizes}
    return {D: r for D, r in results.items() if r is not None}


def check(values: Mapping[str, Any]) -> Problem | None:
    if not values["sizes"]:
        return Problem(("sizes",), "Sizes D: choose at least one.")
    return None


def draw(values: Mapping[str, Any], results: dict[int, Any], narrow: bool = False) -> Drawn:
    runs = {f"D={D}": r for D, r in results.items()}
    table = []
    for D, r in results.items():
        norms = np.asarray(r.column_norms[-1])
        others = np.delete(norms, r.winner)
        table.append({"D": D, "winner": r.winner, "winner column norm": round(float(norms[r.winner]), 3),
                      "largest other norm": round(float(others.max()), 3) if others.size else None,
                      "max \u03b1": round(float(r.s[-1].max()), 4), "final loss": f"{r.loss[-1]:.3g}",
                      "status": r.status})
    plot = Plot("tied", tied_figure(results, narrow=narrow), (
        "The tied model z = Ua, \u03b1 = softmax(z), \u03b2 = U\u03b1, from U(0) = I. Right: the column of U "
        "at the winning token (red) grows steadily, while every other column stays near norm 1 (grey, "
        "dashed: the largest; dotted: the smallest): a massive activation, the same for every D."))
    return Drawn(plots=(plot,), table=table, runs=runs, notes=stopped_notes(runs))


def advice(values: Mapping[str, Any], partial: Partial | None) -> str:
    """Fewer sizes (the largest cost the most), or a lower horizon (to where a cut size got)."""
    sizes = sorted(values["sizes"], reverse=True)
    reached = partial.earliest() if partial else None
    lower = overtime.lower_horizon(values["horizon"], reached, horizons(CONTROLS))
    return overtime.to_see([overtime.fewer("sizes D, leaving out the largest", sizes), lower],
                           "every size to the end")


def runs(values: Mapping[str, Any]) -> Runs:
    """One run per size D (``study`` of it alone)."""
    return Runs({f"D = {D}": (study, ((D,), values["horizon"])) for D in values["sizes"]},
                lambda parts: {D: r for part in parts.values() for D, r in part.items()})


def view(job: tuple[tuple[str, Any], ...], narrow: bool = False) -> View:
    return study_view("tied", dict(job), runs, draw,
                      advise=advice, narrow=narrow)


PAGE = PageSpec(
    name="tied",
    lead=LEADS["tied"], nav_title="Massive activations", title="Massive activations", icon=":material/bolt:",
    url_path="tied", controls=CONTROLS, check=check, view=view, spinner="Running the comparison...",
    # Two of the paper's sizes, the smallest and the largest: its four rows were 35 px tall at 1280 x 720
    # (the chooser adds the others).
    defaults=lambda _: {"sizes": (PAPER_TIED_SIZES[0], PAPER_TIED_SIZES[-1]),
                        "horizon": float(get_preset("paper-tied-10").experiment.horizon)},
    caption=intro("The tied model z = Ua, \u03b1 = softmax(z), \u03b2 = U\u03b1 (logistic loss, U(0) = I), "
                  "for several sizes D: the paper's toy model of massive activations."))
