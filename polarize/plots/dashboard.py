"""Plotly figures of a simulated run: the animated dashboard and small static figures.

Everything here is pure Python on top of plotly (no Streamlit), so that the
figures can be tested, exported as standalone HTML and shown by any front end.

The dashboard is one figure with five panels that move together, driven by
plotly.js frames (play, pause, a time slider and three speeds), so that the
animation plays in the browser without a round trip to Python:

1. the scores ``s(t)`` on the simplex (a segment for ``n = 2``, a triangle for
   ``n = 3``, the ``n`` vertices of a regular polygon for ``n > 3``), with a
   comet tail and the current point;
2. each score ``s_i(t)`` against log time;
3. the entropy ``H(s(t))`` with the uniform value ``log n`` marked;
4. the repulsion panel: each token as a point (fitness ``u_i``, score ``s_i``),
   and for the logistic loss also its value projection ``p_i``;
5. the loss on log-log axes.

Frames are spaced evenly in log time and carry only the traces that move; every
number is rounded to a few significant digits, which keeps the figure small
(well under 2 MB for ``n = 64``). Axis ranges are fixed for the whole animation.
"""

from __future__ import annotations

import colorsys
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from polarize.diagnostics import Result
from polarize.normalizers import NORMALIZERS
from polarize.science import format_time, simplex_shares

__all__ = [
    "DIGITS",
    "FONT_SIZE",
    "FRAMES",
    "PANELS",
    "SPEEDS",
    "DashboardTraces",
    "animation_controls",
    "comparison_figure",
    "dashboard",
    "frame_indices",
    "project_to_polygon",
    "round_significant",
    "scores_figure",
    "simplex_vertices",
    "token_colors",
]

FRAMES = 80
"""Default number of animation frames (fewer when the run saved fewer times)."""
DIGITS = 5
"""Significant digits kept for every number sent to the browser."""
FONT_SIZE = 17
"""Base font size: big enough to read from the back of a lecture hall."""
TAIL = 10
"""Length of the comet tail, in frames."""
SPEEDS: dict[str, int] = {"slow": 180, "normal": 80, "fast": 25}
"""Milliseconds per frame for the three speed buttons."""

PANELS: dict[str, str] = {
    "simplex": "Scores on the simplex",
    "scores": "Scores s<sub>i</sub>(t)",
    "entropy": "Entropy H(s(t))",
    "repulsion": "Repulsion: fitness vs score",
    "loss": "Loss",
}
"""Panel key -> title, in the order the panels are laid out."""

_PALETTE = (
    "#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD",
    "#8C564B", "#E377C2", "#17BECF", "#BCBD22", "#393B79",
)
"""Saturated qualitative colours (matplotlib's tab10, its grey swapped for indigo) that stay
distinct on a washed-out projector and apart from the grey of the static guides."""
_INK = "#222831"
_GREY = "#9AA0A6"
_LIGHT = "#D5D8DC"


# ---- small helpers -------------------------------------------------------------------


def token_colors(n: int) -> list[str]:
    """One colour per token, the same in every panel.

    Parameters
    ----------
    n : int
        Number of tokens.

    Returns
    -------
    list of str, length n
        Ten saturated qualitative colours for ``n <= 10``; otherwise ``n`` hues
        spaced evenly around the colour wheel (as ``#rrggbb``).
    """
    if n <= len(_PALETTE):
        return list(_PALETTE[:n])
    out = []
    for i in range(n):
        r, g, b = colorsys.hls_to_rgb(i / n, 0.45, 0.75)
        out.append(f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}")
    return out


