"""A figure fitted to the room a display leaves it: at most that tall, in presentation mode with
larger type (``style.PRESENT_SCALE``); distances outside the plot kept in pixels (``plots.geometry``)."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from polarize.plots import style
from polarize.plots.crowding import LEGEND_ROW, LOG_TICK_GROWTH, legend_rows, uncrowded
from polarize.plots.geometry import LEAST_PLOT, ON_TOP, PHONE_LEGEND_SHARE, fraction

__all__ = ["LOG_TICK_GROWTH", "even_log_ticks", "legend_room", "presented"]

_DEFAULT_HEIGHT, _DEFAULT_MARGIN = 450, {"l": 80, "r": 80, "t": 100, "b": 80}
"""Plotly's own, for a figure that does not set them."""


def presented(figure: dict[str, Any], *, height: int, width: float,
              scale: float = style.PRESENT_SCALE, least_row: float = 0, least_font: float = 0,
              even_logs: bool = False) -> dict[str, Any]:
    """A copy of ``figure`` with every font and margin ``scale`` times larger, at most ``height`` px tall.

    Controls and legends placed outside the plot area (play buttons, the time slider, a legend
    above the panels) keep their distance from it in pixels, scaled with the type: Plotly places
    them in fractions of the plot area, which changes with the height. So do the gaps between rows
    of panels (where a row's tick labels and the next row's titles go); the panels take the rest.

    Parameters
    ----------
    figure : dict
        A finished figure dict (every builder's); not modified (figures
        are shared through the renderer's cache).
    height : int
        The most pixels the figure may take (the window's height less the page's title); a small
        figure grows only to ``scale`` times its height.
    width : float
        Pixels the figure is expected to be wide (its place on the page): panels too short or
        too narrow for what they hold lose it (``crowding.uncrowded``), never their type.
    scale : float
    least_row : float
        Fewest pixels of a row of panels (a phone's: ``geometry.LEAST_ROW``): a figure whose rows
        would be shorter at ``height`` is made taller than it.
    least_font : float
        Fewest pixels of any type once scaled (a hall's: ``style.PRESENT_LEAST``); the gaps between
        rows of panels then grow as much as the smallest tick labels (``style.least_growth``).
    even_logs : bool
        A log axis's tick labels as large as a linear one's (``even_log_ticks``): a hall's.

    Returns
    -------
    dict
        A new figure dict.
    """
    growth = style.least_growth(figure["layout"], scale, least_font)
    data = style.scale_fonts(copy.deepcopy(figure), scale)
    if least_font:
        style.least_fonts(data, least_font)
    layout = data["layout"]
    if even_logs:
        even_log_ticks(layout)
    old_height = layout.get("height") or _DEFAULT_HEIGHT
    margin = {side: layout.get("margin", {}).get(side, _DEFAULT_MARGIN[side]) for side in _DEFAULT_MARGIN}
    old_plot = max(old_height - margin["t"] - margin["b"], 1)
    new_height = int(min(height, old_height * scale))
    grow = min(scale, max(new_height - LEAST_PLOT, 0) / max(margin["t"] + margin["b"], 1))
    # The gaps between rows hold a row's tick labels and the next row's titles: they grow with the
    # smallest type (raised to ``least_font``), the margins (titles, the transport) with the scale.
    between = grow * growth / scale
    margin = {side: round(value * grow) for side, value in margin.items()}
    # A legend above the plot may take more rows at the larger type: room for it, or plotly would
    # push the plot down itself and the controls below (placed in fractions of it) up into it.
    # A phone's transport on top (``geometry.margins``) stays above that legend: if the legend needs
    # more room, the transport moves up with the top margin.
    on_top = _on_top(layout)
    inside = PHONE_LEGEND_SHARE * width if on_top else width - margin["l"] - margin["r"]
    # A legend from the plot's left edge may run on into the right margin.
    margin["t"] = _top_legend(layout, data.get("data", []), margin["t"], grow, width - margin["l"])
    needed = legend_room(layout, data.get("data", []), old_plot * grow, inside) + (round(ON_TOP * grow)
                                                                                  if on_top else 0)
    if needed > margin["t"]:
        for item in _transport(layout):
            if item["y"] > 1:
                item["y"] += fraction(needed - margin["t"], old_plot * grow)
        margin["t"] = needed
    new_plot = max(new_height - margin["t"] - margin["b"], 1)
    # Rows of panels no shorter than ``least_row`` (their gaps, kept in px, must not crush them):
    # a figure with more rows than its window holds is taller than the window, and legible.
    gap, rows = _gaps(layout)
    least = round(gap * old_plot * between + rows * least_row)
    if least_row and new_plot < least:
        new_height += least - new_plot
        new_plot = least
        if isinstance(layout.get("meta"), dict):
            layout["meta"]["taller"] = True  # than ``height``: the layout tests look for it
    ratio = old_plot * grow / new_plot
    for item in [*_transport(layout), *_legends(layout)]:
        item["y"] = _moved(item.get("y"), ratio)
    frames = [f["layout"] for f in data.get("frames", []) if isinstance(f.get("layout"), dict)]
    _open_rows(layout, old_plot * between / new_plot, frames)
    _keep_title(layout, old_height * grow, new_height)
    layout.update(height=new_height, margin=margin)
    uncrowded(layout, data.get("data", []), plot_px=new_plot, width=width)
    return data


