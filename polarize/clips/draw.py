"""Pillow drawing of what an animated figure's frames move, for ``polarize.clips.frames``.

Scatter lines, markers and text, bars, heatmap cells and annotation text, at the
pixel positions a ``frames._Axes`` gives (layout pixels), drawn ``zoom`` times
larger (the caller supersamples: Pillow does not antialias).
"""

from __future__ import annotations

import base64
import functools
import html
import itertools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from polarize.plots import style

__all__ = ["array", "cell_edges", "draw_note", "draw_trace", "font", "merge", "merge_notes", "rgba"]

_FONTS = ("DejaVuSans.ttf", "Arial.ttf", "LiberationSans-Regular.ttf")
"""Scalable fonts tried for text (they have the star and the primes panel titles use), else Pillow's own."""


def array(value: Any) -> Any:
    """A figure dict's array as NumPy: plotly writes NumPy arrays as ``{"dtype", "bdata", "shape"}``.

    Anything else (a list, None) is returned as it is.
    """
    if not isinstance(value, Mapping) or "bdata" not in value:
        return value
    flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    shape = value.get("shape")
    return flat.reshape([int(n) for n in str(shape).split(",")]) if shape else flat


@functools.lru_cache(maxsize=32)
def font(size: float) -> Any:
    """A Pillow font of ``size`` pixels."""
    from PIL import ImageFont

    for name in _FONTS:
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


def rgba(color: Any, opacity: float = 1.0) -> tuple[int, int, int, int] | None:
    """A plotly colour as RGBA (None for a transparent one)."""
    from PIL import ImageColor

    text = str(color).replace(" ", "")
    match = re.fullmatch(r"rgba\((\d+),(\d+),(\d+),([\d.]+)\)", text)
    if match:
        r, g, b, a = (float(v) for v in match.groups())
        rgba = (int(r), int(g), int(b), round(255 * a * opacity))
    else:
        rgba = (*ImageColor.getrgb(text)[:3], round(255 * opacity))
    return rgba if rgba[3] > 0 else None


def _each(value: Any, k: int, default: Any) -> Any:
    """Point ``k``'s entry of a per-point list, or the value itself when it is one for all."""
    if value is None:
        return default
    return value[k] if isinstance(value, (list, tuple)) else value


def _dashed(draw: Any, points: list[tuple[float, float]], fill: Any, width: int, dash: str) -> None:
    """A polyline, dashed (``dash``, ``dot``, ...) in runs of pixels along its length."""
    if dash in ("solid", None) or len(points) < 2:
        draw.line(points, fill=fill, width=width, joint="curve")
        return
    on, off = (width, 2 * width) if dash == "dot" else (4 * width, 2.5 * width)
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        length = float(np.hypot(x1 - x0, y1 - y0))
        for start in np.arange(0.0, length, on + off):
            end = min(start + on, length)
            a, b = start / length, end / length
            draw.line([(x0 + (x1 - x0) * a, y0 + (y1 - y0) * a), (x0 + (x1 - x0) * b, y0 + (y1 - y0) * b)],
                      fill=fill, width=width)


def _marker(draw: Any, at: tuple[float, float], size: float, fill: Any, edge: Any, edge_width: float,
            symbol: str) -> None:
    """One marker: a circle or a diamond of diameter ``size`` (pixels)."""
    x, y, r = at[0], at[1], size / 2
    if "diamond" in str(symbol):
        shape = [(x, y - r * 1.3), (x + r * 1.3, y), (x, y + r * 1.3), (x - r * 1.3, y)]
        draw.polygon(shape, fill=fill, outline=edge, width=max(1, round(edge_width)) if edge else 0)
    else:
        draw.ellipse([x - r, y - r, x + r, y + r], fill=fill, outline=edge,
                     width=max(1, round(edge_width)) if edge else 0)


