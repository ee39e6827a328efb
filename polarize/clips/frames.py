"""The pictures of an animated figure, frame by frame, for clips (``polarize.clips.animate`` writes them).

The figure's static parts (axes, curves, legends, titles, and title lines above
it) are drawn once by the static exporter (kaleido, through Chromium); the parts
its frames move (markers, the comet tail, the mean line, bars, heatmap cells, and
annotations a frame rewrites, such as panel titles) are drawn onto copies of that
picture with Pillow (``polarize.clips.draw``), at pixel positions computed from the figure's
fixed axis ranges with its margins and domains fixed. Drawing every frame with kaleido instead
costs about 0.66 s a frame (58 s for the 88 frames of the default run).
"""

from __future__ import annotations

import copy
import dataclasses
import html
import io
import itertools
import re
import textwrap
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from polarize.clips.draw import cell_edges, draw_note, draw_trace, font, merge, merge_notes, rgba
from polarize.plots import static, style
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
_COLORBAR = 110
"""Pixels right of the plots for a colour bar and its tick labels."""
_SUPERSAMPLE = 2
"""Moving parts are drawn this many times larger and shrunk: Pillow does not antialias."""
_TILE = 16
"""Side of the squares (picture pixels) in which drawn moving parts are found and shrunk (pictures are
multiples of 16 pixels wide and high)."""


# ---- the static picture and its geometry -------------------------------------------------------


@dataclass(frozen=True)
class _Axes:
    """Where a pair of axes sits in the picture (pixels) and what it shows (ranges in axis units)."""

    box: tuple[float, float, float, float]  # left, top, right, bottom
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    x_log: bool
    y_log: bool
    x_categories: bool = False
    y_categories: bool = False

    def x_pixels(self, x: Sequence[float]) -> list[float]:
        """Horizontal pixel positions of positive (log axis) or any (linear) ``x``."""
        left, _, right, _ = self.box
        u = (np.log10(x) if self.x_log else np.asarray(x, dtype=float)) - self.x_range[0]
        return list(left + (right - left) * u / (self.x_range[1] - self.x_range[0]))

    def y_pixels(self, y: Sequence[float]) -> list[float]:
        """Vertical pixel positions (down from the top) of ``y``, as ``x_pixels``."""
        _, top, _, bottom = self.box
        v = (np.log10(y) if self.y_log else np.asarray(y, dtype=float)) - self.y_range[0]
        return list(bottom - (bottom - top) * v / (self.y_range[1] - self.y_range[0]))

    def to_pixels(self, x: Sequence[float], y: Sequence[float]) -> list[tuple[float, float] | None]:
        """Pixel positions of the points (None where an axis cannot show one)."""
        out: list[tuple[float, float] | None] = []
        for xi, yi in zip(x, y, strict=True):
            if xi is None or yi is None or (self.x_log and xi <= 0) or (self.y_log and yi <= 0):
                out.append(None)
            else:
                out.append((self.x_pixels([xi])[0], self.y_pixels([yi])[0]))
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
            x_log=axis.get("type") == "log", y_log=y_axis.get("type") == "log",
            x_categories=axis.get("type") == "category", y_categories=y_axis.get("type") == "category")
    boxes["paper"] = _Axes(box=(margin["l"], margin["t"], margin["l"] + plot_w, margin["t"] + plot_h),
                           x_range=(0.0, 1.0), y_range=(0.0, 1.0), x_log=False, y_log=False)
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
    # Nothing may push the margins (the moving parts are placed by them): a colour bar gets room.
    scaled = any(trace.get("showscale", trace.get("type") == "heatmap")
                 or (trace.get("marker") or {}).get("showscale") for trace in figure["data"])
    layout["margin"] = dict(l=max(old.get("l", 20), 70), r=max(old.get("r", 20), _COLORBAR if scaled else 20),
                            t=top, b=_BOTTOM, autoexpand=False)
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
    data = _without_moving(figure, layout)
    boxes = _fix_geometry(layout, height)
    return dict(data=data, layout=layout), boxes, height


def _without_moving(figure: dict[str, Any], layout: dict[str, Any]) -> list[dict[str, Any]]:
    """The figure's traces with nothing drawn of the moving ones, and ``layout`` without moving notes.

    A moving trace keeps its style, legend entry and colour bar with no point or cell to
    show: the frames draw them. The axes of a moving heatmap get the fixed range its cells
    span (reversed if the axis is), so that the cells can be placed.
    """
    moving = set(layout.get("meta", {}).get("animated", []))
    changing = _moving_notes(figure)[0]
    layout["annotations"] = [note for i, note in enumerate(layout.get("annotations", []))
                             if i not in changing]
    data = []
    for i, trace in enumerate(figure["data"]):
        if i not in moving:
            data.append(trace)
        elif trace.get("type") == "heatmap":
            data.append(trace | {"opacity": 0.0})  # no cells; its axes' categories and colour bar kept
            _fix_cell_ranges(trace, layout)
        else:
            data.append(trace | {"x": [None], "y": [None]})
    return data


