"""The pictures of an animated figure, frame by frame, for clips (``polarize.animate`` writes them).

The figure's static parts (axes, curves, legends, titles, and title lines above
it) are drawn once by the static exporter (kaleido, through Chromium); the parts
its frames move (markers, the comet tail, the mean line) are drawn onto copies of
that picture with Pillow, at pixel positions computed from the figure's fixed axis
ranges with its margins and domains fixed. Drawing every frame with kaleido instead
costs about 0.66 s a frame (58 s for the 88 frames of the default run).
"""

from __future__ import annotations

import copy
import html
import io
import itertools
import re
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from polarize.plots import style
from polarize.science import format_time

__all__ = ["LAYOUT_WIDTH", "clip_frames"]

LAYOUT_WIDTH = 1280
"""Figures are laid out at this width and scaled to the clip's, so text keeps its proportions."""
_TITLE = 62
"""Pixels above the figure for the two title lines."""
_BOTTOM = 100
"""Pixels below the plots for tick labels, axis titles and, under them, the time counter (the
figure's controls are left out)."""
_LEGEND = 30
"""Pixels added above the plots when a legend sits above them (it moves under the title)."""
_SUPERSAMPLE = 2
"""Moving parts are drawn this many times larger and shrunk: Pillow does not antialias."""


# ---- the static picture and its geometry -------------------------------------------------------


@dataclass(frozen=True)
class _Axes:
    """Where a pair of axes sits in the picture (pixels) and what it shows."""

    box: tuple[float, float, float, float]  # left, top, right, bottom
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    x_log: bool
    y_log: bool

    def to_pixels(self, x: Sequence[float], y: Sequence[float]) -> list[tuple[float, float] | None]:
        """Pixel positions of the points (None where an axis cannot show one)."""
        left, top, right, bottom = self.box
        out: list[tuple[float, float] | None] = []
        for xi, yi in zip(x, y, strict=True):
            if xi is None or yi is None or (self.x_log and xi <= 0) or (self.y_log and yi <= 0):
                out.append(None)
                continue
            u = (np.log10(xi) if self.x_log else xi) - self.x_range[0]
            v = (np.log10(yi) if self.y_log else yi) - self.y_range[0]
            out.append((left + (right - left) * u / (self.x_range[1] - self.x_range[0]),
                        bottom - (bottom - top) * v / (self.y_range[1] - self.y_range[0])))
        return out


def _axis_name(ref: str, letter: str) -> str:
    """``"x3"`` -> ``"xaxis3"``; ``"x"`` -> ``"xaxis"``."""
    return f"{letter}axis{ref[1:]}"


def _fix_geometry(layout: dict[str, Any], height: int) -> dict[str, _Axes]:
    """Turn off what would move the plot areas (automargin, scale anchors) and map each axis pair.

    ``scaleanchor`` is resolved here as plotly.js would (the axis with more pixels per
    unit gets its range widened about its centre), and written as plain ranges.
    """
    margin = layout["margin"]
    plot_w = LAYOUT_WIDTH - margin["l"] - margin["r"]
    plot_h = height - margin["t"] - margin["b"]

    def span(axis: dict[str, Any], size: float, start: float) -> tuple[float, float]:
        d0, d1 = axis.get("domain", (0.0, 1.0))
        return start + d0 * size, start + d1 * size

    axes = {key: value for key, value in layout.items() if re.fullmatch(r"[xy]axis\d*", key)}
    for axis in axes.values():
        axis["automargin"] = False
    for key, axis in axes.items():
        anchor = axis.pop("scaleanchor", None)
        if not anchor or "range" not in axis:
            continue
        other = axes[_axis_name(anchor, anchor[0])]
        ratio = axis.pop("scaleratio", 1.0)
        own = span(axis, plot_h if key[0] == "y" else plot_w, 0.0)
        theirs = span(other, plot_w if key[0] == "y" else plot_h, 0.0)
        per_own = (own[1] - own[0]) / (axis["range"][1] - axis["range"][0]) / ratio
        per_theirs = (theirs[1] - theirs[0]) / (other["range"][1] - other["range"][0])
        wider, scale = (axis, per_own / per_theirs) if per_own > per_theirs else (other, per_theirs / per_own)
        lo, hi = wider["range"]
        mid, half = (lo + hi) / 2, (hi - lo) / 2 * scale
        wider["range"] = [mid - half, mid + half]
    boxes = {}
    for key, axis in axes.items():
        if key[0] != "x" or "range" not in axis:
            continue
        y_name = _axis_name(axis.get("anchor", "y" + key[5:]), "y")
        y_axis = axes.get(y_name)
        if y_axis is None or "range" not in y_axis:
            continue
        left, right = span(axis, plot_w, margin["l"])
        low, high = span(y_axis, plot_h, 0.0)
        boxes["x" + key[5:] + "|y" + y_name[5:]] = _Axes(
            box=(left, margin["t"] + plot_h - high, right, margin["t"] + plot_h - low),
            x_range=tuple(axis["range"]), y_range=tuple(y_axis["range"]),
            x_log=axis.get("type") == "log", y_log=y_axis.get("type") == "log")
    return boxes


