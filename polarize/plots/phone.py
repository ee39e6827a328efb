"""A phone's animated figure with its transport on top: Play, the time and the slider above the panels.

On a phone a figure's panels are stacked, taller than the window, and the transport under them
(``plots.animation``) was about 1,600 px down the Explorer. ``controls_on_top`` moves the band of
controls from under the plot to the figure's top, above the legend and the panels: the bottom
margin keeps only what the last panel's tick labels and axis title need, the top margin takes
the band, and the plot area keeps its size in pixels (less a few above the band).
"""

from __future__ import annotations

import copy
from typing import Any

import plotly.graph_objects as go

from polarize.plots.animation import CONTROLS_MARGIN, TRANSPORT_TOP

__all__ = ["BAND", "controls_on_top"]

BAND = CONTROLS_MARGIN - TRANSPORT_TOP
"""Pixels of the controls' band (the buttons, then the time and the slider)."""
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
        Of the same kind as ``figure``, of the same height (its plot area ``_EDGE`` px less): the band
        moved from the bottom to the top, the controls placed in it, and what is placed from
        the figure's top (its legend) moved down.
    """
    as_dict = isinstance(figure, dict)
    data = copy.deepcopy(figure) if as_dict else figure.to_dict()
    layout = data.get("layout", {})
    margin = layout.get("margin", {})
    if not layout.get("updatemenus") or margin.get("b", 0) < CONTROLS_MARGIN or not layout.get("height"):
        return figure
    height, top, bottom = layout["height"], margin.get("t", 100), margin["b"]
    old_plot = height - top - bottom
    new_top = top + BAND + _EDGE
    plot = old_plot - _EDGE  # the edge above the band is taken from the plot area
    # A control's y is a fraction of the plot: in pixels under the plot it was, it goes as far
    # under the band's top (``_EDGE`` below the figure's top) as it was under the transport's.
    controls = [*layout["updatemenus"], *layout.get("sliders", [])]
    transport = layout["updatemenus"][0]["y"]  # the first band's top: the transport buttons
    for item in controls:
        below_transport = (transport - item["y"]) * old_plot
        item["y"] = 1 + (new_top - _EDGE - below_transport) / plot
    # A legend placed from the figure's top goes under the band, placed from the plot's top like the
    # controls: plotly may widen the top margin (for the axes' labels), which moves the plot and the
    # controls down, and must move the legend with them.
    for key, item in layout.items():
        if key.startswith("legend") and isinstance(item, dict) and item.get("yref") == "container":
            from_top = (1 - item.get("y", 1.0)) * height + BAND + _EDGE
            item.update(yref="paper", y=1 + (new_top - from_top) / plot)
    layout["margin"] = {**margin, "t": new_top, "b": bottom - BAND}
    return data if as_dict else go.Figure(data, _validate=False)
