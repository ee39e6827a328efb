"""Uncrowding a figure whose panels got short: fewer tick labels, no repeated ones, no notes in the way.

Presentation mode (``present.presented``) makes the type larger and the figure no taller
than the window, so each panel has fewer pixels for more of it. What a panel then cannot
hold goes, never the type: tick labels are thinned to what the panel's height holds; a
column of panels over the same x axis labels it once, under its lowest panel; notes
inside a panel too short for them (annotations, or text drawn as a trace), and legends
inside such a panel (the markers' key), are dropped (the lecturer says them).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from polarize.plots import style
from polarize.plots.geometry import NOTE_ROOM

__all__ = ["LEGEND_ROW", "LEGEND_SYMBOL", "LOG_TICK_GROWTH", "TICK_KEYS", "TICK_PITCH", "legend_rows",
           "uncrowded"]

TICK_PITCH = 1.8
"""Least distance between two tick labels of a vertical axis, in their drawn heights."""
LOG_TICK_GROWTH = 1.25
"""plotly.js draws a log axis's tick labels in the power format ("10\u00b2") this many times their font's
size: beside a linear axis of the same font they were 23.5 px to its 18.8 in the presented Explorer."""
LEGEND_SYMBOL, LEGEND_ROW = 40, 2.1
"""A horizontal legend's entry: pixels besides its name; a row's height in font sizes (measured)."""
_CHAR = 0.45
"""Width of a character of a panel title, in font sizes (measured: 0.42 for the dashboard's)."""
TICK_KEYS = ("tickvals", "ticktext", "tick0", "dtick", "tickmode", "nticks")
"""A vertical axis's tick settings that thinning (``_thin``) may change."""


def legend_rows(names: Sequence[str], *, size: float, width: float) -> int:
    """Rows a horizontal legend of entries ``names`` (its title first, if any) takes ``width`` px wide.

    An estimate (half a font size a character, ``LEGEND_SYMBOL`` px for the line beside it): plotly
    wraps such a legend itself and pushes the plot down for it, which moves whatever is placed in
    fractions of the plot (the transport controls) up; figures leave room for the rows instead.
    """
    rows, used = 1, 0.0
    for name in names:
        entry = LEGEND_SYMBOL + 0.5 * size * len(name)
        if used and used + entry > width:
            rows, used = rows + 1, 0.0
        used += entry
    return rows


def uncrowded(layout: dict[str, Any], data: list[dict[str, Any]], *, plot_px: float,
              width: float) -> dict[str, Any]:
    """Thin tick labels, label shared x axes once, drop notes and inner legends of short panels; in place.

    Parameters
    ----------
    layout : dict
        A figure's layout (fonts already at their final size); changed in place.
    data : list of dict
        The figure's traces (a trace of a dropped legend leaves it); changed in place.
    plot_px : float
        Pixels of the figure's plot area (its height less the top and bottom margins).
    width : float
        Pixels of the figure's width, as far as known (for titles wider than their panel).

    Returns
    -------
    dict
        What the choices made for ``plot_px`` changed, as it was before, so that they can be made
        again for another height (the chart element does, in the browser: ``ui/chart_frontend/crowding.js``,
        ``crowded``): ``ticks`` (y axis -> its ``TICK_KEYS`` that thinning changed, None for unset),
        ``titles`` (y axis -> its title's text before it was shortened), ``notes`` (the dropped
        annotations, each ``[index, note]``, in order), ``traces`` (index -> ``[showlegend, visible]``
        before), and the rules' constants (``room``: ``NOTE_ROOM``, ``pitch``, ``log``, ``label``, ``char``).
        The choices that depend on the width (``_label_columns_once``, ``_wrap_titles``) are not in it.
    """
    size = float(layout.get("font", {}).get("size", 12))
    axes = {key: value for key, value in layout.items()
            if key[1:5] == "axis" and key[0] in "xy" and isinstance(value, dict)}
    undo: dict[str, Any] = {"ticks": {}, "titles": {}, "notes": [], "traces": {}, "room": NOTE_ROOM,
                            "pitch": TICK_PITCH, "log": LOG_TICK_GROWTH, "label": _LABEL_ROOM, "char": _CHAR}
    for key, axis in axes.items():
        if key[0] == "y" and axis.get("showticklabels", True) and axis.get("visible", True):
            tall = _span(axis.get("domain")) * plot_px
            before = {name: axis.get(name) for name in TICK_KEYS}
            _thin(axis, tall, _tick_size(axis, size) * TICK_PITCH)
            changed = {name: value for name, value in before.items() if axis.get(name) is not value}
            if changed:
                undo["ticks"][key] = changed
    _label_columns_once(axes)
    _wrap_titles(layout, axes, size, width)
    titles = {key: _title(axis) for key, axis in axes.items() if key[0] == "y"}
    _fit_y_titles(axes, size, plot_px)
    undo["titles"] = {key: text for key, text in titles.items() if _title(axes[key]) != text}
    short = {_ref(key): _span(axis.get("domain")) * plot_px < NOTE_ROOM
             for key, axis in axes.items() if key[0] == "y"}
    notes = layout.get("annotations", [])
    dropped = [short.get(_ref_axis(note.get("yref")), False) for note in notes]
    undo["notes"] = [[i, note] for i, (note, drop) in enumerate(zip(notes, dropped, strict=True)) if drop]
    layout["annotations"] = [note for note, drop in zip(notes, dropped, strict=True) if not drop]
    for i, trace in enumerate(data):
        if not short.get(trace.get("yaxis", "y"), False):
            continue
        before = [trace.get("showlegend"), trace.get("visible")]
        if trace.get("legend", "legend") != "legend":
            trace["showlegend"] = False
        # A note drawn as a trace (it may change with the frames); not a key (the simplex's corners'
        # numbers, in the tokens' colours: on a phone the only key to the lines' colours).
        if trace.get("mode") == "text" and not (trace.get("meta") or {}).get("key"):
            trace["visible"] = False
        if before != [trace.get("showlegend"), trace.get("visible")]:
            undo["traces"][str(i)] = before
    return undo


def _span(domain: Any) -> float:
    return float(domain[1] - domain[0]) if isinstance(domain, list | tuple) and len(domain) == 2 else 1.0


def _ref(key: str) -> str:
    """``yaxis3`` -> ``y3`` (how traces and notes name an axis)."""
    return key[0] + key[5:]


def _ref_axis(ref: Any) -> str | None:
    """The axis a note is placed on (``"y3"`` for ``"y3"`` or ``"y3 domain"``); None for ``paper``."""
    if not isinstance(ref, str) or not ref.startswith("y"):
        return None
    return ref.split(" ")[0]


def _tick_size(axis: dict[str, Any], size: float) -> float:
    """Pixels of an axis's tick labels as drawn: a log axis's powers of ten ``LOG_TICK_GROWTH`` times
    their font (spaced by the font alone, a presented Explorer's loss ticks were 1.4 heights apart)."""
    font = float(axis.get("tickfont", {}).get("size") or size)
    power = axis.get("type") == "log" and axis.get("exponentformat") == "power" and not axis.get("tickformat")
    return font * LOG_TICK_GROWTH if power else font


def _thin(axis: dict[str, Any], tall: float, pitch: float) -> None:
    """Tick labels of a vertical ``axis`` ``tall`` px long at least ``pitch`` px apart (fewer, never smaller).

    Given values: every k-th. A log axis over a decade or more: whole decades, every k-th. A set
    step: k times it. Otherwise plotly's own ticks, at most as many as fit.
    """
    values = axis.get("tickvals")
    most = max(2, int(tall / pitch) + 1)
    if isinstance(values, list | tuple) and len(values) > most:
        every = math.ceil((len(values) - 1) / (most - 1))
        axis["tickvals"] = list(values)[::every]
        if isinstance(axis.get("ticktext"), list | tuple):
            axis["ticktext"] = list(axis["ticktext"])[::every]
        return
    if values is not None:
        return
    ends = axis.get("range")
    low, high = sorted(float(end) for end in ends) if isinstance(ends, list | tuple) and len(ends) == 2 \
        else (None, None)
    step = axis.get("dtick")
    if low is not None and high > low:
        unit = tall / (high - low)  # px per unit of the range (a decade on a log axis)
        if axis.get("type") == "log" and high - low >= 1:
            decades = max(int(step) if isinstance(step, int | float) else 1, math.ceil(pitch / unit))
            # From the lowest whole decade shown, so that as many as fit are in range; not in the
            # corner, where the x axis's first label is.
            first = math.ceil(low + 0.35 * pitch / unit)
            axis.update(tick0=first if first <= high else math.ceil(low), dtick=decades, tickmode="linear")
            return
        if isinstance(step, int | float) and step > 0 and step * unit < pitch:
            axis["dtick"] = step * math.ceil(pitch / (step * unit))
            return
        if step is None and axis.get("type", "linear") in ("linear", "-"):
            nticks = min(axis.get("nticks") or most, most)
            if _multiples(low, high, _plotly_step((high - low) / nticks)) >= 2:
                axis["nticks"] = nticks
                return
            # Plotly's step for so few ticks may leave one label in the range (the presented
            # Normalizers' "sum" panel read "0" alone): the widest step that still shows two.
            spread = [s for s in _nice_steps(high - low) if _multiples(low, high, s) >= 2]
            if spread and max(spread) * unit >= _LABEL_ROOM * pitch / TICK_PITCH:
                axis.update(tickmode="linear", tick0=0, dtick=max(spread))
                return
    if not isinstance(step, int | float | str):
        axis["nticks"] = min(axis.get("nticks") or most, most)


_LABEL_ROOM = 1.2
"""Least distance between two tick labels of a vertical axis shown so that an axis has two, in heights."""


def _plotly_step(rough: float) -> float:
    """The step plotly.js takes for a linear axis of ``nticks`` over a span (``rough`` = span / nticks):
    the first of 2, 5 and 10 times ``rough``'s power of ten above it (its ``autoTicks`` and ``roundUp``)."""
    base = 10.0 ** math.floor(math.log10(rough))
    return base * next(m for m in (2, 5, 10) if m > rough / base)


def _nice_steps(span: float) -> list[float]:
    """Steps of 1, 2, 2.5 and 5 times a power of ten, from a hundredth of ``span`` to ``span``."""
    top = math.floor(math.log10(span))
    return [m * 10.0 ** k for k in range(top - 2, top + 1) for m in (1, 2, 2.5, 5) if m * 10.0 ** k <= span]


def _multiples(low: float, high: float, step: float) -> int:
    """How many multiples of ``step`` lie in ``[low, high]``."""
    return math.floor(high / step + 1e-9) - math.ceil(low / step - 1e-9) + 1


def _label_columns_once(axes: dict[str, dict[str, Any]]) -> None:
    """Tick labels and title only under the lowest of panels stacked over the same x axis; an axis
    title only under the lowest panel that has it."""
    columns: dict[tuple[Any, ...], list[tuple[float, dict[str, Any]]]] = {}
    for key, axis in axes.items():
        anchor = axes.get(f"yaxis{axis.get('anchor', 'y')[1:]}") if key[0] == "x" else None
        if anchor is None or not axis.get("showticklabels", True) or not axis.get("visible", True):
            continue
        same = (tuple(axis.get("domain", (0, 1))), axis.get("type"), _key(axis.get("range")),
                _key(axis.get("tickvals")), axis.get("dtick"))
        columns.setdefault(same, []).append((float(anchor.get("domain", (0, 1))[0]), axis))
    for stacked in columns.values():
        if len(stacked) > 1 and all(axis.get("range") is not None for _, axis in stacked):
            stacked.sort(key=lambda item: item[0])
            for _, axis in stacked[1:]:
                axis["showticklabels"] = False
                axis.pop("title", None)
    # An axis title said again by a panel in a lower row (another column): said once, at the bottom.
    placed = [(low, axis) for stacked in columns.values() for low, axis in stacked]
    for low, axis in placed:
        text = _title(axis)
        if text and any(_title(other) == text and other_low < low for other_low, other in placed):
            axis.pop("title", None)


def _title(axis: dict[str, Any]) -> str | None:
    title = axis.get("title")
    return title.get("text") if isinstance(title, dict) else title


def _wrap_titles(layout: dict[str, Any], axes: dict[str, dict[str, Any]], size: float, width: float) -> None:
    """Break a panel's title (a note in paper units centred over a panel) wider than the panel into lines."""
    margin = layout.get("margin", {})
    plot_width = width - margin.get("l", 80) - margin.get("r", 80)
    spans = [axis["domain"] for key, axis in axes.items() if key[0] == "x" and "domain" in axis]
    for note in layout.get("annotations", []):
        text, x = note.get("text"), note.get("x")
        if note.get("xref", "paper") != "paper" or not isinstance(text, str) or "<br>" in text:
            continue
        over = [end - start for start, end in spans if isinstance(x, int | float) and start <= x <= end]
        font = float(note.get("font", {}).get("size") or size)
        chars = int(min(over, default=1.0) * plot_width / (font * _CHAR))
        plain = re.sub(r"<[^>]+>", "", text)
        if chars >= 8 and len(plain) > chars and text == plain:
            note["text"] = style.wrap(text, chars)


def _fit_y_titles(axes: dict[str, dict[str, Any]], size: float, plot_px: float) -> None:
    """A y title longer than its panel is tall runs into the panels above and below: it loses its
    words in brackets ("loss (log scale)" -> "loss"; the axis' ticks say it), or, still too long, goes."""
    for key, axis in axes.items():
        text = _title(axis)
        if key[0] != "y" or not text:
            continue
        tall = _span(axis.get("domain")) * plot_px
        title = axis["title"] if isinstance(axis.get("title"), dict) else {"text": text}
        font = float(title.get("font", {}).get("size") or size)
        most = tall / (font * _CHAR * 1.2)  # characters of vertical text, with room either end
        if style.shown_length(text) <= most:
            continue
        short = re.sub(r"\s*\([^)]*\)\s*$", "", text).strip()
        axis["title"] = {**title, "text": short if short and style.shown_length(short) <= most else ""}


def _key(value: Any) -> Any:
    """A comparable form of an axis' range or tick values: numbers rounded, categories as they are."""
    if not isinstance(value, list | tuple):
        return value
    return tuple(round(float(v), 9) if isinstance(v, int | float) else str(v) for v in value)