def _static_figure(figure: dict[str, Any], title: Sequence[str]) -> tuple[dict, dict[str, _Axes], int]:
    """The figure without its moving traces and controls, a title on top: (figure, axes, height)."""
    layout = copy.deepcopy(figure["layout"])
    for key in ("updatemenus", "sliders"):
        layout.pop(key, None)
    old = layout.get("margin", {})
    legend = layout.get("legend") if layout.get("showlegend") else None
    above = bool(legend) and legend.get("yref") != "container" and legend.get("y", 0) > 1
    top = old.get("t", 50) + _TITLE + (_LEGEND if above else 0)
    height = int(layout.get("height") or 700) - old.get("b", 0) - old.get("t", 50) + top + _BOTTOM
    layout["margin"] = dict(l=max(old.get("l", 20), 70), r=max(old.get("r", 20), 20), t=top, b=_BOTTOM)
    layout.update(height=height, width=LAYOUT_WIDTH)
    if legend and (above or legend.get("yref") == "container"):  # a legend above the plots: under the title
        legend.update(yref="container", y=1.0 - _TITLE / height, yanchor="top")
    lines = [html.escape(line) for line in title[:1]] + [
        "<br>".join(html.escape(part) for part in textwrap.wrap(line, 150, max_lines=2, placeholder="..."))
        for line in title[1:]]
    margin = layout["margin"]
    plot_w, plot_h = LAYOUT_WIDTH - margin["l"] - margin["r"], height - margin["t"] - margin["b"]
    if lines:  # an annotation, not layout.title: plotly places a title of several lines too high
        layout.setdefault("annotations", []).append(dict(
            text="<br>".join(f"<b>{line}</b>" if i == 0 else line for i, line in enumerate(lines)),
            xref="paper", yref="paper", x=(12 - margin["l"]) / plot_w, y=1 + (margin["t"] - 8) / plot_h,
            xanchor="left", yanchor="top", align="left", showarrow=False,
            font=style.font(-2, style.PALETTE.ink)))
    boxes = _fix_geometry(layout, height)
    moving = set(layout.get("meta", {}).get("animated", []))
    # A moving trace keeps its style (and legend entry) with no point to show: the frames draw them.
    data = [trace if i not in moving else trace | {"x": [None], "y": [None]}
            for i, trace in enumerate(figure["data"])]
    return dict(data=data, layout=layout), boxes, height


def _render(figure: dict[str, Any], height: int, scale: float) -> Any:
    """The static exporter's PNG of ``figure``, as a Pillow image."""
    import kaleido
    from PIL import Image

    png = kaleido.calc_fig_sync(figure, opts=dict(format="png", width=LAYOUT_WIDTH, height=height,
                                                  scale=scale))
    return Image.open(io.BytesIO(png)).convert("RGB")


# ---- the moving parts, frame by frame ------------------------------------------------------------


def _rgba(color: Any, opacity: float = 1.0) -> tuple[int, int, int, int] | None:
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


def _draw_trace(draw: Any, trace: dict[str, Any], axes: _Axes, zoom: float, font: Any) -> None:
    """One moving trace at ``zoom`` pixels per layout pixel: bars, or a scatter's lines, markers and text.

    ``font(size)`` is a Pillow font of ``size`` pixels, for text.
    """
    if trace.get("type") == "bar":
        _draw_bars(draw, trace, axes, zoom)
        return
    points = axes.to_pixels(trace.get("x") or [], trace.get("y") or [])
    mode = trace.get("mode", "markers")
    if "text" in mode:
        _draw_text(draw, trace, points, zoom, font)
    shown = [(x * zoom, y * zoom) for p in points if p is not None for x, y in [p]]
    opacity = float(trace.get("marker", {}).get("opacity", trace.get("opacity", 1.0)))
    if "lines" in mode and len(shown) > 1:
        line = trace.get("line", {})
        fill = _rgba(line.get("color", style.PALETTE.ink), opacity)
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
        fill = _rgba(_each(marker.get("color"), k, style.PALETTE.ink), opacity)
        edge_color = _each(edge.get("color"), k, None)
        _marker(draw, (p[0] * zoom, p[1] * zoom), float(_each(marker.get("size"), k, 6)) * zoom, fill,
                _rgba(edge_color, opacity) if edge_color else None, float(edge.get("width", 0)) * zoom,
                marker.get("symbol", "circle"))


