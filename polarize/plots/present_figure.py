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
from polarize.plots.geometry import LEAST_PLOT, ON_TOP, PHONE_LEGEND_SHARE

__all__ = ["BANDS", "LOG_TICK_GROWTH", "described", "even_log_ticks", "fitted", "legend_room", "presented"]

_DEFAULT_HEIGHT, _DEFAULT_MARGIN = 450, {"l": 80, "r": 80, "t": 100, "b": 80}
"""Plotly's own, for a figure that does not set them."""


BANDS = "bands"
"""The key of a figure's description of its bands in ``layout.meta`` (``described``)."""


def presented(figure: dict[str, Any], *, height: int, width: float,
              scale: float = style.PRESENT_SCALE, least_row: float = 0, least_font: float = 0,
              even_logs: bool = False) -> dict[str, Any]:
    """A copy of ``figure`` with every font and margin ``scale`` times larger, at most ``height`` px tall.

    Controls and legends placed outside the plot area (play buttons, the time slider, a legend
    above the panels) keep their distance from it in pixels, scaled with the type: Plotly places
    them in fractions of the plot area, which changes with the height. So do the gaps between rows
    of panels (where a row's tick labels and the next row's titles go); the panels take the rest.
    The figure is described in pixels first (``described``: its ``layout.meta["bands"]``), then
    fitted from that description alone (``fitted``), as the chart element fits it in the browser
    (``ui/chart_frontend/fit.js``); what crowding chose for the fitted height (``crowding.uncrowded``)
    is described too (``bands["crowd"]``), so that the element can choose again for its own height.

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
    data = described(figure, height=height, width=width, scale=scale, least_row=least_row,
                     least_font=least_font, even_logs=even_logs)
    plot = fitted(data, height=height)
    # What crowding chose for this height, as built, so that the chart element chooses again for the
    # height it fits (its ``crowded``): the server's plot height is a guess at the browser's.
    layout = data["layout"]
    layout["meta"][BANDS]["crowd"] = uncrowded(layout, data.get("data", []), plot_px=plot, width=width)
    return data


def described(figure: dict[str, Any], *, height: int, width: float, scale: float = style.PRESENT_SCALE,
              least_row: float = 0, least_font: float = 0, even_logs: bool = False) -> dict[str, Any]:
    """A copy of ``figure`` at ``scale`` times its type, its bands described in ``layout.meta["bands"]``.

    The description says, in pixels at the built size (``grow`` 1), what does not stretch with the
    window: the margins, the legend above the plot (its distance from the plot, which grows with the
    type's room, and its rows, which do not), a phone's transport on top, each control's and legend's
    distance from the plot's edge, the title's from the figure's top; and the rows of panels as the
    edges of their stretches (fractions of the plot) with which stretches are gaps (kept in pixels)
    and where they are placed now (``placed``: a fitted figure's rows, which the browser maps back).
    The legend's rows are estimated at ``width`` (and the margins ``height`` leaves): what changes a
    figure's content, not its size, stays the server's.

    Parameters are ``presented``'s.

    Returns
    -------
    dict
        A new figure dict, not fitted yet (``fitted``).
    """
    # The gaps between rows hold a row's tick labels and the next row's titles: they grow with the
    # smallest type (raised to ``least_font``), the margins (titles, the transport) with the scale.
    between = style.least_growth(figure["layout"], scale, least_font) / scale
    data = style.scale_fonts(copy.deepcopy(figure), scale)
    if least_font:
        style.least_fonts(data, least_font)
    layout = data["layout"]
    traces = data.get("data", [])
    if even_logs:
        even_log_ticks(layout)
    old_height = layout.get("height") or _DEFAULT_HEIGHT
    margin = {side: layout.get("margin", {}).get(side, _DEFAULT_MARGIN[side]) for side in _DEFAULT_MARGIN}
    old_plot = max(old_height - margin["t"] - margin["b"], 1)
    grow = _grow(int(min(height, old_height * scale)), margin, scale)
    grown = {side: round(value * grow) for side, value in margin.items()}
    on_top = _on_top(layout)
    inside = PHONE_LEGEND_SHARE * width if on_top else width - grown["l"] - grown["r"]
    over = _legend_over(layout)
    rows = _legend_rows_px(layout, traces, inside) if over else 0  # its rows' pixels, with the type
    title = layout.get("title")
    kept = isinstance(title, dict) and title.get("yref") == "container" and title.get("yanchor") == "top" \
        and isinstance(title.get("y"), int | float)
    _, edges, _, gaps = _rows(layout)
    bands = {
        "cap": old_height * scale, "scale": scale, "between": between, "least_plot": LEAST_PLOT,
        "least_row": least_row,
        "margin": margin, "top_less": _top_less(layout, traces, inside),
        "legend": [over * old_plot, rows], "on_top": ON_TOP if on_top else 0, "plot": old_plot,
        "items": [_item(key, i, value, old_plot) for key, i, value in _placed(layout)
                  if isinstance(value.get("y"), int | float) and not 0 <= value["y"] <= 1],
        "title": (1 - title["y"]) * old_height if kept else None,
        "edges": edges, "gaps": gaps, "placed": edges,
    }
    if not isinstance(layout.get("meta"), dict):
        layout["meta"] = {}
    layout["meta"][BANDS] = bands
    return data


def fitted(data: dict[str, Any], *, height: int) -> float:
    """Fit a ``described`` figure at most ``height`` px tall, in place, from its description alone.

    The arithmetic the chart element does in the browser (``ui/chart_frontend/fit.js``, ``fitted``):
    the margins grow with the type while the plot keeps ``LEAST_PLOT`` px, a legend above the plot
    (and a phone's transport over it) gets its room in the top margin, rows of panels keep their
    ``least_row`` px (the figure made taller than ``height`` if need be: ``meta.taller``), and each
    control, legend and gap between rows keeps its pixels; the panels take the rest.

    Returns
    -------
    float
        Pixels of the plot area.
    """
    layout = data["layout"]
    bands = layout["meta"][BANDS]
    margin = bands["margin"]
    new_height = int(min(height, bands["cap"]))
    grow = _grow(new_height, margin, bands["scale"])
    margin = {side: round(value * grow) for side, value in margin.items()}
    margin["t"] = round(margin["t"] - bands["top_less"] * grow)
    over, rows = bands["legend"]
    needed = round(over * grow + rows) + (round(bands["on_top"] * grow) if bands["on_top"] else 0)
    shift = max(needed - margin["t"], 0)
    margin["t"] += shift
    new_plot = max(new_height - margin["t"] - margin["b"], 1)
    # Rows of panels no shorter than ``least_row`` (their gaps, kept in px, must not crush them):
    # a figure with more rows than its window holds is taller than the window, and legible.
    gap = sum(high - low for (low, high), g in zip(itertools.pairwise(bands["edges"]), bands["gaps"],
                                                    strict=True) if g)
    between = grow * bands["between"]
    least = round(gap * bands["plot"] * between + (sum(bands["gaps"]) + 1) * bands["least_row"])
    if bands["least_row"] and new_plot < least:
        new_height += least - new_plot
        new_plot = least
        layout["meta"]["taller"] = True  # than ``height``: the layout tests look for it
    for key, index, px, moves in bands["items"]:
        item = layout[key] if index is None else layout[key][index]
        item["y"] = 1 + (px * grow + (shift if moves else 0)) / new_plot if px >= 0 else px * grow / new_plot
    frames = [f["layout"] for f in data.get("frames", []) if isinstance(f.get("layout"), dict)]
    bands["placed"] = _open_rows(layout, bands, bands["plot"] * between / new_plot, frames)
    if bands["title"] is not None:
        layout["title"]["y"] = 1 - bands["title"] * grow / new_height
    layout.update(height=new_height, margin=margin)
    return new_plot


def _grow(height: int, margin: dict[str, int], scale: float) -> float:
    """How much the margins grow at ``height`` px: with the type, unless the plot would keep less
    than ``LEAST_PLOT`` px."""
    return min(scale, max(height - LEAST_PLOT, 0) / max(margin["t"] + margin["b"], 1))


def _placed(layout: dict[str, Any]) -> list[tuple[str, int | None, dict[str, Any]]]:
    """The transport's buttons and slider, then the legends placed in fractions of the plot: each
    with its key in the layout and its index there (None: the key's value is the item)."""
    return [*((key, i, item) for key in ("updatemenus", "sliders")
              for i, item in enumerate(layout.get(key, []))),
            *((key, None, value) for key, value in layout.items() if key.startswith("legend")
              and isinstance(value, dict) and value.get("yref", "paper") == "paper")]


def _item(key: str, index: int | None, item: dict[str, Any], plot: float) -> list[Any]:
    """A control's or legend's place: key, index, pixels from the plot's edge (past its top: positive,
    below its bottom: negative), and whether a legend's room above the plot moves it up (the transport)."""
    y = item["y"]
    return [key, index, (y - 1) * plot if y > 1 else y * plot, key in ("updatemenus", "sliders") and y > 1]


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


def _transport(layout: dict[str, Any]) -> list[dict[str, Any]]:
    """The transport's buttons and slider."""
    return [*layout.get("updatemenus", []), *layout.get("sliders", [])]


def _on_top(layout: dict[str, Any]) -> bool:
    """Whether the transport sits above the plot (a phone's figure)."""
    return any(isinstance(item.get("y"), int | float) and item["y"] > 1 for item in _transport(layout))


def _top_less(layout: dict[str, Any], traces: list[dict[str, Any]], width: float) -> float:
    """Pixels (at the built size) fewer that a legend above the panels takes in ``width`` than it
    was given rows for.

    A figure that kept rows for its legend at its narrowest says so in ``layout.meta``
    (``legend_rows``, ``legend_px``, and ``legend_spare``: the top's pixels only the legend holds; a
    grid of panels, ``multiples.animated_grid``); presented or on a wider window the figure is wider
    and may need fewer (presented Flow vs descent kept 40 to 50 px blank above its legend).
    The rows it takes at its own type come back in the fit (``fitted``: ``legend``).
    """
    meta, legend = layout.get("meta"), layout.get("legend", {})
    if not isinstance(meta, dict) or not meta.get("legend_rows") or not _legend_over(layout):
        return 0
    size = float(legend.get("font", {}).get("size") or 12)
    rows = legend_rows(_legend_names(layout, traces), size=size, width=width)
    fewer = max(meta["legend_rows"] - rows, 0) * meta["legend_px"] / meta["legend_rows"]
    return min(fewer, meta.get("legend_spare", fewer))


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
    over = _legend_over(layout)
    return round(over * plot + _legend_rows_px(layout, traces, width)) if over else 0


def _legend_over(layout: dict[str, Any]) -> float:
    """How far past the plot's top (a fraction of the plot) the main legend sits, when it is a row
    above it (0 otherwise)."""
    legend = layout.get("legend", {})
    y = legend.get("y")
    if not isinstance(y, int | float) or y <= 1 or legend.get("yref", "paper") != "paper" \
            or legend.get("orientation") != "h":
        return 0
    return y - 1


def _legend_rows_px(layout: dict[str, Any], traces: list[dict[str, Any]], width: float) -> float:
    """Pixels of the main legend's rows at its type in ``width`` px."""
    size = float(layout.get("legend", {}).get("font", {}).get("size") or layout.get("font", {}).get("size")
                 or 12)
    return legend_rows(_legend_names(layout, traces), size=size, width=width) * LEGEND_ROW * size


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


def _open_rows(layout: dict[str, Any], bands: dict[str, Any], ratio: float,
               frames: Sequence[dict[str, Any]] = ()) -> list[float]:
    """Widen the gaps between rows of panels ``ratio`` times (in plot fractions), in place; the
    annotations of the ``frames``' layouts (panel titles that change as it plays) move with the
    layout's, or a frame would put them back where they were built. The rows' edges as placed.

    The rows are the description's (``described``): the edges of their stretches, which are gaps,
    and where they are placed now. Panels' y domains and whatever is placed in plot fractions inside
    the plot (panel titles) follow one piecewise linear map of [0, 1]; the rows are as built when the
    gaps would take most of the height.
    """
    edges, gaps, placed = bands["edges"], bands["gaps"], bands["placed"]
    spans = list(itertools.pairwise(edges))
    gap = sum(high - low for (low, high), g in zip(spans, gaps, strict=True) if g)
    new = list(edges)
    if any(gaps) and gap * ratio <= 0.7:
        panels = (1 - gap * ratio) / (1 - gap)
        new = [0.0]
        for (low, high), g in zip(spans, gaps, strict=True):
            new.append(new[-1] + (high - low) * (ratio if g else panels))
    if new == placed:
        return new

    def moved(y: float) -> float:
        built = y if placed == edges else np.interp(y, placed, edges)  # a fitted figure's, as built
        return float(np.interp(built, edges, new))

    axes = [value for key, value in layout.items() if key.startswith("yaxis") and "domain" in value]
    for axis in axes:
        axis["domain"] = [moved(end) for end in axis["domain"]]
    every = [*layout.get("annotations", []), *(note for f in frames for note in f.get("annotations", []))]
    notes = {id(note): note for note in every}
    for note in notes.values():  # each once, however many frames share it
        y = note.get("y")
        if note.get("yref", "paper") == "paper" and isinstance(y, int | float) and 0 <= y <= 1:
            note["y"] = moved(y)
    return new
