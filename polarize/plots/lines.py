"""Curves and panels, the vocabulary every builder draws with.

``Line`` is one curve, ``Panel`` a subplot of curves; ``token_lines`` makes one
line per token in the tokens' colours (the dashboard, the comparison pages and
the paper all draw tokens through it); ``line_trace`` turns a line into a
Plotly trace on given axes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from polarize.plots import style
from polarize.plots.numbers import rounded

__all__ = ["OTHER_TOKENS", "Line", "Panel", "find_trace", "line_trace", "token_lines", "token_width",
           "trace_index"]

OTHER_TOKENS = "other tokens"
"""The legend's one entry for the grey lines of the tokens past the palette's colours (``token_lines``)."""


@dataclass(frozen=True, eq=False)
class Line:
    """One curve of a panel.

    Attributes
    ----------
    x, y : ndarray, shape (K,)
        Points; those that a log axis cannot show, and non-finite ones, are left out.
    name : str
    color : str
        The palette's ink when empty.
    width : float
    dash : str
    moving : bool
        Whether a marker rides on it in the animation.
    legend : bool
    hover : str
        Plotly hover template; ``"NAME: y at x"`` when empty.
    key : str
        Its legend entry's name when not ``name``: lines with one key are one entry (the grey lines
        of the tokens past the palette's colours: "other tokens").
    """

    x: np.ndarray
    y: np.ndarray
    name: str
    color: str = ""
    width: float = 2.5
    dash: str = "solid"
    moving: bool = True
    legend: bool = False
    hover: str = ""
    key: str = ""


@dataclass(frozen=True, eq=False)
class Panel:
    """One subplot: a title, its curves and its axes.

    Attributes
    ----------
    title : str
    lines : tuple of Line
    y_title, x_title : str
    log_x, log_y : bool
    y_floor : (float, float) or None
        Values the y range must include (linear axes).
    note : str
        Shown in red in the panel (e.g. why a run stopped).
    y_range : (float, float) or None
        A fixed y range (log10 of the ends on a log axis) instead of one fitted to the curves.
    markers : bool
        Draw the curves with markers at their points (few points, e.g. one per run).
    span : int
        Number of grid columns the panel spans.
    thin : bool
        Draw each long curve through fewer of its points, within a fraction of a pixel of all
        (``numbers.thinned``): for panels of long curves, most of them level, sent again at each change
        (the comparison pages'). The frames' markers still ride every point.
    """

    title: str
    lines: tuple[Line, ...]
    y_title: str = ""
    x_title: str = "time t"
    log_x: bool = True
    log_y: bool = False
    y_floor: tuple[float, float] | None = None
    note: str = ""
    y_range: tuple[float, float] | None = None
    markers: bool = False
    span: int = 1
    thin: bool = False


def token_width(n: int) -> float:
    """Line width for ``n`` token curves in one panel: thinner as they crowd."""
    return 2.0 if n <= 20 else 1.2


def token_lines(t: np.ndarray, series: np.ndarray, *, prefix: str = "token", dash: str = "solid",
                width: float | None = None, moving: bool = True, legend: bool = False,
                top: Sequence[int] | None = None) -> tuple[Line, ...]:
    """One line per token (column of ``series``), in the tokens' colours.

    With more tokens than the palette has colours, only the leading tokens are
    coloured, each in the legend; the others are thin light-grey lines, one entry
    ("other tokens").

    Parameters
    ----------
    t : ndarray, shape (K,)
    series : ndarray, shape (K, n)
    prefix : str
        Line ``i`` is named ``"{prefix} {i}"``.
    dash : str
    width : float, optional
        ``token_width(n)`` by default.
    moving, legend : bool
        As ``Line``.
    top : sequence of int, optional
        Tokens in order of importance (``style.top_tokens``); by default ranked by
        the last finite row of ``series``. Pass one order to every panel of a figure.

    Returns
    -------
    tuple of Line, length n
    """
    series = np.asarray(series, dtype=float)
    n = series.shape[1]
    if top is None:
        finite = np.flatnonzero(np.all(np.isfinite(series), axis=1))
        top = style.top_tokens(series[finite[-1]] if len(finite) else np.zeros(n))
    colors = style.token_colors(n, top)
    w = token_width(n) if width is None else width
    rest = style.PALETTE.rest
    return tuple(Line(x=t, y=series[:, i], name=f"{prefix} {i}", color=colors[i], dash=dash,
                      width=min(w, 1.0) if colors[i] == rest else w, moving=moving, legend=legend,
                      key=OTHER_TOKENS if colors[i] == rest else "") for i in range(n))


def line_trace(line: Line, xaxis: str = "x", yaxis: str = "y", *, mode: str = "lines",
               **extra: Any) -> dict[str, Any]:
    """A Plotly scatter trace (as a dict) of ``line`` on the given axes, numbers rounded.

    ``extra`` entries (``uid``, ``showlegend``, ``legendgroup``...) are added as they are.
    """
    hover = line.hover or f"{line.name}: %{{y:.3g}} at %{{x:.3g}}<extra></extra>"
    trace = dict(type="scatter", x=rounded(line.x), y=rounded(line.y), mode=mode, name=line.name,
                 line=dict(color=line.color or style.PALETTE.ink, width=line.width, dash=line.dash),
                 hovertemplate=hover, xaxis=xaxis, yaxis=yaxis)
    return trace | extra


def find_trace(figure: dict[str, Any], uid: str) -> dict[str, Any]:
    """The one trace of ``figure`` (a figure dict) whose ``uid`` is ``uid``.

    Raises
    ------
    KeyError
        When no trace, or more than one, has that ``uid``.
    """
    found = [trace for trace in figure["data"] if trace.get("uid") == uid]
    if len(found) != 1:
        raise KeyError(f"{len(found)} traces with uid {uid!r}")
    return found[0]


def trace_index(figure: dict[str, Any], uid: str) -> int:
    """The position in ``figure["data"]`` of the trace whose ``uid`` is ``uid`` (for frames' ``traces``)."""
    return next(i for i, trace in enumerate(figure["data"]) if trace.get("uid") == uid)

