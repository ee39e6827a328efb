"""The dashboard's five panels, one builder each.

Every builder takes a ``RunFrames`` of the run (the arrays every panel needs,
computed once) and the names of its axes, and returns a ``PanelTraces``: its
static traces, its moving traces and their state at any saved time, its axes
and its annotations. Every trace carries a ``uid`` ``"PANEL-PART"`` (for
example ``"simplex-path"``, ``"scores-token3"``, ``"repulsion-fitness"``), by
which frames, tests and pages find it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from polarize.diagnostics import Result
from polarize.plots import style
from polarize.plots.animation import frame_indices
from polarize.plots.lines import line_trace, token_lines
from polarize.plots.numbers import log_span, round_significant, rounded, rounded_with_gaps, span
from polarize.plots.polygon import project_to_polygon, simplex_vertices
from polarize.plots.reveal import REVEAL
from polarize.science import simplex_shares

__all__ = [
    "TAIL",
    "PanelTraces",
    "RunFrames",
    "entropy_panel",
    "loss_panel",
    "moving_traces",
    "panel_axis",
    "repulsion_panel",
    "scores_panel",
    "simplex_panel",
]

TAIL = 10
"""Length of the comet tail, in frames."""
_REACH = 1.3
"""Half-width of the simplex panel, in units of the polygon's radius."""


@dataclass(frozen=True, eq=False)
class RunFrames:
    """What the panels need of one run, computed once.

    Attributes
    ----------
    result : Result
    t : ndarray, shape (K,)
    s : ndarray, shape (K, n)
    n : int
    colors : list of str, length n
    top : list of int, length n
        Tokens by decreasing final score: with more tokens than colours, the first are coloured.
    shown : ndarray of int, shape (F,)
        Saved indices shown as frames.
    positive : ndarray of bool, shape (K,)
        Saved times after 0, which log axes can show.
    tx : ndarray, shape (K',)
        Those times (a lone ``t = 0`` is drawn at ``t = 1``).
    logistic, on_simplex : bool
    s_range : [float, float]
        The score axis, shared by the scores and repulsion panels.
    s_rounded : ndarray, shape (K, n)
        ``s`` rounded for the browser once, so that frames only slice it.
    times : ndarray, shape (K,)
        Each saved time as a log axis shows it (``time``), rounded.
    dead : ndarray of bool, shape (K,)
        Saved times where every score is 0 (a dead ReLU run): no distribution, so no point on the
        simplex and no entropy; the panels draw gaps there.
    """

    result: Result
    t: np.ndarray
    s: np.ndarray
    n: int
    colors: list[str]
    top: list[int]
    shown: np.ndarray
    positive: np.ndarray
    tx: np.ndarray
    logistic: bool
    on_simplex: bool
    s_range: list[float]
    s_rounded: np.ndarray
    times: np.ndarray
    dead: np.ndarray

    @classmethod
    def of(cls, result: Result, frames: int) -> RunFrames:
        t = np.asarray(result.t, dtype=float)
        s = np.asarray(result.s, dtype=float)
        positive = t > 0
        top = style.top_tokens(s[-1])
        tx = t[positive] if np.any(positive) else np.array([1.0])
        return cls(result=result, t=t, s=s, n=s.shape[1], colors=style.token_colors(s.shape[1], top), top=top,
                   shown=frame_indices(t, frames), positive=positive, tx=tx,
                   logistic=result.p is not None,
                   on_simplex=result.experiment.sigma.on_simplex,
                   s_range=span(s, floor=(0.0, 1.0), pad=0.04), s_rounded=round_significant(s),
                   times=round_significant(np.where(positive, t, tx[0])), dead=~np.any(s != 0, axis=-1))

    def over_time(self, values: Any) -> np.ndarray:
        """``values`` (first axis K) at the times that log axes show."""
        v = np.asarray(values, dtype=float)
        return v[self.positive] if np.any(self.positive) else v[:1]

    def time(self, k: int) -> float:
        """The saved time ``k`` as a log axis shows it, rounded as the curves' times are."""
        return float(self.times[k])

    def time_axis(self) -> dict[str, Any]:
        """A log time axis over the run, whole decades."""
        t_log = log_span(self.tx) or [-1, 1]
        return dict(type="log", range=t_log, title=dict(text="time t (log scale)", font=style.font()),
                    **style.decade_ticks(t_log))