def draw_trace(draw: Any, trace: dict[str, Any], axes: Any, zoom: float) -> None:
    """One moving trace at ``zoom`` pixels per layout pixel: bars, heatmap cells, or a scatter's lines,
    markers and text, placed by ``axes`` (a ``frames._Axes``)."""
    if trace.get("type") == "bar":
        _draw_bars(draw, trace, axes, zoom)
        return
    if trace.get("type") == "heatmap":
        _draw_cells(draw, trace, axes, zoom)
        return
    points = axes.to_pixels(trace.get("x") or [], trace.get("y") or [])
    mode = trace.get("mode", "markers")
    if "text" in mode:
        _draw_text(draw, trace, points, zoom)
    shown = [(x * zoom, y * zoom) for p in points if p is not None for x, y in [p]]
    opacity = float(trace.get("marker", {}).get("opacity", trace.get("opacity", 1.0)))
    if "lines" in mode and len(shown) > 1:
        line = trace.get("line", {})
        fill = rgba(line.get("color", style.PALETTE.ink), opacity)
        if fill:
            width = max(1, round(float(line.get("width", 2)) * zoom))
            _dashed(draw, shown, fill, width, line.get("dash", "solid"))
    if "markers" not in mode:
        return
    marker = trace.get("marker", {})
    edge = marker.get("line", {})
    for k, p in enumerate(points):
        if p is None:
            continue
        fill = rgba(_each(marker.get("color"), k, style.PALETTE.ink), opacity)
        edge_color = _each(edge.get("color"), k, None)
        _marker(draw, (p[0] * zoom, p[1] * zoom), float(_each(marker.get("size"), k, 6)) * zoom, fill,
                rgba(edge_color, opacity) if edge_color else None, float(edge.get("width", 0)) * zoom,
                marker.get("symbol", "circle"))


def _draw_bars(draw: Any, trace: dict[str, Any], axes: Any, zoom: float) -> None:
    """Vertical bars from 0, each 0.8 of the unit x spacing wide (plotly's default gap for one trace)."""
    marker = trace.get("marker", {})
    edge = marker.get("line", {})
    for k, (x, y) in enumerate(zip(trace.get("x") or [], trace.get("y") or [], strict=True)):
        corners = axes.to_pixels([x - 0.4, x + 0.4] if x is not None else [None] * 2, [0.0, y])
        if None in corners:
            continue
        (x0, y0), (x1, y1) = corners
        edge_color, edge_width = _each(edge.get("color"), k, None), float(edge.get("width", 0)) * zoom
        draw.rectangle([min(x0, x1) * zoom, min(y0, y1) * zoom, max(x0, x1) * zoom, max(y0, y1) * zoom],
                       fill=rgba(_each(marker.get("color"), k, style.PALETTE.ink)),
                       outline=rgba(edge_color) if edge_color and edge_width else None,
                       width=max(1, round(edge_width)))


_TEXT_ANCHORS = {"left": "r", "right": "l", "center": "m"}
"""Plotly's horizontal text position -> Pillow's anchor (text left of the point ends at it)."""


def _draw_text(draw: Any, trace: dict[str, Any], points: list, zoom: float) -> None:
    """A scatter's text at its points, placed as its ``textposition`` says (vertically centred)."""
    look = trace.get("textfont", {})
    where = str(trace.get("textposition", "middle center")).split()[-1]
    for k, p in enumerate(points):
        words = _each(trace.get("text"), k, "")
        if p is None or not words:
            continue
        draw.text((p[0] * zoom, p[1] * zoom), str(words), anchor=_TEXT_ANCHORS.get(where, "m") + "m",
                  font=font(float(look.get("size", style.FONT_SIZE)) * zoom),
                  fill=rgba(look.get("color", style.PALETTE.ink)))


