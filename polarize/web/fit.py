"""A view fitted to its display: ``fit(view, display)``, the one place a display meets the figures.

The renderer builds a page's view for the display's ``phone`` (``PageSpec.show``), then fits it
here, once per display: the numbers above the main figure moved below it, every figure no taller
than the room the display leaves it (``Display.figure_room``), larger and without small print in
presentation mode, and repainted for a dark page (``plots.style.in_dark``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import plotly.graph_objects as go

from polarize.plots.display import Display, Mode
from polarize.plots.style import in_dark
from polarize.web.present_view import figure_first, fitted_view, on_a_phone, presented_view
from polarize.web.view import Columns, Plot, View

__all__ = ["fit"]


def fit(view: View, display: Display) -> View:
    """``view`` fitted to ``display`` (a new view; ``view``, shared by every session, is not modified).

    Parameters
    ----------
    view : View
        Built for ``display.phone`` (``PageSpec.show``).
    display : Display
        The window, the mode and the theme (``polarize.plots.display``).

    Returns
    -------
    View
        Its main figure first; in presentation mode its captions and help gone.
    """
    view = figure_first(view)
    width = display.column_width
    if display.mode is Mode.PHONE:
        view = on_a_phone(presented_view(view, height=None) if display.presenting else view,
                          width=width, window=display.height)
    elif display.mode is Mode.PRESENT:
        view = presented_view(view, height=display.figure_room, width=width)
    else:
        view = fitted_view(view, height=display.figure_room, width=width)
    return replace(view, blocks=_dark(view.blocks)) if display.dark else view


def _dark(blocks: tuple[Any, ...]) -> tuple[Any, ...]:
    out: list[Any] = []
    for block in blocks:
        if isinstance(block, Plot):
            block = replace(block, figure=_dark_figure(block.figure))
        elif isinstance(block, Columns):
            block = replace(block, columns=tuple(_dark(column) for column in block.columns))
        out.append(block)
    return tuple(out)


def _dark_figure(figure: Any) -> Any:
    if isinstance(figure, dict):
        return in_dark({**figure, "layout": _copy(figure["layout"]), "data": _copy(figure.get("data", [])),
                        "frames": _copy(figure.get("frames", []))})
    return go.Figure(in_dark(figure.to_dict()), _validate=False)


def _copy(node: Any) -> Any:
    """A copy of the dicts and lists of a figure's part (arrays of numbers shared: never painted)."""
    if isinstance(node, dict):
        return {key: value if key == "template" else _copy(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_copy(item) for item in node]
    return node