@dataclass(eq=False)
class PanelTraces:
    """One panel's part of the dashboard.

    Attributes
    ----------
    static : list of dict
        Traces that the frames leave alone.
    moving : list of dict
        Traces that the frames move, with their style and starting state.
    at : callable, int -> list of dict
        The state (``x``, ``y``, maybe ``marker``) of each moving trace at saved index ``k``.
    axes : dict
        ``"x"`` and ``"y"``: layout entries of the panel's two axes.
    annotations : list of dict
    """

    static: list[dict[str, Any]]
    moving: list[dict[str, Any]]
    at: Callable[[int], list[dict[str, Any]]]
    axes: dict[str, dict[str, Any]]
    annotations: list[dict[str, Any]] = field(default_factory=list)

    def frame(self, k: int) -> list[dict[str, Any]]:
        """The moving traces' states at saved index ``k``, each with its trace's ``type``.

        A frame's trace without a type is read as a scatter: a bar (or any other trace) must say what it is.
        """
        states = zip(self.moving, self.at(k), strict=True)
        return [{"type": trace["type"], **state} for trace, state in states]


def moving_traces(styles: list[dict[str, Any]], start: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Moving traces: each style with its starting state (markers merged, not replaced)."""
    out = []
    for s, state in zip(styles, start, strict=True):
        merged = {"type": "scatter", "showlegend": False, **s, **state}
        if "marker" in s and "marker" in state:
            merged["marker"] = {**s["marker"], **state["marker"]}
        out.append(merged)
    return out


def panel_axis(**entries: Any) -> dict[str, Any]:
    """A data axis of the dashboard in the common style."""
    title = entries.pop("title", None)
    out = style.axis_style(tick_delta=-2) | dict(mirror=False)
    if isinstance(title, str):
        title = dict(text=title, font=style.font())
    return out | entries | ({"title": title} if title else {})


def simplex_panel(view: RunFrames, xa: str, ya: str) -> PanelTraces:
    """Panel 1: the scores on the simplex, with the whole path, a comet tail and the current point.

    A segment for ``n = 2``, a triangle for ``n = 3``, the ``n`` vertices of a
    regular polygon beyond; scores off the simplex are shown by their shares. Where every score
    is 0 (a dead ReLU run) there are no shares: no point, and a gap in the path and the tail, not
    the centre that ``simplex_shares`` gives such a row (which reads as uniform scores).
    """
    n, colors, ink, grey = view.n, view.colors, style.PALETTE.ink, style.PALETTE.grey
    vertices = simplex_vertices(n)
    xy = np.where(view.dead[:, None], np.nan, project_to_polygon(view.s))
    outline = vertices if n == 2 else np.vstack([vertices, vertices[:1]])
    marker = 16 if n <= 12 else 9
    on = dict(xaxis=xa, yaxis=ya)
    static = [
        dict(type="scatter", uid="simplex-outline", name="simplex", x=rounded(outline[:, 0]),
             y=rounded(outline[:, 1]), mode="lines", line=dict(color=grey, width=2), hoverinfo="skip", **on),
        dict(type="scatter", uid="simplex-vertices", name="vertices", x=rounded(vertices[:, 0]),
             y=rounded(vertices[:, 1]), mode="markers",
             marker=dict(color=colors, size=marker,
                         line=dict(color=style.PALETTE.background, width=1.5)),
             customdata=list(range(n)), hovertemplate="vertex of token %{customdata}<extra></extra>", **on),
        # Each label beside its corner's marker, away from the centre: placed by plotly.js in pixels
        # past the (unseen) marker of the corner's size, it clears the marker at any size (in data
        # units, 1.15 times the corner, it sat on the markers of a phone's small simplex).
        dict(type="scatter", uid="simplex-labels", name="token labels", x=rounded(vertices[:, 0]),
             y=rounded(vertices[:, 1]), mode="markers+text", textposition=_outward(vertices, n),
             marker=dict(size=marker, opacity=0), text=[str(i) for i in range(n)] if n <= 24 else [""] * n,
             textfont=dict(size=style.FONT_SIZE - 1 if n <= 12 else 12, color=colors), hoverinfo="skip",
             meta={"key": True}, **on),
        dict(type="scatter", uid="simplex-uniform", name="uniform", x=[0.0], y=[0.0], mode="markers",
             marker=dict(symbol="x-thin", size=12, line=dict(color=grey, width=2)),
             hovertemplate="uniform scores<extra></extra>", **on),
        dict(type="scatter", uid="simplex-path", name="whole path", x=rounded_with_gaps(xy[:, 0]),
             y=rounded_with_gaps(xy[:, 1]), mode="lines",
             line=dict(color=style.PALETTE.light, width=2, dash="dot"), hoverinfo="skip",
             meta={REVEAL: "step"}, **on),
    ]
    styles = [
        dict(uid="simplex-tail", name="comet tail", mode="lines+markers", line=dict(color=ink, width=2),
             hoverinfo="skip", **on),
        dict(uid="simplex-now", name="s(t) now", mode="markers", hovertemplate="s(t) now<extra></extra>",
             **on),
    ]

    # Once for all frames, which slice it; None (a gap, and valid JSON) where the run is dead.
    xy_rounded = np.array([rounded_with_gaps(xy[:, 0]), rounded_with_gaps(xy[:, 1])], dtype=object).T
    sizes = [np.linspace(4, 11, length).round(1).tolist() for length in range(TAIL + 2)]

    def at(k: int) -> list[dict[str, Any]]:
        j = int(np.searchsorted(view.shown, k))
        tail = view.shown[max(0, j - TAIL):j + 1]
        lead = int(np.argmax(np.abs(view.s[k])))
        return [dict(x=xy_rounded[tail, 0].tolist(), y=xy_rounded[tail, 1].tolist(),
                     marker=dict(size=sizes[len(tail)], color=ink, opacity=0.55)),
                dict(x=xy_rounded[k:k + 1, 0].tolist(), y=xy_rounded[k:k + 1, 1].tolist(),
                     marker=dict(color=colors[lead], size=22, line=dict(color=ink, width=2.5)))]

    flat = 0.45 if n == 2 else 1.0  # a segment needs little height
    axes = dict(x=dict(range=[-_REACH, _REACH], visible=False, fixedrange=True),
                y=dict(range=[-_REACH * flat, _REACH * flat], visible=False, scaleanchor=xa, scaleratio=1,
                       fixedrange=True))
    notes = [] if view.on_simplex else [dict(
        text="(shares |s<sub>i</sub>| / Σ|s<sub>j</sub>|)", x=0.0, y=-_REACH * 0.98, xref=xa, yref=ya,
        showarrow=False, font=style.font(-3, style.PALETTE.muted))]
    return PanelTraces(static=static, moving=moving_traces(styles, at(int(view.shown[0]))), at=at, axes=axes,
                       annotations=notes)


def scores_panel(view: RunFrames, xa: str, ya: str) -> PanelTraces:
    """Panel 2: each score ``s_i(t)`` against log time, a marker on each at the current time."""
    n = view.n
    width = 3 if n <= 10 else 2 if n <= 24 else 1.3
    # No legend: the simplex's numbered corners, in the same colours, are the key.
    static = [line_trace(line, xa, ya, uid=f"scores-token{i}", showlegend=False, meta={REVEAL: "time"},
                         hovertemplate=f"token {i}: s = %{{y:.3g}} at t = %{{x:.3g}}<extra></extra>")
              for i, line in enumerate(token_lines(view.tx, view.over_time(view.s), width=width,
                                                   top=view.top))]
    styles = [dict(uid="scores-now", name="s now", mode="markers", customdata=list(range(n)),
                   marker=dict(color=view.colors, size=12 if n <= 12 else 7,
                               line=dict(color=style.PALETTE.background, width=1)),
                   hovertemplate="token %{customdata}: s = %{y:.3g}<extra></extra>", xaxis=xa, yaxis=ya)]

    def at(k: int) -> list[dict[str, Any]]:
        return [dict(x=[view.time(k)] * n, y=view.s_rounded[k].tolist())]

    axes = dict(x=panel_axis(**view.time_axis()),
                y=panel_axis(range=view.s_range, title="score s<sub>i</sub>"))
    return PanelTraces(static=static, moving=moving_traces(styles, at(int(view.shown[0]))), at=at, axes=axes)


def entropy_panel(view: RunFrames, xa: str, ya: str) -> PanelTraces:
    """Panel 3: the entropy ``H(s(t))``, with its uniform value ``log n`` marked.

    Where every score is 0 (a dead ReLU run) there is no distribution and so no entropy: the curve
    has a gap there (``Result.entropy`` is NaN there), not the 0 of a one-hot ``s``.
    """
    h = np.where(view.dead, np.nan, np.asarray(view.result.entropy, dtype=float))
    log_n = math.log(view.n)
    ink, ends = style.PALETTE.ink, [float(view.tx[0]), float(view.tx[-1])]
    static = [
        dict(type="scatter", uid="entropy-uniform", name="log n", x=rounded(ends), y=[log_n, log_n],
             mode="lines", line=dict(color=style.PALETTE.grey, width=2, dash="dash"),
             hovertemplate=f"log n = {log_n:.3g} (uniform scores)<extra></extra>", xaxis=xa, yaxis=ya),
        dict(type="scatter", uid="entropy-curve", name="entropy", x=rounded(view.tx),
             y=rounded_with_gaps(view.over_time(h)), mode="lines", line=dict(color=ink, width=3),
             meta={REVEAL: "time"},
             hovertemplate="H = %{y:.3g} at t = %{x:.3g}<extra></extra>", xaxis=xa, yaxis=ya),
    ]
    styles = [dict(uid="entropy-now", name="H now", mode="markers", marker=dict(color=ink, size=14),
                   hovertemplate="H = %{y:.3g}<extra></extra>", xaxis=xa, yaxis=ya)]

    h_rounded = rounded_with_gaps(h)

    def at(k: int) -> list[dict[str, Any]]:
        return [dict(x=[view.time(k)], y=h_rounded[k:k + 1])]

    t_axis = view.time_axis()
    axes = dict(x=panel_axis(**t_axis),
                y=panel_axis(range=span(h, floor=(0.0, log_n * 1.08), pad=0.05), title="entropy (nats)"))
    note = dict(text=f"log n = {log_n:.3g} (uniform)", x=t_axis["range"][1], y=log_n, xref=xa, yref=ya,
                xanchor="right", yanchor="bottom", showarrow=False, font=style.font(-3, style.PALETTE.muted),
                bgcolor=style.PALETTE.veil, xshift=-4, yshift=1)
    return PanelTraces(static=static, moving=moving_traces(styles, at(int(view.shown[0]))), at=at, axes=axes,
                       annotations=[note])


def repulsion_panel(view: RunFrames, xa: str, ya: str) -> PanelTraces:
    """Panel 4: each token as a point (fitness ``u_i`` or, for the logistic loss, ``p_i``; score ``s_i``).

    For the logistic loss the fitness ``u_i = c p_i`` rides along as open markers;
    a dashed line marks the mean ``s.p`` (or ``s.u``), the level that separates
    the tokens that grow from those that shrink.
    """
    n, ink, logistic = view.n, style.PALETTE.ink, view.logistic
    main = np.asarray(view.result.p if logistic else view.result.u, dtype=float)
    fitness = np.asarray(view.result.u, dtype=float)
    on = dict(xaxis=xa, yaxis=ya, legend="legend2", showlegend=True)
    symbol = "p" if logistic else "u"
    styles = [dict(uid="repulsion-main", mode="markers", customdata=list(range(n)),
                   marker=dict(color=view.colors, size=17 if n <= 12 else 10,
                               symbol="diamond" if logistic else "circle", line=dict(color=ink, width=1)),
                   name="p<sub>i</sub> = v<sub>i</sub>·β*" if logistic else "u<sub>i</sub>",
                   hovertemplate=(f"token %{{customdata}}: {symbol} = %{{x:.3g}}, "
                                  "s = %{y:.3g}<extra></extra>"),
                   **on)]
    if logistic:
        styles.append(dict(uid="repulsion-fitness", mode="markers", customdata=list(range(n)),
                           marker=dict(color=style.TRANSPARENT, size=12 if n <= 12 else 8,
                                       line=dict(color=view.colors, width=2.5)),
                           name="u<sub>i</sub> = c p<sub>i</sub>",
                           hovertemplate="token %{customdata}: u = %{x:.3g}<extra></extra>", **on))
    styles.append(dict(uid="repulsion-mean", mode="lines", line=dict(color=ink, width=2, dash="dash"),
                       name="mean s·p" if logistic else "mean s·u", hoverinfo="skip", **on))

    # Rounded once for all frames, which slice them.
    means = round_significant(np.sum((view.s if view.on_simplex else simplex_shares(view.s)) * main, axis=1))
    main_rounded, fitness_rounded = round_significant(main), round_significant(fitness)

    def at(k: int) -> list[dict[str, Any]]:
        s, mean = view.s_rounded[k].tolist(), float(means[k])
        fit = [dict(x=fitness_rounded[k].tolist(), y=s)] if logistic else []
        return [dict(x=main_rounded[k].tolist(), y=s), *fit, dict(x=[mean, mean], y=view.s_range)]

    shown = view.shown
    values = np.concatenate([main[shown].ravel(), fitness[shown].ravel() if logistic else []])
    title = "value projection p<sub>i</sub> / fitness u<sub>i</sub>" if logistic else "fitness u<sub>i</sub>"
    axes = dict(x=panel_axis(range=span(values, pad=0.08), title=title),
                y=panel_axis(range=view.s_range, title="score s<sub>i</sub>"))
    return PanelTraces(static=[], moving=moving_traces(styles, at(int(shown[0]))), at=at, axes=axes)


def loss_panel(view: RunFrames, xa: str, ya: str) -> PanelTraces:
    """Panel 5: the loss against log time, on a log axis when it stays positive."""
    loss = np.asarray(view.result.loss, dtype=float)
    shown_loss = view.over_time(loss)
    ink = style.PALETTE.ink
    static = [dict(type="scatter", uid="loss-curve", name="loss", x=rounded(view.tx), y=rounded(shown_loss),
                   mode="lines", line=dict(color=ink, width=3), meta={REVEAL: "time"},
                   hovertemplate="loss = %{y:.3g} at t = %{x:.3g}<extra></extra>", xaxis=xa, yaxis=ya)]
    styles = [dict(uid="loss-now", name="loss now", mode="markers", marker=dict(color=ink, size=14),
                   hovertemplate="loss = %{y:.3g}<extra></extra>", xaxis=xa, yaxis=ya)]

    loss_rounded = round_significant(loss)

    def at(k: int) -> list[dict[str, Any]]:
        return [dict(x=[view.time(k)], y=loss_rounded[k:k + 1].tolist())]

    # No y title: the panel's title says "Loss", and beside the repulsion panel on a projector the
    # title ran into that panel's plot.
    if np.all(shown_loss > 0):
        loss_span = log_span(loss)
        y = panel_axis(type="log", range=loss_span, **style.decade_ticks(loss_span))
    else:
        y = panel_axis(range=span(loss))
    axes = dict(x=panel_axis(**view.time_axis()), y=y)
    return PanelTraces(static=static, moving=moving_traces(styles, at(int(view.shown[0]))), at=at, axes=axes)


_SIDES = ("middle right", "top right", "top center", "top left", "middle left", "bottom left",
          "bottom center", "bottom right")
"""Plotly's text positions by the direction from the centre, in eighths of a turn from the right."""


def _outward(vertices: np.ndarray, n: int) -> list[str]:
    """Where each corner's label goes: on the side of its marker facing away from the simplex's centre
    (below a segment's two ends)."""
    if n == 2:
        return ["bottom center"] * 2
    eighths = np.round(np.arctan2(vertices[:, 1], vertices[:, 0]) / (np.pi / 4)).astype(int) % 8
    return [_SIDES[k] for k in eighths]