def merge(trace: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """A trace with a frame's state laid over it, as plotly.js merges them (nested dicts merged)."""
    out = dict(trace)
    for key, value in state.items():
        nested = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = {**out[key], **value} if nested else value
    return out


def merge_notes(notes: Sequence[Mapping[str, Any]], changes: Sequence[Mapping[str, Any]]) -> list[dict]:
    """A layout's annotations with a frame's laid over them, index by index (plotly.js's ``extendLayout``).

    Parameters
    ----------
    notes : sequence of dict, length A
        ``layout.annotations``.
    changes : sequence of dict, length B
        The frame's ``layout.annotations``: entry ``i`` updates annotation ``i``; entries past ``A``
        are new annotations.

    Returns
    -------
    list of dict, length max(A, B)
    """
    merged = [merge(note, change) for note, change in zip(notes, changes, strict=False)]
    return merged + [dict(note) for note in notes[len(changes):]] + [dict(c) for c in changes[len(notes):]]


def _lines(text: str) -> list[str]:
    """An annotation's text as plain lines: split at ``<br>``, other tags dropped, entities read."""
    return [html.unescape(re.sub(r"<[^>]*>", "", part)) for part in re.split(r"<br\s*/?>", text, flags=re.I)]


_ANCHORS = {"left": "l", "right": "r", "center": "m", "auto": "m"}


def draw_note(draw: Any, note: Mapping[str, Any], at: tuple[float, float], zoom: float, ink: str) -> None:
    """An annotation's text (no box, no arrow) anchored at ``at`` (layout pixels) as its anchors say.

    Lines are 1.3 font sizes apart, as plotly.js sets them; ``ink`` is the colour when the note has none.
    """
    look = note.get("font", {})
    size = float(look.get("size", style.FONT_SIZE)) * zoom
    lines = _lines(str(note.get("text", "")))
    step = 1.3 * size
    vertical = note.get("yanchor", "middle")
    top = at[1] * zoom - {"bottom": len(lines) * step, "top": 0.0}.get(vertical, len(lines) * step / 2)
    anchor = _ANCHORS.get(note.get("xanchor", "center"), "m") + "m"
    for k, line in enumerate(lines):
        draw.text((at[0] * zoom, top + (k + 0.5) * step), line, anchor=anchor, font=font(size),
                  fill=rgba(look.get("color", ink)))


def _edges(values: Any, count: int, categories: bool) -> np.ndarray:
    """Cell edges along a heatmap's axis, length ``count + 1``, in axis units.

    Categories (and missing or non-numeric coordinates) sit at their indices 0, 1, ...;
    numeric centres get edges half-way between them; ``count + 1`` numbers are the edges.
    """
    try:
        given = None if values is None or categories else np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        given = None
    if given is None or given.ndim != 1 or len(given) not in (count, count + 1) or count == 0:
        return np.arange(count + 1) - 0.5
    if len(given) == count + 1:
        return given
    if count == 1:
        return given[0] + np.array([-0.5, 0.5])
    middle = (given[1:] + given[:-1]) / 2
    return np.concatenate([[2 * given[0] - middle[0]], middle, [2 * given[-1] - middle[-1]]])


def cell_edges(trace: Mapping[str, Any], x_categories: bool,
               y_categories: bool) -> tuple[np.ndarray, np.ndarray]:
    """A heatmap's cell edges along x (length ``nx + 1``) and y (``ny + 1``), in axis units."""
    rows, cols = np.shape(_cells(trace))
    return (_edges(array(trace.get("x")), cols, x_categories),
            _edges(array(trace.get("y")), rows, y_categories))


def _cells(trace: Mapping[str, Any]) -> np.ndarray:
    """A heatmap's values, shape (rows, columns), NaN where empty (None)."""
    z = array(trace.get("z"))
    return np.atleast_2d(np.array([[]] if z is None else z, dtype=float))


def _colormap(trace: Mapping[str, Any], z: np.ndarray) -> np.ndarray:
    """Colours of ``z`` (any shape) on the trace's colour scale between ``zmin`` and ``zmax``: shape (..., 3).

    Linear in RGB between the scale's stops, as plotly.js interpolates.
    """
    import plotly.colors

    scale = trace.get("colorscale") or "Viridis"
    if isinstance(scale, str):
        scale = plotly.colors.get_colorscale(scale)
    stops = np.array([float(position) for position, _ in scale])
    rgb = np.array([rgba(color)[:3] for _, color in scale], dtype=float)
    if trace.get("reversescale"):
        stops, rgb = 1.0 - stops[::-1], rgb[::-1]
    low = trace.get("zmin", np.nanmin(z))
    high = trace.get("zmax", np.nanmax(z))
    u = np.clip((z - low) / ((high - low) or 1.0), 0.0, 1.0)
    return np.stack([np.interp(u, stops, rgb[:, c]) for c in range(3)], axis=-1)


def _draw_cells(draw: Any, trace: dict[str, Any], axes: Any, zoom: float) -> None:
    """A heatmap's cells, each filled with its value's colour (gaps and empty cells left clear)."""
    z = _cells(trace)
    xe, ye = cell_edges(trace, axes.x_categories, axes.y_categories)
    xs = [round(p * zoom) for p in axes.x_pixels(xe)]
    ys = [round(p * zoom) for p in axes.y_pixels(ye)]
    colors = np.rint(_colormap(trace, z)).astype(int)
    gap_x, gap_y = (round(float(trace.get(key) or 0) * zoom) for key in ("xgap", "ygap"))
    for i, j in zip(*np.nonzero(np.isfinite(z)), strict=True):
        x0, x1 = sorted((xs[j], xs[j + 1]))
        y0, y1 = sorted((ys[i], ys[i + 1]))
        draw.rectangle([x0 + gap_x // 2, y0 + gap_y // 2, x1 - 1 - gap_x // 2, y1 - 1 - gap_y // 2],
                       fill=tuple(colors[i, j]))