def round_significant(x: Any, digits: int = DIGITS) -> np.ndarray:
    """Round to ``digits`` significant digits, so that the JSON of each number is short.

    Parameters
    ----------
    x : array_like, any shape
    digits : int

    Returns
    -------
    ndarray, same shape as ``x``
        Each finite non-zero entry replaced by the double nearest to its rounded
        decimal value (whose shortest repr has at most ``digits`` digits);
        zeros and non-finite entries unchanged.
    """
    x = np.array(x, dtype=float)
    out = x.copy()
    mask = np.isfinite(x) & (x != 0)
    if not np.any(mask):
        return out
    v = x[mask]
    k = digits - 1 - np.floor(np.log10(np.abs(v))).astype(int)
    res = np.empty_like(v)
    up = k >= 0
    scale = 10.0 ** k[up]
    res[up] = np.rint(v[up] * scale) / scale
    scale = 10.0 ** (-k[~up])
    res[~up] = np.rint(v[~up] / scale) * scale
    out[mask] = res
    return out


def _list(x: Any, digits: int = DIGITS) -> list:
    """Rounded values as a (nested) list of Python floats, ready for JSON."""
    return round_significant(x, digits).tolist()




def simplex_vertices(n: int) -> np.ndarray:
    """Where the vertices of the simplex are drawn in the plane.

    Parameters
    ----------
    n : int
        Number of tokens (at least 2).

    Returns
    -------
    ndarray, shape (n, 2)
        For ``n = 2`` the ends of a segment, ``(-1, 0)`` and ``(1, 0)``; for
        ``n >= 3`` the corners of a regular ``n``-gon on the unit circle, the
        first at the top, going anticlockwise (``n = 3``: a triangle).
    """
    if n < 2:
        raise ValueError(f"need at least 2 tokens, got {n}")
    if n == 2:
        return np.array([[-1.0, 0.0], [1.0, 0.0]])
    angle = np.pi / 2 + 2 * np.pi * np.arange(n) / n
    return np.column_stack([np.cos(angle), np.sin(angle)])




def project_to_polygon(s: np.ndarray) -> np.ndarray:
    """The plane position ``sum_i q_i * vertex_i`` of scores, with ``q = simplex_shares(s)``.

    Parameters
    ----------
    s : ndarray, shape (K, n) or (n,)

    Returns
    -------
    ndarray, shape (K, 2) or (2,)
        A vertex for a one-hot score, the centre for uniform scores (``n >= 3``).
    """
    s = np.asarray(s, dtype=float)
    return simplex_shares(s) @ simplex_vertices(s.shape[-1])


def frame_indices(t: np.ndarray, count: int = FRAMES) -> np.ndarray:
    """Indices of the saved times shown as frames, spaced evenly in log time.

    The engine saves times on a log-spaced grid (rounded to whole steps of
    ``lr`` at the start), so every ``m``-th saved time, counted back from the
    last, is evenly spaced in log time; ``m`` is chosen to give about ``count``
    frames. The first positive time is always kept, as the starting frame.

    Parameters
    ----------
    t : ndarray, shape (K,)
        Saved times, increasing, ``t[0] = 0``.
    count : int
        Wanted number of frames.

    Returns
    -------
    ndarray of int, shape (F,)
        Increasing indices into ``t`` of positive times; ``F`` is within a factor
        of about 1.5 of ``count`` (or all of them when fewer are saved);
        ``[0]`` when no time is positive.
    """
    t = np.asarray(t, dtype=float)
    positive = np.flatnonzero(t > 0)
    if len(positive) == 0:
        return np.array([0])
    every = max(1, round(len(positive) / max(count, 1)))
    picked = positive[::-1][::every][::-1]
    if picked[0] != positive[0]:
        picked = np.concatenate([positive[:1], picked])
    return picked


def _span(values: np.ndarray, *, pad: float = 0.06, floor: tuple[float, float] | None = None) -> list[float]:
    """A fixed axis range covering ``values`` (and ``floor``), padded on both sides."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    lo, hi = (float(v.min()), float(v.max())) if v.size else (0.0, 1.0)
    if floor is not None:
        lo, hi = min(lo, floor[0]), max(hi, floor[1])
    if hi - lo < 1e-12:
        lo, hi = lo - 0.5, hi + 0.5
    width = hi - lo
    return [float(round_significant(lo - pad * width)), float(round_significant(hi + pad * width))]


def _log_span(values: np.ndarray, pad: float = 0.04) -> list[float] | None:
    """A log10 axis range covering the positive ``values``; None when there are none."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if not v.size:
        return None
    lo, hi = math.log10(v.min()), math.log10(v.max())
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    width = hi - lo
    return [round(lo - pad * width, 4), round(hi + pad * width, 4)]


