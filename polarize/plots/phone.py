"""A phone's animated figure with its transport on top: Play, the time and the slider above the panels.

On a phone a figure's panels are stacked, taller than the window, and the transport under them
(``plots.animation``) was about 1,600 px down the Explorer. ``controls_on_top`` moves the band of
controls from under the plot to the figure's top, above the legend and the panels: the bottom
margin keeps only what the last panel's tick labels and axis title need, the top margin takes
the band, and the plot area keeps its size in pixels.
"""

from __future__ import annotations

import copy
from typing import Any

import plotly.graph_objects as go

from polarize.plots.animation import CONTROLS_MARGIN, TRANSPORT_TOP

__all__ = ["BAND", "SPEED_ROW", "controls_on_top"]

BAND = CONTROLS_MARGIN - TRANSPORT_TOP
"""Pixels of the controls' band (the buttons, then the time and the slider)."""
SPEED_ROW = 34
"""Pixels of the row of speed buttons under the slider (on a desktop they sit beside the counter)."""
_EDGE = 6
"""Pixels between the figure's top and its first button."""


def controls_on_top(figure: go.Figure | dict[str, Any]) -> go.Figure | dict[str, Any]:
    """A copy of a finished figure dict with its transport at its top (the figure itself if it has none).

    Parameters
    ----------
    figure : go.Figure or dict
        A figure (or a finished figure dict) whose controls sit ``TRANSPORT_TOP`` px and more
        below its plot in a bottom margin of at least ``CONTROLS_MARGIN`` px
        (``animation.animation_controls``); not modified.

    Returns
    -------
    go.Figure or dict
        Of the same kind as ``figure``, its panels of the same size (the figure ``SPEED_ROW`` and a
        few px taller): the band moved from the bottom to the top, the controls placed in it with the
        speeds in a row under the slider, and a legend above the plot moved under them.
    """
    as_dict = isinstance(figure, dict)
    data = copy.deepcopy(figure) if as_dict else figure.to_dict()
    layout = data.get("layout", {})
    margin = layout.get("margin", {})
    if not layout.get("updatemenus") or margin.get("b", 0) < CONTROLS_MARGIN or not layout.get("height"):
        return figure
    height, top, bottom = layout["height"], margin.get("t", 100), margin["b"]
    old_plot = height - top - bottom
    new_top = top + BAND + SPEED_ROW + _EDGE
    plot = old_plot  # the figure grows by the speeds' row and the edge: the panels keep their size
    # A control's y is a fraction of the plot: in pixels under the plot it was, it goes as far
    # under the band's top (``_EDGE`` below the figure's top) as it was under the transport's; the
    # speeds (beside a long counter such as "training step 2000" they collided) in a row of their own.
    transport = layout["updatemenus"][0]["y"]  # the first band's top: the transport buttons
    for item in [*layout["updatemenus"], *layout.get("sliders", [])]:
        speeds = any(str(b.get("name", "")).startswith("speed-") for b in item.get("buttons", ()))
        below_transport = BAND + 4 if speeds else (transport - item["y"]) * old_plot
        item["y"] = 1 + (new_top - _EDGE - below_transport) / plot
    # What sat at the figure's top (a legend) goes under the band, its top where the figure's top
    # was; placed from the plot's top like the controls: plotly may widen the top margin (for the
    # axes' labels), which moves the plot and the controls down, and moves it with them.
    for key, item in layout.items():
        if key.startswith("legend") and isinstance(item, dict) and _above(item):
            from_top = (1 - item.get("y", 1.0)) * height if item.get("yref") == "container" else 0
            item.update(yref="paper", yanchor="top", y=1 + (top - from_top - 2) / plot)
    layout["margin"] = {**margin, "t": new_top, "b": bottom - BAND}
    layout["height"] = height + SPEED_ROW + _EDGE
    return data if as_dict else go.Figure(data, _validate=False)


def _above(legend: dict[str, Any]) -> bool:
    """Whether a legend sits above the plot: placed from the figure's top, or at a paper y above 1."""
    y = legend.get("y")
    if legend.get("yref") == "container":
        return True
    return isinstance(y, int | float) and y > 1
