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
from polarize.plots.present_figure import legend_room

__all__ = ["BAND", "GROWTH", "SPEED_ROW", "WIDTH", "controls_on_top"]

BAND = CONTROLS_MARGIN - TRANSPORT_TOP
"""Pixels of the controls' band (the buttons, then the time and the slider)."""
SPEED_ROW = 44
"""Pixels of the row of speed buttons under the slider (on a desktop they sit beside the counter)."""
_EDGE = 6
"""Pixels between the figure's top and its first button."""
_COLUMNED = 0.7
"""The share of a phone's width a legend's rows are estimated at: plotly aligns a legend's entries
in columns, which on a phone takes more rows than the estimate at the full width (Loss and
conditioning's 12 entries: 7 rows, estimated 4)."""
GROWTH = SPEED_ROW + _EDGE
"""Pixels a figure grows by with its transport on top (a figure fitted to a phone's window first
is fitted this much shorter)."""
WIDTH = 330
"""Pixels of a phone's figure when not told (a 390 px window less the page's padding)."""


def controls_on_top(figure: go.Figure | dict[str, Any], *,
                    width: float = WIDTH) -> go.Figure | dict[str, Any]:
    """A copy of a finished figure dict with its transport at its top (the figure itself if it has none).

    Parameters
    ----------
    figure : go.Figure or dict
        A figure (or a finished figure dict) whose controls sit ``TRANSPORT_TOP`` px and more
        below its plot, down to ``CONTROLS_MARGIN`` px
        (``animation.animation_controls``); not modified.
    width : float
        Pixels the figure is wide (a legend above the plot takes the rows it needs at it).

    Returns
    -------
    go.Figure or dict
        Of the same kind as ``figure``, its panels of the same size (the figure ``GROWTH`` px
        taller): the band moved from the bottom to the top, the controls placed in it with the
        speeds in a row under the slider, and a legend above the plot moved under them.
    """
    as_dict = isinstance(figure, dict)
    data = copy.deepcopy(figure) if as_dict else figure.to_dict()
    layout = data.get("layout", {})
    margin = layout.get("margin", {})
    if not layout.get("updatemenus") or not layout.get("height"):
        return figure
    height, top, bottom = layout["height"], margin.get("t", 100), margin.get("b", 80)
    plot = height - top - bottom  # kept: the figure grows or shrinks around it
    # What sits above the plot keeps its room: the top margin, or a legend above the plot (placed
    # from the plot up) with the rows it takes at a phone's width, which plotly made room for itself.
    above = legend_room(layout, data.get("data", []), plot, _COLUMNED * width)
    room = max(top, above + _EDGE if above else 0)
    new_top = room + BAND + SPEED_ROW + _EDGE
    # A control's y is a fraction of the plot: in pixels under the plot it was, it goes as far
    # under the band's top (``_EDGE`` below the figure's top) as it was under the transport's; the
    # speeds (beside a long counter such as "training step 2000" they collided) in a row of their own.
    transport = layout["updatemenus"][0]["y"]  # the first band's top: the transport buttons
    for item in [*layout["updatemenus"], *layout.get("sliders", [])]:
        speeds = any(str(b.get("name", "")).startswith("speed-") for b in item.get("buttons", ()))
        below_transport = BAND + 4 if speeds else (transport - item["y"]) * plot
        item["y"] = 1 + (new_top - _EDGE - below_transport) / plot
    # A legend placed from the figure's top goes under the band, as far under it as it was under the
    # figure's top; placed from the plot's top like the controls: plotly may widen the top margin
    # (for the axes' labels), which moves the plot and the controls down, and moves it with them.
    for key, item in layout.items():
        if key.startswith("legend") and isinstance(item, dict) and item.get("yref") == "container":
            from_top = (1 - item.get("y", 1.0)) * height
            item.update(yref="paper", y=1 + (room - from_top) / plot)
    new_bottom = max(bottom - BAND, TRANSPORT_TOP)  # the last panel's tick labels and axis title
    # A figure's title (placed from the figure's top, in its top margin) goes under the band too;
    # from the figure's top (plotly keeps a title's y within [0, 1]), with room for the few px
    # plotly may widen the top margin by.
    title = layout.get("title")
    if isinstance(title, dict) and title.get("text") and title.get("yref", "container") == "container":
        title.update(yanchor="top", y=1 - (new_top - room + 3 * _EDGE) / (new_top + plot + new_bottom))
    layout["margin"] = {**margin, "t": new_top, "b": new_bottom}
    layout["height"] = new_top + plot + new_bottom
    return data if as_dict else go.Figure(data, _validate=False)