def _decade_ticks(span: Sequence[float] | None, most: int = 4) -> dict[str, Any]:
    """Tick spacing of a log axis: whole decades, about ``most`` labels at most (auto below 3 decades)."""
    if not span or span[1] - span[0] < 3:
        return {}
    return {"tick0": 0, "dtick": max(1, round((span[1] - span[0]) / most))}


# ---- the dashboard -------------------------------------------------------------------


@dataclass(frozen=True)
class DashboardTraces:
    """Positions in ``figure.data`` of the traces that the frames move.

    Attributes
    ----------
    tail, point, score_markers, entropy_marker, repulsion, mean, loss_marker : int
    fitness : int or None
        The open fitness markers (logistic loss only, where ``repulsion`` shows ``p``).
    """

    tail: int
    point: int
    score_markers: int
    entropy_marker: int
    repulsion: int
    fitness: int | None
    mean: int
    loss_marker: int

    @property
    def animated(self) -> list[int]:
        """Indices of all the moving traces, in the order each frame lists them."""
        out = [self.tail, self.point, self.score_markers, self.entropy_marker, self.repulsion]
        if self.fitness is not None:
            out.append(self.fitness)
        return [*out, self.mean, self.loss_marker]


def dashboard(result: Result, *, frames: int = FRAMES, height: int = 780) -> go.Figure:
    """The animated five-panel dashboard of one run.

    Parameters
    ----------
    result : Result
        A simulated run (``K`` saved times, ``n`` tokens); a run that stopped
        early is shown up to where it stopped.
    frames : int
        Wanted number of animation frames, spaced evenly in log time.
    height : int
        Figure height in pixels (the width follows the page).

    Returns
    -------
    plotly.graph_objects.Figure
        Static traces (polygon, full path, curves) plus the moving ones listed by
        ``figure.layout.meta["animated"]`` (see ``DashboardTraces``); one frame
        per shown time, named by its index into ``result.t``; play, pause and
        speed buttons and a time slider. Its ``layout.meta`` also records
        ``n``, ``frame_times`` and the panel axes.
    """
    t = np.asarray(result.t, dtype=float)
    s = np.asarray(result.s, dtype=float)
    n = s.shape[1]
    logistic = result.p is not None
    on_simplex = NORMALIZERS[result.experiment.normalizer].on_simplex
    colors = token_colors(n)
    shown = frame_indices(t, frames)
    positive = t > 0
    # Times on log axes: the saved times after 0 (a lone t = 0 is drawn at t = 1).
    tx = t[positive] if np.any(positive) else np.array([1.0])
    sx = s[positive] if np.any(positive) else s[:1]

    fig = make_subplots(
        rows=2, cols=3,
        specs=[[{"rowspan": 2}, {}, {}], [None, {}, {}]],
        column_widths=[0.34, 0.33, 0.33],
        horizontal_spacing=0.075, vertical_spacing=0.2,
        subplot_titles=list(PANELS.values()),
    )
    data: list[dict[str, Any]] = []

    # -- panel 1: the simplex ----------------------------------------------------------
    vertices = simplex_vertices(n)
    xy = project_to_polygon(s)
    outline = vertices if n == 2 else np.vstack([vertices, vertices[:1]])
    data.append(dict(type="scatter", x=_list(outline[:, 0]), y=_list(outline[:, 1]), mode="lines",
                     line=dict(color=_GREY, width=2), hoverinfo="skip", name="simplex",
                     xaxis="x", yaxis="y"))
    labels = [str(i) for i in range(n)] if n <= 24 else [""] * n
    data.append(dict(type="scatter", x=_list(vertices[:, 0]), y=_list(vertices[:, 1]),
                     mode="markers", marker=dict(color=colors, size=16 if n <= 12 else 9,
                                                 line=dict(color="white", width=1.5)),
                     customdata=list(range(n)), hovertemplate="vertex of token %{customdata}<extra></extra>",
                     name="vertices", xaxis="x", yaxis="y"))
    offset = 1.15 if n > 2 else 1.0
    label_y = vertices[:, 1] * offset - (0.13 if n == 2 else 0.0)
    data.append(dict(type="scatter", x=_list(vertices[:, 0] * offset), y=_list(label_y), mode="text",
                     text=labels, textfont=dict(size=FONT_SIZE - 1 if n <= 12 else 12, color=colors),
                     hoverinfo="skip", name="token labels", xaxis="x", yaxis="y"))
    data.append(dict(type="scatter", x=[0.0], y=[0.0], mode="markers",
                     marker=dict(symbol="x-thin", size=12, line=dict(color=_GREY, width=2)),
                     hovertemplate="uniform scores<extra></extra>", name="uniform", xaxis="x", yaxis="y"))
    data.append(dict(type="scatter", x=_list(xy[:, 0]), y=_list(xy[:, 1]), mode="lines",
                     line=dict(color=_LIGHT, width=2, dash="dot"), hoverinfo="skip", name="whole path",
                     xaxis="x", yaxis="y"))

    # -- panel 2: s_i(t) --------------------------------------------------------------
    width = 3 if n <= 10 else 2 if n <= 24 else 1.3
    tx_list = _list(tx)
    for i in range(n):
        data.append(dict(type="scatter", x=tx_list, y=_list(sx[:, i]), mode="lines",
                         line=dict(color=colors[i], width=width), name=f"token {i}",
                         hovertemplate=f"token {i}: s = %{{y:.3g}} at t = %{{x:.3g}}<extra></extra>",
                         xaxis="x2", yaxis="y2"))

    # -- panel 3: entropy ----------------------------------------------------------------
    h = np.asarray(result.entropy, dtype=float)
    hx = h[positive] if np.any(positive) else h[:1]
    log_n = math.log(n)
    data.append(dict(type="scatter", x=[tx_list[0], tx_list[-1]], y=[log_n, log_n], mode="lines",
                     line=dict(color=_GREY, width=2, dash="dash"), name="log n",
                     hovertemplate=f"log n = {log_n:.3g} (uniform scores)<extra></extra>",
                     xaxis="x3", yaxis="y3"))
    data.append(dict(type="scatter", x=tx_list, y=_list(hx), mode="lines", line=dict(color=_INK, width=3),
                     name="entropy", hovertemplate="H = %{y:.3g} at t = %{x:.3g}<extra></extra>",
                     xaxis="x3", yaxis="y3"))

    # -- panel 5 (static part): loss -----------------------------------------------------
    loss = np.asarray(result.loss, dtype=float)
    lx = loss[positive] if np.any(positive) else loss[:1]
    loss_log = bool(np.all(lx > 0))
    data.append(dict(type="scatter", x=tx_list, y=_list(lx), mode="lines", line=dict(color=_INK, width=3),
                     name="loss", hovertemplate="loss = %{y:.3g} at t = %{x:.3g}<extra></extra>",
                     xaxis="x5", yaxis="y5"))

    # -- moving traces ---------------------------------------------------------------------
    first = int(shown[0])
    s_range = _span(s, floor=(0.0, 1.0), pad=0.04)
    main = np.asarray(result.p if logistic else result.u, dtype=float)
    fitness = np.asarray(result.u, dtype=float)

    def moving(k: int) -> list[dict[str, Any]]:
        """The moving traces at saved index ``k`` (and the frames before it, for the tail)."""
        j = int(np.searchsorted(shown, k))
        tail_idx = shown[max(0, j - TAIL):j + 1]
        tk = float(t[k]) if t[k] > 0 else float(tx[0])
        lead = int(np.argmax(np.abs(s[k])))
        sizes = np.linspace(4, 11, len(tail_idx)).round(1).tolist()
        out = [
            dict(x=_list(xy[tail_idx, 0]), y=_list(xy[tail_idx, 1]),
                 marker=dict(size=sizes, color=_INK, opacity=0.55)),
            dict(x=_list(xy[k:k + 1, 0]), y=_list(xy[k:k + 1, 1]),
                 marker=dict(color=colors[lead], size=22, line=dict(color=_INK, width=2.5))),
            dict(x=[tk] * n, y=_list(s[k])),
            dict(x=[tk], y=_list(h[k:k + 1])),
            dict(x=_list(main[k]), y=_list(s[k])),
        ]
        if logistic:
            out.append(dict(x=_list(fitness[k]), y=_list(s[k])))
        mean = float(round_significant(np.dot(simplex_shares(s[k]) if not on_simplex else s[k], main[k])))
        out.append(dict(x=[mean, mean], y=s_range))
        out.append(dict(x=[tk], y=_list(loss[k:k + 1])))
        return out

    start = moving(first)
    styles: list[dict[str, Any]] = [
        dict(mode="lines+markers", line=dict(color=_INK, width=2), name="comet tail", hoverinfo="skip",
             xaxis="x", yaxis="y"),
        dict(mode="markers", name="s(t) now", hovertemplate="s(t) now<extra></extra>",
             xaxis="x", yaxis="y"),
        dict(mode="markers", marker=dict(color=colors, size=12 if n <= 12 else 7,
                                         line=dict(color="white", width=1)),
             customdata=list(range(n)), name="s now",
             hovertemplate="token %{customdata}: s = %{y:.3g}<extra></extra>", xaxis="x2", yaxis="y2"),
        dict(mode="markers", marker=dict(color=_INK, size=14), name="H now",
             hovertemplate="H = %{y:.3g}<extra></extra>", xaxis="x3", yaxis="y3"),
        dict(mode="markers", marker=dict(color=colors, size=17 if n <= 12 else 10,
                                         symbol="diamond" if logistic else "circle",
                                         line=dict(color=_INK, width=1)),
             customdata=list(range(n)),
             name="p<sub>i</sub> = v<sub>i</sub>·β*" if logistic else "u<sub>i</sub>",
             hovertemplate=("token %{customdata}: p = %{x:.3g}, s = %{y:.3g}<extra></extra>" if logistic
                            else "token %{customdata}: u = %{x:.3g}, s = %{y:.3g}<extra></extra>"),
             xaxis="x4", yaxis="y4", legend="legend2", showlegend=True),
    ]
    if logistic:
        styles.append(dict(mode="markers", marker=dict(color="rgba(0,0,0,0)", size=12 if n <= 12 else 8,
                                                       line=dict(color=colors, width=2.5)),
                           customdata=list(range(n)), name="u<sub>i</sub> = c p<sub>i</sub>",
                           hovertemplate="token %{customdata}: u = %{x:.3g}<extra></extra>",
                           xaxis="x4", yaxis="y4", legend="legend2", showlegend=True))
    styles += [
        dict(mode="lines", line=dict(color=_INK, width=2, dash="dash"),
             name="mean s·p" if logistic else "mean s·u", hoverinfo="skip",
             xaxis="x4", yaxis="y4", legend="legend2", showlegend=True),
        dict(mode="markers", marker=dict(color=_INK, size=14), name="loss now",
             hovertemplate="loss = %{y:.3g}<extra></extra>", xaxis="x5", yaxis="y5"),
    ]
    for trace in data:
        trace["showlegend"] = False
    base = len(data)
    for style, state in zip(styles, start, strict=True):
        style.setdefault("showlegend", False)
        merged = {**style, **state, "type": "scatter"}
        if "marker" in style and "marker" in state:
            merged["marker"] = {**style["marker"], **state["marker"]}
        data.append(merged)
    traces = DashboardTraces(
        tail=base, point=base + 1, score_markers=base + 2, entropy_marker=base + 3, repulsion=base + 4,
        fitness=base + 5 if logistic else None, mean=base + (6 if logistic else 5),
        loss_marker=base + (7 if logistic else 6),
    )
    animated = traces.animated

    frame_list = []
    for k in shown:
        states = moving(int(k))
        frame_list.append(dict(name=str(int(k)), data=[dict(type="scatter", **st) for st in states],
                               traces=animated))

    # -- layout --------------------------------------------------------------------------
    rep_values = np.concatenate([main[shown].ravel(), fitness[shown].ravel() if logistic else []])
    layout = fig.layout.to_plotly_json()
    for ann in layout.get("annotations", []):
        ann["font"] = dict(size=FONT_SIZE + 2, color=_INK)
    axis_font = dict(size=FONT_SIZE - 2)
    title_font = dict(size=FONT_SIZE)
    grid = dict(showgrid=True, gridcolor="#ECEFF1", zeroline=False, tickfont=axis_font,
                title=dict(font=title_font), linecolor="#B0B7BF", showline=True, mirror=False)
    t_log = _log_span(tx) or [-1, 1]
    reach = 1.3
    layout["xaxis"].update(range=[-reach, reach], visible=False, fixedrange=True)
    layout["yaxis"].update(range=[-reach * (0.45 if n == 2 else 1), reach * (0.45 if n == 2 else 1)],
                           visible=False, scaleanchor="x", scaleratio=1, fixedrange=True)
    time_title = "time t (log scale)"
    decades = _decade_ticks(t_log)
    layout["xaxis2"].update(grid, type="log", range=t_log, title=dict(text=time_title, font=title_font),
                            exponentformat="power", **decades)
    layout["yaxis2"].update(grid, range=s_range, title=dict(text="score s<sub>i</sub>", font=title_font))
    layout["xaxis3"].update(grid, type="log", range=t_log, title=dict(text=time_title, font=title_font),
                            exponentformat="power", **decades)
    layout["yaxis3"].update(grid, range=_span(h, floor=(0.0, log_n * 1.08), pad=0.05),
                            title=dict(text="entropy (nats)", font=title_font))
    rep_title = ("value projection p<sub>i</sub> / fitness u<sub>i</sub>" if logistic
                 else "fitness u<sub>i</sub>")
    layout["xaxis4"].update(grid, range=_span(rep_values, pad=0.08),
                            title=dict(text=rep_title, font=title_font))
    layout["yaxis4"].update(grid, range=s_range, title=dict(text="score s<sub>i</sub>", font=title_font))
    layout["xaxis5"].update(grid, type="log", range=t_log, title=dict(text=time_title, font=title_font),
                            exponentformat="power", **decades)
    if loss_log:
        loss_span = _log_span(loss)
        loss_ticks = _decade_ticks(loss_span)
        layout["yaxis5"].update(grid, type="log", range=loss_span, exponentformat="power", **loss_ticks,
                                title=dict(text="loss (log scale)", font=title_font))
    else:
        layout["yaxis5"].update(grid, range=_span(loss), title=dict(text="loss", font=title_font))
    layout["annotations"].append(dict(
        text=f"log n = {log_n:.3g} (uniform)", x=t_log[1], y=log_n, xref="x3", yref="y3", xanchor="right",
        yanchor="bottom", showarrow=False, font=dict(size=FONT_SIZE - 3, color="#5F6368"),
        bgcolor="rgba(255,255,255,0.85)", xshift=-4, yshift=1))
    if not on_simplex:
        layout["annotations"].append(dict(
            text="(shares |s<sub>i</sub>| / Σ|s<sub>j</sub>|)", x=0.0, y=-reach * 0.98, xref="x", yref="y",
            showarrow=False, font=dict(size=FONT_SIZE - 3, color="#5F6368")))
    layout.update(
        height=height,
        # No named template: plotly.js cannot resolve names, and unvalidated figures keep them as names.
        font=dict(size=FONT_SIZE, color=_INK, family="Source Sans Pro, Arial, sans-serif"),
        paper_bgcolor="white", plot_bgcolor="white",
        margin=dict(l=20, r=20, t=50, b=120),
        showlegend=True,
        legend2=dict(x=layout["xaxis4"]["domain"][1] - 0.005, y=sum(layout["yaxis4"]["domain"]) / 2,
                     xanchor="right", yanchor="middle", bgcolor="rgba(255,255,255,0.85)",
                     font=dict(size=FONT_SIZE - 3), itemclick=False, itemdoubleclick=False),
        hovermode="closest",
        hoverlabel=dict(font=dict(size=FONT_SIZE - 1)),
        **animation_controls([str(int(k)) for k in shown], [format_time(float(t[k])) for k in shown]),
        meta=dict(n=n, animated=animated, frame_times=_list(t[shown]),
                  panels=dict(simplex=["x", "y"], scores=["x2", "y2"], entropy=["x3", "y3"],
                              repulsion=["x4", "y4"], loss=["x5", "y5"])),
    )
    # Validation is done once by the tests (``go.Figure(fig.to_dict())``), not on every run:
    # a few hundred frame traces would otherwise cost more than the simulation itself.
    return go.Figure(dict(data=data, layout=layout, frames=frame_list), _validate=False)