def even_log_ticks(layout: dict[str, Any]) -> dict[str, Any]:
    """A log axis's tick labels drawn at the size of a linear axis's with the same font, in place.

    plotly.js draws power-format labels ("10\u00b2") ``LOG_TICK_GROWTH`` times their font, and the
    labels between decades ("2", "5") three quarters of it: the font is made smaller by that growth,
    and an axis of a decade or more that plotly would label between decades gets whole decades.
    """
    base = float(layout.get("font", {}).get("size") or 12)
    for key, axis in layout.items():
        if not (key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict) and axis.get("type") == "log"
                and axis.get("exponentformat") == "power" and not axis.get("tickformat")):
            continue
        font = axis.get("tickfont") or {}
        axis["tickfont"] = {**font, "size": float(font.get("size") or base) / LOG_TICK_GROWTH}  # unrounded
        span = axis.get("range")
        if "dtick" not in axis and isinstance(span, list | tuple) and len(span) == 2 \
                and abs(span[1] - span[0]) >= 1:
            axis.update(tick0=0, dtick=1)
    return layout


def _keep_title(layout: dict[str, Any], old: float, new: float) -> None:
    """A title placed from the figure's top (a phone's, under its transport) kept as many pixels under
    it (``old``: the figure's height those pixels were a fraction of, scaled); in place."""
    title = layout.get("title")
    if isinstance(title, dict) and title.get("yref") == "container" and title.get("yanchor") == "top" \
            and isinstance(title.get("y"), int | float):
        title["y"] = 1 - (1 - title["y"]) * old / new


def _transport(layout: dict[str, Any]) -> list[dict[str, Any]]:
    """The transport's buttons and slider."""
    return [*layout.get("updatemenus", []), *layout.get("sliders", [])]


def _on_top(layout: dict[str, Any]) -> bool:
    """Whether the transport sits above the plot (a phone's figure)."""
    return any(isinstance(item.get("y"), int | float) and item["y"] > 1 for item in _transport(layout))


def _top_legend(layout: dict[str, Any], traces: list[dict[str, Any]], top: int, grow: float,
                width: float) -> int:
    """The top margin with the rows a legend at the figure's top takes at the larger type in ``width``.

    A figure that kept rows for its legend at its narrowest says so in ``layout.meta``
    (``legend_rows``, ``legend_px``: the dashboard); presented, the figure is wider and may need fewer.
    """
    meta, legend = layout.get("meta"), layout.get("legend", {})
    if not isinstance(meta, dict) or not meta.get("legend_rows") or legend.get("yref") != "container":
        return top
    size = float(legend.get("font", {}).get("size") or 12)
    rows = legend_rows(_legend_names(layout, traces), size=size, width=width)
    return round(top - (meta["legend_rows"] - rows) * meta["legend_px"] / meta["legend_rows"] * grow)


def _legend_names(layout: dict[str, Any], traces: list[dict[str, Any]]) -> list[str]:
    """The main legend's title (if any) and entries' names."""
    title = layout.get("legend", {}).get("title", {})
    names = [str(t.get("name", "")) for t in traces
             if t.get("showlegend", True) is not False and t.get("legend", "legend") == "legend"]
    return ([title["text"]] if isinstance(title, dict) and title.get("text") else []) + names


