"""Static figures in the layout of the paper's toy experiments (arXiv:2603.06248 section 6).

Every figure is the small-multiples renderer in its static mode; the tied model
and the regression are the comparison pages' own builders (``comparisons.tied_figure``,
``comparisons.regression_figure``) with ``animated=False``. Time axes are logarithmic,
so the saved time ``t = 0`` is left out. A run that stopped early is drawn up to
where it stopped, with its message as a note. Runs come labelled as in
``polarize.cli.reproduce`` (``"D = 10"``, ``"kappa = 4"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from polarize.diagnostics import Result
from polarize.plots import comparisons, style
from polarize.plots.comparisons import stopped_note
from polarize.plots.lines import Line, Panel, token_lines
from polarize.plots.multiples import animated_grid
from polarize.plots.style import token_colors
from polarize.science import kl_floor

__all__ = [
    "WIDTH",
    "kl_figure",
    "logistic_figure",
    "normalizers_figure",
    "regression_figure",
    "tied_figure",
    "token_colors",
]

WIDTH = 1200
"""Pixels: the exported PNG and SVG are this wide."""


def _paper(fig: dict[str, Any]) -> dict[str, Any]:
    """The exported size and room above the panels for a title (the figure dict, changed in place).

    Not validated, like the pages' figures: a ``go.Figure`` took a third of ``polarize reproduce``'s
    drawing time; the tests validate every paper figure.
    """
    top = 70 + (40 if fig["layout"].get("showlegend") else 0)
    style.layout_update(fig["layout"], width=WIDTH, margin=dict(t=top),
                        title=dict(y=1.0, yanchor="top", pad=dict(t=15), font=style.font(2)))
    return fig


def _by_value(results: Mapping[str, Result]) -> dict[float, Result]:
    """Runs keyed by the number in their label (``"kappa = 4"`` -> 4.0)."""
    return {float(label.split("=")[-1]): r for label, r in results.items()}


def logistic_figure(result: Result) -> dict[str, Any]:
    """Scores ``s_i(t)`` (log-log) and value projections ``p_i(t)`` (log-x): paper experiment 1."""
    panels = [Panel(title="scores s<sub>i</sub>(t)", log_y=True, note=stopped_note(result),
                    lines=token_lines(result.t, result.s, prefix="s", legend=True))]
    if result.p is not None:
        panels.append(Panel(title="value projections p<sub>i</sub> = (V<sup>T</sup>\u03b2*)<sub>i</sub>",
                            lines=token_lines(result.t, result.p, prefix="p")))
    return _paper(animated_grid(panels, cols=2, legend=True, animated=False, height=480))


def normalizers_figure(results: Mapping[str, Result]) -> dict[str, Any]:
    """Normalized scores ``alpha(t)`` and logits ``a(t)``, one row per normalizer: experiment 2."""
    panels = []
    for row, (name, r) in enumerate(results.items()):
        panels += [Panel(title=f"{name}: \u03b1(t)", note=stopped_note(r),
                         lines=token_lines(r.t, r.s, prefix="\u03b1", legend=row == 0)),
                   Panel(title=f"{name}: a(t)", lines=token_lines(r.t, r.a, prefix="a"))]
    return _paper(animated_grid(panels, cols=2, row_height=230, legend=True, animated=False))


def tied_figure(results: Mapping[str, Result]) -> dict[str, Any]:
    """Loss, ``alpha(t)`` and the winning column's norm against the others: experiment 3."""
    return _paper(comparisons.tied_figure({int(D): r for D, r in _by_value(results).items()}, animated=False))


def regression_figure(results: Mapping[str, Result]) -> dict[str, Any]:
    """Logits ``a(t)`` per condition number, and final entropy and ``max s`` against it: experiment 4."""
    return _paper(comparisons.regression_figure(_by_value(results), animated=False, summary=True))


def kl_figure(result: Result) -> dict[str, Any]:
    """Loss against its floor ``H(p*)``, gradient norms and logits ``a(t)``: experiment 5."""
    t = result.t
    loss = (Line(x=t, y=result.loss, name="loss", width=3),)
    floor = kl_floor(result.experiment)
    if floor is not None:
        loss += (Line(x=np.array([t[t > 0][0], t[-1]]), y=np.array([floor, floor]), legend=True,
                      name=f"H(p*) = {floor:.4f}", color=style.PALETTE.alert, dash="dash", width=2),)
    first, second = style.PALETTE.cycle[:2]
    panels = [
        Panel(title="loss and its floor H(p*)", lines=loss, note=stopped_note(result)),
        Panel(title="gradient norms", log_y=True, lines=(
            Line(x=t, y=result.grad_norm_V, name="|dL/dV|", color=first, legend=True),
            Line(x=t, y=result.grad_norm_a, name="|dL/da|", color=second, legend=True))),
        Panel(title="a(t)", lines=token_lines(t, result.a, prefix="a")),
    ]
    return _paper(animated_grid(panels, cols=3, legend=True, animated=False, height=460))