def animation_controls(names: Sequence[str], labels: Sequence[str]) -> dict[str, Any]:
    """Play, pause and speed buttons and a time slider for an animated figure (layout entries).

    Parameters
    ----------
    names : sequence of str, length F
        The frames' names, in order.
    labels : sequence of str, length F
        The time shown by the slider at each frame.

    Returns
    -------
    dict
        ``updatemenus`` (play/pause, then the speeds) and ``sliders`` (one), to
        pass to ``layout.update``; they sit below the plot (leave a bottom margin
        of about 120 px).
    """

    def play(ms: int) -> list[Any]:
        return [None, dict(frame=dict(duration=ms, redraw=False), fromcurrent=True, mode="immediate",
                           transition=dict(duration=0))]

    pause = [[None], dict(frame=dict(duration=0, redraw=False), mode="immediate",
                          transition=dict(duration=0))]
    return dict(
        updatemenus=[
            dict(type="buttons", direction="right", showactive=False, x=0.0, y=-0.06, xanchor="left",
                 yanchor="top", pad=dict(r=10, t=10), font=dict(size=FONT_SIZE - 1), bgcolor="#F1F3F4",
                 buttons=[dict(label="▶ Play", method="animate", args=play(SPEEDS["normal"])),
                          dict(label="❚❚ Pause", method="animate", args=pause)]),
            dict(type="buttons", direction="right", showactive=True, active=1, x=0.0, y=-0.135,
                 xanchor="left", yanchor="top", pad=dict(r=10, t=4), font=dict(size=FONT_SIZE - 3),
                 bgcolor="#F1F3F4",
                 buttons=[dict(label=f"{name} \u25b6", method="animate", args=play(ms))
                          for name, ms in SPEEDS.items()]),
        ],
        sliders=[dict(
            active=0, x=0.24, len=0.76, y=-0.05, xanchor="left", yanchor="top", pad=dict(t=10, b=0),
            currentvalue=dict(prefix="t = ", font=dict(size=FONT_SIZE + 1, color=_INK), xanchor="left"),
            font=dict(size=1, color="rgba(0,0,0,0)"), ticklen=0, minorticklen=0, tickcolor="rgba(0,0,0,0)",
            transition=dict(duration=0), bgcolor="#E8EAED", activebgcolor="#5F6368",
            steps=[dict(method="animate", label=label,
                        args=[[name], dict(mode="immediate", frame=dict(duration=0, redraw=False),
                                           transition=dict(duration=0))])
                   for name, label in zip(names, labels, strict=True)],
        )],
    )


