"""The one small-multiples renderer: panels of curves, animated together or static.

``animated_grid`` lays out ``Panel`` objects row by row in one Plotly figure.
Animated, a marker rides on each moving curve against (log) time, and every
panel moves with the same frames (evenly spaced in log time), play button and
time slider. Static (``animated=False``, or no moving curve), the same panels
without frames or controls: the paper's exported figures are these.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from plotly.subplots import make_subplots

from polarize.plots import style
from polarize.plots.animation import FRAMES, animation_controls
from polarize.plots.crowding import LEGEND_ROW, LEGEND_SYMBOL, legend_rows
from polarize.plots.geometry import (
    GRID_BOTTOM,
    GRID_TOP,
    LEGEND_GAP,
    LEGEND_WIDTH,
    PHONE_COLS,
    PHONE_ROW,
    ROW_GAP,
    SHARED_GAP,
    TITLE_LIFT,
    TITLE_LINE,
    margins,
)
from polarize.plots.lines import Line, Panel, line_trace
from polarize.plots.numbers import log_span, round_significant, rounded, span, thinned
from polarize.science import format_time

__all__ = ["animated_grid", "legend_height", "trace_uid"]

_NARROW_TITLE = -3
"""A panel's title on a phone, points from the base size: at a desktop's, titles over half a phone's
width took three lines."""
_LEGEND_FONT = -3
"""The legend's font, points from the base size."""
THIN_FROM = 50
"""Lines of more points than this are thinned for drawing (``_drawn``); a shorter one is sent whole."""


def legend_height(names: Sequence[str], *, size: float, narrow: bool) -> int:
    """Pixels a horizontal legend of entries ``names`` takes at font ``size`` on a desktop or a phone.

    A figure leaves this room itself: plotly would push its margin for the legend and shrink the
    plot, and row gaps given as fractions of the plot would then lose the pixels that hold an
    axis title above the next panel's title.
    """
    if not names:
        return 0
    return round(legend_rows(names, size=size, width=LEGEND_WIDTH[narrow]) * LEGEND_ROW * size)


def _legend_width(names: Sequence[str], *, size: float) -> int:
    """Pixels a vertical legend of entries ``names`` takes at font ``size``: its widest entry (the
    estimate of ``crowding.legend_rows``, a little more, since plotly pushes the margin for what is
    missing and the panels narrow)."""
    return round(LEGEND_SYMBOL + 0.55 * size * max((style.shown_length(name) for name in names), default=0))