def _fix_cell_ranges(trace: dict[str, Any], layout: dict[str, Any]) -> None:
    """Give a heatmap's axes the range its cells span where they have none (reversed as they are)."""
    x_axis = layout.setdefault(_axis_name(trace.get("xaxis", "x"), "x"), {})
    y_axis = layout.setdefault(_axis_name(trace.get("yaxis", "y"), "y"), {})
    edges = cell_edges(trace, x_axis.get("type") == "category", y_axis.get("type") == "category")
    for axis, cells in zip((x_axis, y_axis), edges, strict=True):
        if "range" not in axis:
            ends = [float(cells.min()), float(cells.max())]
            axis.update(range=ends[::-1] if axis.get("autorange") == "reversed" else ends, autorange=False)


def _moving_notes(figure: dict[str, Any]) -> tuple[set[int], list[list[dict[str, Any]]]]:
    """The annotations some frame changes (indices) and every frame's annotations (frames' changes merged)."""
    notes = figure["layout"].get("annotations", [])
    frames = [merge_notes(notes, frame.get("layout", {}).get("annotations", []))
              for frame in figure.get("frames", [])]
    changing = {i for merged in frames for i, note in enumerate(merged)
                if i >= len(notes) or note != notes[i]}
    return changing, frames


def _note_at(note: dict[str, Any], boxes: dict[str, _Axes]) -> tuple[float, float] | None:
    """Where an annotation is anchored (pixels), by its ``xref`` and ``yref``; None on unknown axes."""
    place = []
    for ref, letter, value in ((note.get("xref", "paper"), 0, note.get("x", 0.5)),
                               (note.get("yref", "paper"), 1, note.get("y", 0.5))):
        name, _, domain = str(ref).partition(" ")
        axes = boxes["paper"] if name == "paper" else next(
            (box for key, box in boxes.items() if key.split("|")[letter] == name), None)
        if axes is None or value is None:
            return None
        if domain:  # a fraction of the axis's length
            axes = _Axes(box=axes.box, x_range=(0.0, 1.0), y_range=(0.0, 1.0), x_log=False, y_log=False)
        # On a log axis an annotation is placed in log units, as its range is.
        axes = dataclasses.replace(axes, x_log=False, y_log=False)
        place.append((axes.x_pixels if letter == 0 else axes.y_pixels)([float(value)])[0])
    return place[0] + float(note.get("xshift", 0)), place[1] - float(note.get("yshift", 0))


def _frame_labels(figure: dict[str, Any]) -> list[str]:
    """What is written under each frame: its time (``meta["frame_times"]``), else the slider's label.

    The slider's label is its ``currentvalue`` prefix and the step's label, e.g. "training step 250".
    """
    times = figure["layout"].get("meta", {}).get("frame_times")
    if times:
        return [f"t = {format_time(float(t))}" for t in times]
    slider = (figure["layout"].get("sliders") or [{}])[0]
    prefix = slider.get("currentvalue", {}).get("prefix", "")
    labels = {str(step["args"][0][0]): str(step.get("label", "")) for step in slider.get("steps", [])
              if step.get("args") and step["args"][0]}
    return [prefix + labels.get(str(frame.get("name")), str(frame.get("name", "")))
            for frame in figure.get("frames", []) if slider]


def _render(figure: dict[str, Any], height: int, scale: float) -> Any:
    """The static exporter's PNG of ``figure``, as a Pillow image."""
    from PIL import Image

    png = static.render(figure, format="png", width=LAYOUT_WIDTH, height=height, scale=scale)
    return Image.open(io.BytesIO(png)).convert("RGB")