# ---- small static figures for the maths page -----------------------------------------


def _static_layout(height: int, x_title: str, y_title: str, *, log_x: bool = True,
                   log_y: bool = False) -> dict[str, Any]:
    axis = dict(showgrid=True, gridcolor="#ECEFF1", zeroline=False, showline=True, linecolor="#B0B7BF",
                tickfont=dict(size=FONT_SIZE - 3))
    return dict(
        height=height, template="plotly_white", margin=dict(l=10, r=10, t=30, b=10),
        font=dict(size=FONT_SIZE - 2, color=_INK), paper_bgcolor="white", plot_bgcolor="white",
        xaxis=dict(axis, type="log" if log_x else "linear", title=x_title, exponentformat="power"),
        yaxis=dict(axis, type="log" if log_y else "linear", title=y_title, exponentformat="power"),
        legend=dict(font=dict(size=FONT_SIZE - 4)),
    )


def scores_figure(result: Result, *, height: int = 320, log_y: bool = False) -> go.Figure:
    """Each score ``s_i(t)`` against log time (a static figure).

    Parameters
    ----------
    result : Result
        ``K`` saved times, ``n`` tokens.
    height : int
    log_y : bool
        Scores on a log axis too (the paper's log-log view), which shows the
        losers' slow ``1 / log^2 t`` decay.

    Returns
    -------
    plotly.graph_objects.Figure
        ``n`` line traces, coloured as in the dashboard.
    """
    t = np.asarray(result.t, dtype=float)
    keep = t > 0
    s = np.asarray(result.s, dtype=float)[keep]
    colors = token_colors(s.shape[1])
    fig = go.Figure(layout=_static_layout(height, "time t", "score s<sub>i</sub>", log_y=log_y))
    x = _list(t[keep])
    for i in range(s.shape[1]):
        fig.add_trace(go.Scatter(x=x, y=_list(s[:, i]), mode="lines", name=f"token {i}",
                                 line=dict(color=colors[i], width=2.5)))
    fig.update_layout(showlegend=s.shape[1] <= 10)
    _whole_decades(fig, t[keep], s if log_y else None)
    return fig