def _line_chars(cols: int, *, narrow: bool, note: bool = False) -> int:
    """Characters per line of a panel's title (or note) that fit its width (plotly does not wrap).

    About 860 px of figure on a 1280 px projector (the sidebar open) and about 340 px on a
    390 px phone; titles take about 8.5 px a character, notes (smaller) about 7, but start a little
    inside their panel.
    """
    if narrow:  # titles at a phone's smaller type (``_NARROW_TITLE``)
        return 44 // cols
    return max(16, 80 // cols)


def trace_uid(panel: int, line: int | str) -> str:
    """The ``uid`` of line ``line`` (0-based) of panel ``panel`` (0-based), or of its markers (``"now"``).

    By position, not by name: plotly.js puts a trace's ``uid`` into CSS selectors,
    so it must stay a plain identifier.
    """
    return f"panel{panel}-{'now' if line == 'now' else f'line{line}'}"


def _clean(line: Line, panel: Panel) -> tuple[np.ndarray, np.ndarray]:
    """The points of ``line`` that ``panel``'s axes can show: finite, and positive on log axes."""
    x, y = np.asarray(line.x, dtype=float), np.asarray(line.y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    if panel.log_x:
        keep &= x > 0
    if panel.log_y:
        keep &= y > 0
    return x[keep], y[keep]


def _cells(panels: Sequence[Panel], cols: int) -> tuple[list[list[dict | None]], list[tuple[int, int]]]:
    """Subplot specs and each panel's (row, col), 0-based, filling rows left to right."""
    specs: list[list[dict | None]] = []
    where, col = [], cols
    for panel in panels:
        width = min(panel.span, cols)
        if col + width > cols:
            specs.append([None] * cols)
            col = 0
        specs[-1][col] = {"colspan": width} if width > 1 else {}
        where.append((len(specs) - 1, col))
        col += width
    return specs or [[None] * cols], where


def _frame_times(panels: Sequence[Panel], cleaned: list, frames: int) -> np.ndarray:
    """Times of the frames: evenly spaced in log time over the moving curves on time axes."""
    riding = [x for p, c in zip(panels, cleaned, strict=True) if p.log_x
              for line, (x, _) in zip(p.lines, c, strict=True) if line.moving and len(x)]
    if not riding:
        return np.array([])
    lo, hi = min(x[0] for x in riding), max(x[-1] for x in riding)
    return np.geomspace(lo, hi, frames) if hi > lo else np.array([hi])


def _drawn(panel: Panel, points: list) -> list:
    """The points of each line that are drawn: in a ``Panel.thin`` panel a long line thinned to within a
    fraction of a pixel (``numbers.thinned``; markers are data, every one drawn)."""
    ys = [y for _, y in points if len(y)]
    if not panel.thin or panel.markers or not ys:
        return points
    heights = np.concatenate(ys)
    span = float(np.ptp(np.log10(heights) if panel.log_y else heights))
    out = []
    for x, y in points:
        if len(x) > THIN_FROM:
            keep = thinned(x, y, span=span, log_x=panel.log_x, log_y=panel.log_y)
            x, y = x[keep], y[keep]
        out.append((x, y))
    return out


def _panel_traces(i: int, panel: Panel, points: list, legend: bool, named: set[str]) -> list[dict]:
    """The traces of one panel's curves, one legend entry per name (a line's key, if it has one)
    across the figure (each line's points as ``_drawn`` thins them)."""
    suffix = "" if i == 0 else str(i + 1)
    out = []
    for j, (line, (x, y)) in enumerate(zip(panel.lines, _drawn(panel, points), strict=True)):
        label = line.key or line.name
        first = label not in named
        if line.legend:
            named.add(label)
        extra = dict(marker=dict(size=11)) if panel.markers else {}
        if line.key:  # a shared entry ("other tokens") after the lines named one by one
            extra["legendrank"] = 1001
        out.append(line_trace(dataclasses.replace(line, x=x, y=y), f"x{suffix}", f"y{suffix}",
                              mode="lines+markers" if panel.markers else "lines", name=label,
                              uid=trace_uid(i, j), showlegend=legend and line.legend and first,
                              legendgroup=label, **extra))
    return out


def _axes(layout: dict, i: int, panel: Panel, points: list, *, time_range: list[float] | None,
          x_title: bool, cols: int, narrow: bool, first: bool = True) -> None:
    """Fixed ranges, types, titles and ticks of panel ``i``'s axes (no range for an empty panel).

    On a phone only the first column's panels (``first``) keep their y title: in the narrow gap
    between columns a second column's ran into the first's plot (Loss and conditioning's "nats").
    """
    suffix = "" if i == 0 else str(i + 1)
    common = style.axis_style()
    xs = [x for x, _ in points if len(x)]
    ys = [y for _, y in points if len(y)]
    x_range = (time_range if panel.log_x else span(np.concatenate(xs), pad=0.04)) if xs else None
    # Narrow panels get fewer decade labels, so that they stay upright (a phone's two columns: ~120 px).
    x_ticks = style.decade_ticks(x_range, most=2 if narrow else 4 if cols <= 3 else 3) if panel.log_x else {}
    layout["xaxis" + suffix].update(common, type="log" if panel.log_x else "linear",
                                    title=dict(text=panel.x_title if x_title else "", font=style.font(-2)),
                                    **x_ticks, **({"range": x_range} if x_range else {}))
    y_range = list(panel.y_range or ()) or (
        (log_span(np.concatenate(ys)) if panel.log_y else span(np.concatenate(ys), floor=panel.y_floor))
        if ys else None)
    # Log axes: whole decades; over less than a decade and a half 1, 2 and 5 times them (else the
    # labels of 2 and 5 run into the decades' in a short panel); never every digit.
    few = y_range is not None and y_range[1] - y_range[0] < 1.5
    y_ticks = (style.decade_ticks(y_range) or ({"dtick": "D2"} if few else {"tick0": 0, "dtick": 1})
               if panel.log_y else {})
    layout["yaxis" + suffix].update(common, type="log" if panel.log_y else "linear",
                                    title=dict(text=panel.y_title if first or not narrow else "",
                                               font=style.font(-2)),
                                    **y_ticks, **({"range": y_range} if y_range else {}))
    if panel.note:
        layout["annotations"].append(dict(
            text=style.wrap(panel.note, _line_chars(cols, narrow=narrow, note=True)),
            xref=f"x{suffix} domain", yref=f"y{suffix} domain", x=0.02, y=0.97, xanchor="left", yanchor="top",
            showarrow=False, align="left", bgcolor=style.PALETTE.veil,
            font=style.font(-3, style.PALETTE.alert)))


def _riders(panel: Panel, points: list) -> list[tuple[Line, tuple[np.ndarray, np.ndarray]]]:
    """The moving curves of a panel that have points; only curves against time move."""
    if not panel.log_x:
        return []
    return [(line, xy) for line, xy in zip(panel.lines, points, strict=True) if line.moving and len(xy[0])]


def _at(tau: float, riders: list) -> dict[str, Any]:
    """The markers' positions at time ``tau``: each curve's last point at or before it."""
    return _frames_at(np.array([tau]), riders)[0]


def _frames_at(times: np.ndarray, riders: list) -> list[dict[str, Any]]:
    """``_at`` each of ``times`` (F,), for all of them at once (one rounding per panel, not per frame)."""
    at = [np.clip(np.searchsorted(x, times, side="right") - 1, 0, len(x) - 1) for _, (x, _) in riders]
    x = round_significant(np.stack([np.asarray(x)[k] for (_, (x, _)), k in zip(riders, at, strict=True)], 1))
    y = round_significant(np.stack([np.asarray(y)[k] for (_, (_, y)), k in zip(riders, at, strict=True)], 1))
    return [dict(x=xs, y=ys) for xs, ys in zip(x.tolist(), y.tolist(), strict=True)]


def _x_titled(panels: Sequence[Panel], where: list[tuple[int, int]]) -> list[bool]:
    """Whether each panel shows its x title: not when the panel below has the same one."""
    below = {}
    for panel, (row, col) in zip(panels, where, strict=True):
        for c in range(col, col + panel.span):
            below[(row, c)] = panel.x_title
    return [below.get((row + 1, col)) != panel.x_title
            for panel, (row, col) in zip(panels, where, strict=True)]


def _subplots(specs: list, titles: list[str], *, cols: int, gap: float, narrow: bool) -> dict[str, Any]:
    """The grid's layout from ``make_subplots``: its axes' domains and the panels' titles (a copy of the
    one kept for the same grid: a page redrawn for new runs asks for the same one each time, and
    ``make_subplots`` was half of the Normalizers figure's making)."""
    return copy.deepcopy(_grid(json.dumps(specs), tuple(titles), cols=cols, gap=gap, narrow=narrow))


@functools.lru_cache(maxsize=64)
def _grid(specs_json: str, titles: tuple[str, ...], *, cols: int, gap: float, narrow: bool) -> dict[str, Any]:
    specs = json.loads(specs_json)
    rows = len(specs)
    fig = make_subplots(rows=rows, cols=cols, specs=specs, subplot_titles=[*titles] if any(titles) else None,
                        horizontal_spacing=0.17 if narrow else min(0.09, 0.5 / cols),
                        vertical_spacing=min(gap, 0.5 / (rows - 1)) if rows > 1 else 0.0)
    layout = fig.layout.to_plotly_json()
    layout.setdefault("annotations", [])
    for ann in layout["annotations"]:
        # A little above the panel: its top tick label ("1") reaches above the panel's edge, and a
        # title wider than the panel (its first column's, with the y title beside it) ran into it.
        ann.update(font=style.font(_NARROW_TITLE if narrow else 0, style.PALETTE.ink), yshift=TITLE_LIFT)
    return layout


def _row_gap(panels: Sequence[Panel], titles: list[str], where: list[tuple[int, int]]) -> int:
    """Pixels between two rows of panels: the upper row's ticks and x title, then the lower row's title.

    Panels over one time axis label it once, under the lowest (``crowding.uncrowded``), and only the
    lower rows' titles count (a figure that titles its columns once, above the first, has none): on
    a 1280 x 720 projector as on a phone, the upper rows' ticks and titles left rows of 35 to 60 px.
    """
    lines = [t.count("<br>") + 1 for t in titles if t]
    if not all(p.log_x for p in panels):
        return ROW_GAP + TITLE_LINE * max(lines, default=1)
    below = [t.count("<br>") + 1 for t, (row, _) in zip(titles, where, strict=True) if row and t]
    return SHARED_GAP + TITLE_LINE * max(below, default=0)


def animated_grid(panels: Sequence[Panel], *, cols: int, frames: int = FRAMES, row_height: int = 300,
                  legend: bool = False, animated: bool = True, height: int | None = None,
                  narrow: bool = False, narrow_cols: int = PHONE_COLS,
                  beside: bool = False) -> dict[str, Any]:
    """Small multiples that play together: one figure, shared frames, one play button and slider.

    Parameters
    ----------
    panels : sequence of Panel, length P
        Laid out row by row, ``cols`` columns per row (a panel spans ``Panel.span`` of them).
    cols : int
    frames : int
        Number of animation frames, evenly spaced in log time between the
        earliest and the latest time of the moving curves.
    row_height : int
        Pixels per row of panels.
    legend : bool
        Show the legend (entries of lines with ``legend=True``), above the panels.
    beside : bool
        On a desktop, the legend in a column right of the panels rather than in rows above them:
        for a figure of two rows whose legend takes two rows too (a 1280 x 720 window left such
        panels 66 px tall). On a phone, above them all the same.
    animated : bool
        False for a static figure of the same panels (no markers, frames or controls).
    height : int, optional
        The figure's height in pixels, instead of one from ``row_height``.
    narrow_cols : int
        Most panels a row on a phone (a figure whose columns are its quantities keeps three).
    narrow : bool, optional
        For a phone: at most ``narrow_cols`` panels a row, ``PHONE_ROW`` px each (``height`` is not used),
        rows over one time axis closer together, the transport above the panels.

    Returns
    -------
    dict
        The figure dict (``data``, ``layout``, ``frames``): each curve as a trace with ``uid``
        ``trace_uid(panel, line)``, then one marker trace per panel with moving curves
        (``trace_uid(panel, "now")``);
        ``F`` frames (named ``"0"``...) that move only those markers; fixed
        axis ranges; ``layout.meta`` records ``panels`` (P), ``frame_times``
        (F) and ``animated`` (indices of the marker traces). Without moving
        curves, or with ``animated=False``, a static figure.
    """
    if narrow:
        cols, row_height, height = min(cols, narrow_cols), PHONE_ROW, None
    specs, where = _cells(panels, cols)
    rows = len(specs)
    titles = [style.wrap(p.title, _line_chars(cols, narrow=narrow)) for p in panels]
    title_lines = max((t.count("<br>") + 1 for t in titles), default=1)
    names = list(dict.fromkeys(line.key or line.name for p in panels for line in p.lines
                               if line.legend and legend))
    beside = beside and bool(names) and not narrow
    size = style.font(_LEGEND_FONT)["size"]
    top, rows_kept = _top(names, title_lines, size=size, narrow=narrow, above=not beside)
    top, bottom = margins(top, narrow=narrow, animated=animated)  # on a phone the transport on top
    bottom = bottom or GRID_BOTTOM
    height = height or row_height * rows + top + (bottom if animated else 90 - GRID_TOP)
    gap = _row_gap(panels, titles, where) / (height - top - bottom)
    layout = _subplots(specs, titles, cols=cols, gap=gap, narrow=narrow)
    cleaned = [[_clean(line, p) for line in p.lines] for p in panels]
    times = _frame_times(panels, cleaned, frames) if animated else np.array([])
    # Every time axis spans the same times, so that the panels can be read (and played) side by side.
    time_x = [x for p, c in zip(panels, cleaned, strict=True) if p.log_x for x, _ in c]
    time_range = log_span(np.concatenate(time_x), pad=0.02) if time_x else None
    data: list[dict[str, Any]] = []
    moving: list[tuple[int, list]] = []
    named: set[str] = set()
    for i, (panel, points, titled) in enumerate(zip(panels, cleaned, _x_titled(panels, where), strict=True)):
        data += _panel_traces(i, panel, points, legend, named)
        riders = _riders(panel, points) if len(times) else []
        if riders:
            moving.append((len(data), riders))
            suffix = "" if i == 0 else str(i + 1)
            data.append(dict(type="scatter", mode="markers", name="now", uid=trace_uid(i, "now"),
                             showlegend=False, hoverinfo="skip", xaxis=f"x{suffix}", yaxis=f"y{suffix}",
                             marker=dict(color=[line.color or style.PALETTE.ink for line, _ in riders],
                                         size=9, line=dict(color=style.PALETTE.background, width=1)),
                             **_at(float(times[0]), riders)))
        _axes(layout, i, panel, points, time_range=time_range, x_title=titled, cols=cols, narrow=narrow,
              first=where[i][1] == 0)
    key = _key(height, (top, bottom), title_px=TITLE_LINE * title_lines,
               beside=_legend_width(names, size=size) if beside else 0)
    figure = _finish(data, layout, moving, times, legend=legend, key=key, height=height, margin=(top, bottom),
                     panels=len(panels), narrow=narrow)
    figure["layout"]["meta"].update(rows_kept)
    return figure


def _top(names: list[str], title_lines: int, *, size: float, narrow: bool,
         above: bool) -> tuple[int, dict[str, Any]]:
    """The top margin for the panels' titles and a legend of ``names`` above them (if ``above``), and
    what ``layout.meta`` says of the legend: its rows at the narrowest width it is built for, their
    pixels, and the pixels of the top only they hold (a wider figure, presented or with the sidebar
    closed, needs fewer rows: ``present_figure``)."""
    px = legend_height(names, size=size, narrow=narrow) if above else 0
    floor = GRID_TOP + TITLE_LINE * (title_lines - 1)
    top = max(floor, TITLE_LINE * title_lines + LEGEND_GAP + px + 6)
    rows = legend_rows(names, size=size, width=LEGEND_WIDTH[narrow]) if px else 0
    return top, dict(legend_rows=rows, legend_px=px, legend_spare=max(0, top - floor))


def _key(height: int, margin: tuple[int, int], *, title_px: int, beside: int) -> dict[str, Any]:
    """The legend's layout and the right margin it needs: above the first row's titles, or in a column
    ``beside`` px wide right of the panels, level with their top."""
    plot = height - sum(margin)
    font = style.font(_LEGEND_FONT)
    if not beside:
        return {"r": 20, "legend": dict(orientation="h", x=0.0, y=1.0 + (title_px + LEGEND_GAP) / plot,
                                        yanchor="bottom", font=font)}
    # Each entry its own group, without plotly's gap between groups; as tall as its entries (plotly
    # scrolls a vertical legend taller than the plot, and hid the losses' strokes so).
    return {"r": 20 + beside, "legend": dict(orientation="v", x=1.02, xanchor="left", y=1.0, yanchor="top",
                                             tracegroupgap=0, maxheight=height, font=font)}


def _finish(data: list[dict], layout: dict, moving: list, times: np.ndarray, *, legend: bool, key: dict,
            height: int, margin: tuple[int, int], panels: int, narrow: bool) -> dict[str, Any]:
    """Frames, controls and the figure's layout (its legend placed by ``key``: ``_key``)."""
    animated = [index for index, _ in moving]
    at = [_frames_at(times, riders) for _, riders in moving]
    frame_list = [dict(name=str(j), traces=animated, data=[dict(type="scatter", **panel[j]) for panel in at])
                  for j in range(len(times))] if animated else []
    top, bottom = margin
    plot = height - top - bottom
    layout.update(
        style.base_layout(height=height, delta=-1, margin=dict(l=20, r=key["r"], t=top, b=bottom)),
        showlegend=legend,
        legend=key["legend"],
        meta=dict(panels=panels, frame_times=rounded(times) if animated else [], animated=animated),
    )
    if animated:
        layout.update(animation_controls([str(j) for j in range(len(times))], [format_time(t) for t in times],
                                         plot_height=plot, narrow=narrow, top=top))
    # A plain figure dict: validation is left to the tests (``go.Figure(figure)``), it costs more than
    # the figure.
    return dict(data=data, layout=layout, frames=frame_list)