def clip_frames(figure: Any, *, title: Sequence[str] = (), width: int = LAYOUT_WIDTH) -> Iterator[Any]:
    """The pictures of an animated figure, one per frame.

    Parameters
    ----------
    figure : go.Figure or its dict
        An animated figure of ``polarize.plots``: ``layout.meta`` lists its moving traces
        (``animated``) and may give ``frame_times``; every axis with moving scatters or bars
        has a fixed range (a moving heatmap's axes get the range of its cells). Annotations
        the frames change are drawn per frame.
    title : sequence of str
        Plain-text lines drawn above the figure (the first in bold).
    width : int
        Pixels; the height follows the figure's. Both are rounded up to a multiple
        of 16 (as video encoders want), the margin filled with the background.

    Yields
    ------
    PIL.Image.Image
        RGB, ``W x H``, one per frame (``F = len(figure.frames)``), the frame's time (or its
        slider label) written below.
    """
    from PIL import Image, ImageDraw

    fig = figure if isinstance(figure, dict) else figure.to_dict()
    still, boxes, height = _static_figure(fig, title)
    scale = width / LAYOUT_WIDTH
    size = (-(-width // 16) * 16, -(-round(height * scale) // 16) * 16)
    labels = _frame_labels(fig)
    # The browser draws the still picture (and starts, the first time) while Pillow draws what moves.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="polarize-clip") as pool:
        base = pool.submit(_render, still, height, scale)
        parts = _moving_parts(fig, boxes, size, scale * _SUPERSAMPLE)
        early: list = []
        while len(early) < _AHEAD and not base.done():
            tiles = next(parts, None)
            if tiles is None:
                break
            early.append(tiles)
        canvas = Image.new("RGB", size, rgba(style.PALETTE.background)[:3])
        canvas.paste(base.result(), (0, 0))
    for j, tiles in enumerate(itertools.chain(early, parts)):
        picture = canvas.copy()
        for tile, at in tiles:
            picture.paste(tile, at, tile)
        if j < len(labels):
            ImageDraw.Draw(picture).text((round(24 * scale), round((height - 22) * scale)), labels[j],
                                         font=font(max(10, round(24 * scale))), anchor="lm",
                                         fill=rgba(style.PALETTE.ink)[:3])
        yield picture


_AHEAD = 48
"""Frames whose moving parts may be drawn before the still picture is back (they wait in memory)."""


def _moving_parts(fig: dict[str, Any], boxes: dict[str, _Axes], size: tuple[int, int],
                  zoom: float) -> Iterator[list[tuple[Any, tuple[int, int]]]]:
    """Each frame's moving parts, drawn ``zoom`` times larger and shrunk: (RGBA tile, where) pairs."""
    from PIL import Image, ImageDraw

    moving = list(fig["layout"].get("meta", {}).get("animated", []))
    changing, notes = _moving_notes(fig)
    ink = fig["layout"].get("font", {}).get("color", style.PALETTE.ink)
    # One layer for every frame, cleared where the last drew: a new one, and shrinking all of it,
    # cost 0.07 s a frame at 1280 px, when what moves covers a part of the picture.
    layer = Image.new("RGBA", (size[0] * _SUPERSAMPLE, size[1] * _SUPERSAMPLE), (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    for j, frame in enumerate(fig.get("frames", [])):
        states = dict(zip(frame.get("traces", moving), frame["data"], strict=True))
        for index in moving:
            trace = merge(fig["data"][index], states.get(index, {}))
            axes = boxes.get(f"{trace.get('xaxis', 'x')}|{trace.get('yaxis', 'y')}")
            if axes is not None:
                draw_trace(draw, trace, axes, zoom)
        for i in sorted(changing):
            at = _note_at(notes[j][i], boxes)
            if at is not None and notes[j][i].get("visible", True):
                draw_note(draw, notes[j][i], at, zoom, ink)
        yield _shrunk(layer)


_ANY = [0] + [255] * 255
"""A lookup table: any alpha but 0 becomes 255."""


def _tiles_used(alpha: Any, tile: int) -> Any:
    """Which ``tile`` x ``tile`` squares of an alpha channel hold a pixel that is not clear (sides divide).

    Shrunk by 4 at a time, never more: the mean of 16 pixels of which one is 255 is still
    not 0. (In Pillow: NumPy would first copy the channel, and took twice as long.)
    """
    while tile > 1:
        alpha, tile = alpha.point(_ANY).reduce(min(4, tile)), tile // min(4, tile)
    return alpha


def _shrunk(layer: Any) -> list[tuple[Any, tuple[int, int]]]:
    """What ``layer`` holds, shrunk ``_SUPERSAMPLE`` times, as (RGBA tile, where) pairs; the layer cleared.

    Only the tiles something was drawn on, a row's neighbours joined into one box: what moves
    is spread over every panel but covers little of it. Tiles sit on whole blocks of
    ``_SUPERSAMPLE`` pixels, so each pixel is the same mean of the same block as shrinking the
    whole layer gives.
    """
    k, tile = _SUPERSAMPLE, _TILE * _SUPERSAMPLE
    used = np.asarray(_tiles_used(layer.getchannel("A"), tile))
    out = []
    for row in range(used.shape[0]):
        columns = np.flatnonzero(used[row])
        for run in np.split(columns, np.flatnonzero(np.diff(columns) > 1) + 1) if columns.size else ():
            box = (int(run[0]) * tile, row * tile, (int(run[-1]) + 1) * tile, (row + 1) * tile)
            out.append((layer.crop(box).reduce(k), (box[0] // k, box[1] // k)))
            layer.paste((0, 0, 0, 0), box)
    return out