def _draw_bars(draw: Any, trace: dict[str, Any], axes: _Axes, zoom: float) -> None:
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
                       fill=_rgba(_each(marker.get("color"), k, style.PALETTE.ink)),
                       outline=_rgba(edge_color) if edge_color and edge_width else None,
                       width=max(1, round(edge_width)))


_TEXT_ANCHORS = {"left": "r", "right": "l", "center": "m"}
"""Plotly's horizontal text position -> Pillow's anchor (text left of the point ends at it)."""


def _draw_text(draw: Any, trace: dict[str, Any], points: list, zoom: float, font: Any) -> None:
    """A scatter's text at its points, placed as its ``textposition`` says (vertically centred)."""
    look = trace.get("textfont", {})
    where = str(trace.get("textposition", "middle center")).split()[-1]
    for k, p in enumerate(points):
        words = _each(trace.get("text"), k, "")
        if p is None or not words:
            continue
        draw.text((p[0] * zoom, p[1] * zoom), str(words), anchor=_TEXT_ANCHORS.get(where, "m") + "m",
                  font=font(float(look.get("size", style.FONT_SIZE)) * zoom),
                  fill=_rgba(look.get("color", style.PALETTE.ink)))


def _merge(trace: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """A trace with a frame's state laid over it, as plotly.js merges them (nested dicts merged)."""
    out = dict(trace)
    for key, value in state.items():
        nested = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = {**out[key], **value} if nested else value
    return out


def clip_frames(figure: Any, *, title: Sequence[str] = (), width: int = LAYOUT_WIDTH) -> Iterator[Any]:
    """The pictures of an animated figure, one per frame.

    Parameters
    ----------
    figure : go.Figure or its dict
        An animated figure of ``polarize.plots`` (``layout.meta`` lists its moving
        traces and ``frame_times``; every axis with moving traces has a fixed range).
    title : sequence of str
        Plain-text lines drawn above the figure (the first in bold).
    width : int
        Pixels; the height follows the figure's. Both are rounded up to a multiple
        of 16 (as video encoders want), the margin filled with the background.

    Yields
    ------
    PIL.Image.Image
        RGB, ``W x H``, one per frame (``F = len(figure.frames)``), the frame's time written below.
    """
    from PIL import Image, ImageDraw, ImageFont

    fig = figure if isinstance(figure, dict) else figure.to_dict()
    static, boxes, height = _static_figure(fig, title)
    scale = width / LAYOUT_WIDTH
    base = _render(static, height, scale)
    size = (-(-base.width // 16) * 16, -(-base.height // 16) * 16)
    canvas = Image.new("RGB", size, _rgba(style.PALETTE.background)[:3])
    canvas.paste(base, (0, 0))
    meta = fig["layout"].get("meta", {})
    moving = list(meta.get("animated", []))
    times = list(meta.get("frame_times", []))
    font = ImageFont.load_default(size=max(10, round(24 * scale)))
    zoom = scale * _SUPERSAMPLE
    for j, frame in enumerate(fig.get("frames", [])):
        layer = Image.new("RGBA", (size[0] * _SUPERSAMPLE, size[1] * _SUPERSAMPLE), (0, 0, 0, 0))
        draw = ImageDraw.Draw(layer)
        states = dict(zip(frame.get("traces", moving), frame["data"], strict=True))
        for index in moving:
            trace = _merge(fig["data"][index], states.get(index, {}))
            axes = boxes.get(f"{trace.get('xaxis', 'x')}|{trace.get('yaxis', 'y')}")
            if axes is not None:
                _draw_trace(draw, trace, axes, zoom, lambda px: ImageFont.load_default(size=px))
        picture = canvas.copy()
        small = layer.reduce(_SUPERSAMPLE)
        picture.paste(small, (0, 0), small)
        if j < len(times):
            ImageDraw.Draw(picture).text((round(24 * scale), round((height - 22) * scale)),
                                         f"t = {format_time(float(times[j]))}", font=font, anchor="lm",
                                         fill=_rgba(style.PALETTE.ink)[:3])
        yield picture