def _whole_decades(fig: go.Figure, x: np.ndarray, y: np.ndarray | None = None) -> None:
    """Label log axes at whole decades only (no 2 and 5 in between), at most about six labels."""
    for values, update in ((x, fig.update_xaxes), (y, fig.update_yaxes)):
        if values is None:
            continue
        span = _log_span(values, pad=0.0)
        if span is not None:
            update(**(_decade_ticks(span) or {"tick0": 0, "dtick": 1}))


def comparison_figure(results: Mapping[str, Result], quantity: str = "entropy", *, height: int = 320,
                      log_y: bool = False, reference: Sequence[float] | None = None) -> go.Figure:
    """One curve per labelled run of a per-time quantity, against log time.

    Parameters
    ----------
    results : mapping of str to Result
        Label -> run.
    quantity : str
        A ``(K,)`` attribute of ``Result``: ``"entropy"``, ``"one_minus_max"``, ``"loss"``, ...
    height : int
    log_y : bool
    reference : sequence of float, optional
        A horizontal dashed line at each value (e.g. ``log n`` for the entropy).

    Returns
    -------
    plotly.graph_objects.Figure
        One line trace per run, then one per reference value.
    """
    titles = {"entropy": "entropy H(s)", "one_minus_max": "1 \u2212 max s", "loss": "loss"}
    fig = go.Figure(layout=_static_layout(height, "time t", titles.get(quantity, quantity), log_y=log_y))
    palette = ("#4E79A7", "#E15759", "#59A14F", "#B07AA1", "#F28E2B", "#76B7B2")
    lo, hi = math.inf, 0.0
    for i, (label, result) in enumerate(results.items()):
        t = np.asarray(result.t, dtype=float)
        y = np.asarray(getattr(result, quantity), dtype=float)
        keep = (t > 0) & (y > 0) if log_y else t > 0
        if np.any(keep):
            lo, hi = min(lo, float(t[keep][0])), max(hi, float(t[keep][-1]))
        fig.add_trace(go.Scatter(x=_list(t[keep]), y=_list(y[keep]), mode="lines", name=label,
                                 line=dict(color=palette[i % len(palette)], width=3)))
    if math.isfinite(lo):
        _whole_decades(fig, np.array([lo, hi]))
    for value in reference or ():
        fig.add_trace(go.Scatter(x=[lo, hi], y=[value, value], mode="lines", name=f"{value:.3g}",
                                 line=dict(color=_GREY, width=2, dash="dash"), showlegend=False))
    return fig
