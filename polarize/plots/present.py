"""A figure for presentation mode: larger type (``style.PRESENT_SCALE``), fitted to the window's height."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from polarize.plots import style

__all__ = ["presented"]

_DEFAULT_HEIGHT, _DEFAULT_MARGIN = 450, {"l": 80, "r": 80, "t": 100, "b": 80}
"""Plotly's own, for a figure that does not set them."""
_LEAST_PLOT = 160
"""Fewest pixels left for the plot area: below it the margins shrink instead."""


def presented(figure: go.Figure, *, height: int, scale: float = style.PRESENT_SCALE) -> go.Figure:
    """A copy of ``figure`` with every font and margin ``scale`` times larger, at most ``height`` px tall.

    Controls and legends placed outside the plot area (play buttons, the time slider, a legend
    above the panels) keep their distance from it in pixels, scaled with the type: Plotly places
    them in fractions of the plot area, which changes with the height.

    Parameters
    ----------
    figure : go.Figure
        Not modified (figures are shared through the renderer's cache).
    height : int
        The most pixels the figure may take (the window's height less the page's title); a small
        figure grows only to ``scale`` times its height.
    scale : float

    Returns
    -------
    go.Figure
    """
    data = style.scale_fonts(figure.to_dict(), scale)
    layout = data["layout"]
    old_height = layout.get("height") or _DEFAULT_HEIGHT
    margin = {side: layout.get("margin", {}).get(side, _DEFAULT_MARGIN[side]) for side in _DEFAULT_MARGIN}
    old_plot = max(old_height - margin["t"] - margin["b"], 1)
    new_height = int(min(height, old_height * scale))
    grow = min(scale, max(new_height - _LEAST_PLOT, 0) / max(margin["t"] + margin["b"], 1))
    margin = {side: round(value * grow) for side, value in margin.items()}
    new_plot = max(new_height - margin["t"] - margin["b"], 1)
    ratio = old_plot * grow / new_plot
    for item in [*layout.get("updatemenus", []), *layout.get("sliders", []), *_legends(layout)]:
        item["y"] = _moved(item.get("y"), ratio)
    layout.update(height=new_height, margin=margin)
    return go.Figure(data, _validate=False)


def _legends(layout: dict[str, Any]) -> list[dict[str, Any]]:
    """The legends placed in fractions of the plot area (not of the whole figure)."""
    return [value for key, value in layout.items()
            if key.startswith("legend") and isinstance(value, dict) and value.get("yref", "paper") == "paper"]


def _moved(y: Any, ratio: float) -> Any:
    """A paper ``y`` outside the plot area, its distance from the area's edge times ``ratio``."""
    if not isinstance(y, int | float) or 0 <= y <= 1:
        return y
    return 1 + (y - 1) * ratio if y > 1 else y * ratio