def legend_room(layout: dict[str, Any], traces: list[dict[str, Any]], plot: float, width: float) -> int:
    """Pixels above the plot that the main legend takes when it sits there (0 otherwise), its rows
    estimated from its entries' names at its (scaled) type in ``width`` px.

    Parameters
    ----------
    layout : dict
        A finished figure's layout; its legend placed from the plot (``yref`` "paper", ``y > 1``).
    traces : list of dict
        The figure's traces (the legend's entries).
    plot : float
        Pixels of the plot area's height (the legend's ``y`` is a fraction of it).
    width : float
        Pixels the legend's rows may fill.
    """
    legend = layout.get("legend", {})
    y = legend.get("y")
    if not isinstance(y, int | float) or y <= 1 or legend.get("yref", "paper") != "paper" \
            or legend.get("orientation") != "h":
        return 0
    size = float(legend.get("font", {}).get("size") or layout.get("font", {}).get("size") or 12)
    names = _legend_names(layout, traces)
    return round((y - 1) * plot + legend_rows(names, size=size, width=width) * LEGEND_ROW * size)


def _legends(layout: dict[str, Any]) -> list[dict[str, Any]]:
    """The legends placed in fractions of the plot area (not of the whole figure)."""
    return [value for key, value in layout.items()
            if key.startswith("legend") and isinstance(value, dict) and value.get("yref", "paper") == "paper"]


def _moved(y: Any, ratio: float) -> Any:
    """A paper ``y`` outside the plot area, its distance from the area's edge times ``ratio``."""
    if not isinstance(y, int | float) or 0 <= y <= 1:
        return y
    return 1 + (y - 1) * ratio if y > 1 else y * ratio


def _rows(layout: dict[str, Any]) -> tuple[list[dict[str, Any]], list[float], list[tuple[float, float]],
                                           list[bool]]:
    """The panels' y axes, the edges of their domains, the stretches between them and which are gaps.

    A gap is a stretch that fewer panels cover than the stretches on either side of it: a panel
    spanning every row (the desktop dashboard's simplex) does not close it, and a panel alone in
    its row (a phone dashboard's simplex, across both columns) is not one.
    """
    axes = [value for key, value in layout.items() if key.startswith("yaxis") and "domain" in value]
    edges = sorted({0.0, 1.0, *(float(end) for axis in axes for end in axis["domain"])})
    spans = list(itertools.pairwise(edges))
    cover = [sum(a["domain"][0] <= low and high <= a["domain"][1] for a in axes) for low, high in spans]
    gaps = [0 < i < len(cover) - 1 and c < cover[i - 1] and c < cover[i + 1] for i, c in enumerate(cover)]
    return axes, edges, spans, gaps


def _gaps(layout: dict[str, Any]) -> tuple[float, int]:
    """The share of the plot's height between rows of panels, and the number of rows."""
    _, _, spans, gaps = _rows(layout)
    return sum(high - low for (low, high), g in zip(spans, gaps, strict=True) if g), sum(gaps) + 1


def _open_rows(layout: dict[str, Any], ratio: float, frames: Sequence[dict[str, Any]] = ()) -> None:
    """Widen the gaps between rows of panels ``ratio`` times (in plot fractions), in place; the
    annotations of the ``frames``' layouts (panel titles that change as it plays) move with the
    layout's, or a frame would put them back where they were built.

    A gap is a stretch of the plot's height that fewer panels cover than the most (a panel
    spanning every row, like the dashboard's simplex, does not close it). Panels' y domains and
    whatever is placed in plot fractions inside the plot (panel titles) follow one piecewise
    linear map of [0, 1]; nothing changes when the gaps would take most of the height.
    """
    axes, edges, spans, gaps = _rows(layout)
    gap = sum(high - low for (low, high), g in zip(spans, gaps, strict=True) if g)
    if not any(gaps) or gap * ratio > 0.7:
        return
    panels = (1 - gap * ratio) / (1 - gap)
    new = [0.0]
    for (low, high), g in zip(spans, gaps, strict=True):
        new.append(new[-1] + (high - low) * (ratio if g else panels))

    def moved(y: float) -> float:
        return float(np.interp(y, edges, new))

    for axis in axes:
        axis["domain"] = [moved(end) for end in axis["domain"]]
    every = [*layout.get("annotations", []), *(note for f in frames for note in f.get("annotations", []))]
    notes = {id(note): note for note in every}
    for note in notes.values():  # each once, however many frames share it
        y = note.get("y")
        if note.get("yref", "paper") == "paper" and isinstance(y, int | float) and 0 <= y <= 1:
            note["y"] = moved(y)
