"""Figures of the comparison pages: small multiples that play together.

``animated_grid`` lays out panels of curves against (log) time in one Plotly
figure; a marker rides on each curve, and every panel moves with the same
frames, play button and time slider (frames evenly spaced in log time). The
page figures (``normalizers_figure``, ``losses_figure``, ...) only say which
curves go in which panel. Pure plotly, no Streamlit.

A run that stopped early (or a descent that diverged) is drawn up to its last
finite value, with its message as a note in its panel: never as NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from polarize.diagnostics import Result
from polarize.losses import entropy as entropy_of
from polarize.plots.dashboard import (
    FONT_SIZE,
    FRAMES,
    _decade_ticks,
    _list,
    _log_span,
    _span,
    animation_controls,
    token_colors,
)
from polarize.science import format_time

__all__ = [
    "LOSS_COLORS",
    "Line",
    "Panel",
    "animated_grid",
    "descent_figure",
    "kappa_figure",
    "losses_figure",
    "normalizers_figure",
    "rate_figure",
    "regression_figure",
    "tied_figure",
]

_INK = "#222831"
_GREY = "#9AA0A6"
_ALERT = "#B00020"
LOSS_COLORS = {"logistic": "#1F77B4", "square": "#FF7F0E", "kl": "#2CA02C"}
"""One colour per loss (they are runs, not tokens)."""
_LOSS_NAMES = {"logistic": "logistic", "square": "square", "kl": "cross-entropy (KL)"}


@dataclass(frozen=True, eq=False)
class Line:
    """One curve of a panel.

    Attributes
    ----------
    x, y : ndarray, shape (K,)
        Points; those that a log axis cannot show, and non-finite ones, are left out.
    name : str
    color : str
    width : float
    dash : str
    moving : bool
        Whether a marker rides on it in the animation.
    legend : bool
    """

    x: np.ndarray
    y: np.ndarray
    name: str
    color: str = _INK
    width: float = 2.5
    dash: str = "solid"
    moving: bool = True
    legend: bool = False


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


def _clean(line: Line, panel: Panel) -> tuple[np.ndarray, np.ndarray]:
    """The points of ``line`` that ``panel``'s axes can show: finite, and positive on log axes."""
    x, y = np.asarray(line.x, dtype=float), np.asarray(line.y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    if panel.log_x:
        keep &= x > 0
    if panel.log_y:
        keep &= y > 0
    return x[keep], y[keep]


def _short(text: str, width: int = 70) -> str:
    """Break a note into lines of about ``width`` characters (plotly does not wrap)."""
    words, lines, current = text.split(), [], ""
    for word in words:
        if current and len(current) + len(word) + 1 > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}".strip()
    lines.append(current)
    return "<br>".join(lines[:4]) + ("..." if len(lines) > 4 else "")


def animated_grid(panels: Sequence[Panel], *, cols: int, frames: int = FRAMES, row_height: int = 300,
                  legend: bool = False) -> go.Figure:
    """Small multiples that play together: one figure, shared frames, one play button and slider.

    Parameters
    ----------
    panels : sequence of Panel, length P
        Laid out row by row, ``cols`` per row.
    cols : int
    frames : int
        Number of animation frames, evenly spaced in log time between the
        earliest and the latest time of the moving curves.
    row_height : int
        Pixels per row of panels.
    legend : bool
        Show the legend (entries of lines with ``legend=True``).

    Returns
    -------
    plotly.graph_objects.Figure
        Static curves, then one marker trace per panel with moving curves;
        ``F`` frames (named ``"0"``...) that move only those markers; fixed
        axis ranges; ``layout.meta`` records ``panels`` (P), ``frame_times``
        (F) and ``animated`` (indices of the marker traces). Without moving
        curves, a static figure (no frames, no buttons).
    """
    rows = max(1, math.ceil(len(panels) / cols))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[p.title for p in panels],
                        horizontal_spacing=min(0.09, 0.5 / cols), vertical_spacing=min(0.16, 0.6 / rows))
    layout = fig.layout.to_plotly_json()
    data: list[dict[str, Any]] = []
    cleaned = [[_clean(line, p) for line in p.lines] for p in panels]
    riding = [x for p, c in zip(panels, cleaned, strict=True) if p.log_x
              for line, (x, _) in zip(p.lines, c, strict=True) if line.moving and len(x)]
    starts, ends = [x[0] for x in riding], [x[-1] for x in riding]
    times = np.geomspace(min(starts), max(ends), frames) if starts and max(ends) > min(starts) else \
        np.array(ends[:1])

    axis_style = dict(showgrid=True, gridcolor="#ECEFF1", zeroline=False, showline=True, linecolor="#B0B7BF",
                      tickfont=dict(size=FONT_SIZE - 3), exponentformat="power", automargin=True)
    # Every time axis spans the same times, so that the panels can be read (and played) side by side.
    time_x = [x for p, c in zip(panels, cleaned, strict=True) if p.log_x for x, _ in c]
    time_range = _log_span(np.concatenate(time_x), pad=0.02) if time_x else None
    moving_traces: list[tuple[int, list[tuple[np.ndarray, np.ndarray]], list[str]]] = []
    named: set[str] = set()
    for i, (panel, points) in enumerate(zip(panels, cleaned, strict=True)):
        suffix = "" if i == 0 else str(i + 1)
        xa, ya = f"x{suffix}", f"y{suffix}"
        for line, (x, y) in zip(panel.lines, points, strict=True):
            named_before = line.name in named
            if line.legend:
                named.add(line.name)  # one legend entry per name, however many panels draw it
            data.append(dict(type="scatter", x=_list(x), y=_list(y), mode="lines", name=line.name,
                             line=dict(color=line.color, width=line.width, dash=line.dash),
                             showlegend=legend and line.legend and not named_before,
                             legendgroup=line.name,
                             hovertemplate=f"{line.name}: %{{y:.3g}} at %{{x:.3g}}<extra></extra>",
                             xaxis=xa, yaxis=ya))
        kept = [(line, xy) for line, xy in zip(panel.lines, points, strict=True)
                if line.moving and len(xy[0])]
        riders, colors = [xy for _, xy in kept], [line.color for line, _ in kept]
        if riders and len(times) and panel.log_x:  # only curves against time move
            moving_traces.append((len(data), riders, colors))
            data.append(dict(type="scatter", mode="markers", name="now", showlegend=False, hoverinfo="skip",
                             marker=dict(color=colors, size=9, line=dict(color="white", width=1)),
                             xaxis=xa, yaxis=ya, x=[], y=[]))
        all_x = np.concatenate([x for x, _ in points]) if points else np.array([])
        all_y = np.concatenate([y for _, y in points]) if points else np.array([])
        key = "xaxis" + suffix
        x_range = (time_range if panel.log_x else _span(all_x, pad=0.04)) or [-1, 1]
        layout[key].update(axis_style, type="log" if panel.log_x else "linear", range=x_range,
                           title=dict(text=panel.x_title if i >= len(panels) - cols else "",
                                      font=dict(size=FONT_SIZE - 2)),
                           # Narrow panels get fewer decade labels, so that they stay upright.
                           **(_decade_ticks(x_range, most=4 if cols <= 4 else 3) if panel.log_x else {}))
        key = "yaxis" + suffix
        y_range = list(panel.y_range or ()) or (_log_span(all_y) if panel.log_y
                                                else _span(all_y, floor=panel.y_floor)) or [-1, 1]
        # Log axes: whole decades, or (over less than 3 decades) 1, 2 and 5 times them, never every digit.
        ticks = (_decade_ticks(y_range) or {"dtick": "D2"}) if panel.log_y else {}
        layout[key].update(axis_style, type="log" if panel.log_y else "linear", range=y_range,
                           title=dict(text=panel.y_title, font=dict(size=FONT_SIZE - 2)), **ticks)
        if panel.note:
            layout["annotations"].append(dict(
                text=_short(panel.note, max(30, 170 // cols)), xref=f"{xa} domain", yref=f"{ya} domain",
                x=0.02, y=0.97,
                xanchor="left", yanchor="top", showarrow=False, align="left",
                bgcolor="rgba(255,255,255,0.85)",
                font=dict(size=FONT_SIZE - 5, color=_ALERT)))
    for i in range(len(panels), rows * cols):  # empty cells of the last row
        suffix = "" if i == 0 else str(i + 1)
        layout["xaxis" + suffix].update(visible=False)
        layout["yaxis" + suffix].update(visible=False)
    for ann in layout["annotations"][:len(panels)]:
        ann["font"] = dict(size=FONT_SIZE, color=_INK)

    def state(tau: float, riders: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, Any]:
        at = [min(max(int(np.searchsorted(x, tau, side="right")) - 1, 0), len(x) - 1) for x, _ in riders]
        return dict(x=_list([x[k] for (x, _), k in zip(riders, at, strict=True)]),
                    y=_list([y[k] for (_, y), k in zip(riders, at, strict=True)]))

    animated = [index for index, _, _ in moving_traces]
    frame_list = []
    if animated:
        for index, riders, _ in moving_traces:
            data[index].update(state(float(times[0]), riders))
        for j, tau in enumerate(times):
            frame_list.append(dict(name=str(j), traces=animated,
                                   data=[dict(type="scatter", **state(float(tau), riders))
                                         for _, riders, _ in moving_traces]))
    height = row_height * rows + (170 if animated else 90)
    layout.update(
        height=height, font=dict(size=FONT_SIZE - 1, color=_INK, family="Source Sans Pro, Arial, sans-serif"),
        paper_bgcolor="white", plot_bgcolor="white", hovermode="closest", showlegend=legend,
        margin=dict(l=20, r=20, t=50, b=130 if animated else 40),
        legend=dict(orientation="h", x=0.0, y=1.0 + 40 / height, yanchor="bottom",
                    font=dict(size=FONT_SIZE - 3)),
        meta=dict(panels=len(panels), frame_times=_list(times) if animated else [], animated=animated),
    )
    if animated:
        controls = animation_controls([str(j) for j in range(len(times))], [format_time(t) for t in times])
        # Place the controls in pixels below the plot, whatever the figure's height.
        for menu, offset in zip(controls["updatemenus"], (60, 105), strict=True):
            menu["y"] = -offset / (height - 50 - 130)
        controls["sliders"][0]["y"] = -50 / (height - 50 - 130)
        layout.update(controls)
    return go.Figure(dict(data=data, layout=layout, frames=frame_list), _validate=False)


def _tokens(t: np.ndarray, series: np.ndarray, *, prefix: str = "token", dash: str = "solid",
            width: float = 2.0, moving: bool = True) -> tuple[Line, ...]:
    """One line per token (column of ``series``), in the tokens' colours."""
    series = np.asarray(series, dtype=float)
    colors = token_colors(series.shape[1])
    w = width if series.shape[1] <= 20 else 1.2
    return tuple(Line(x=t, y=series[:, i], name=f"{prefix} {i}", color=colors[i], dash=dash, width=w,
                      moving=moving) for i in range(series.shape[1]))


def _stopped(result: Result) -> str:
    return "" if result.finished else f"Stopped early: {result.message}"


def normalizers_figure(rows: Sequence[Any], *, frames: int = FRAMES) -> go.Figure:
    """The scores ``s_i(t)`` under every normalizer, same start: small multiples that play together.

    Parameters
    ----------
    rows : sequence of ``studies.NormalizerRow`` (8 for every normalizer)
    frames : int

    Returns
    -------
    plotly.graph_objects.Figure
        One panel per normalizer (4 per row), ``n`` curves each.
    """
    panels = [Panel(title=f"{row.normalizer}", lines=_tokens(row.result.t, row.result.s),
                    y_title="score s<sub>i</sub>" if k % 4 == 0 else "", y_floor=(0.0, 1.0),
                    note=_stopped(row.result)) for k, row in enumerate(rows)]
    return animated_grid(panels, cols=4, frames=frames, row_height=270)


def losses_figure(runs: Mapping[str, Result], *, frames: int = FRAMES) -> go.Figure:
    """Logistic, square and cross-entropy losses from the same start.

    Parameters
    ----------
    runs : mapping of loss name to Result (same ``n``)
    frames : int

    Returns
    -------
    plotly.graph_objects.Figure
        A first row with ``s_i(t)`` per loss; a second with the entropy,
        ``1 - max s`` and the loss of every run (the cross-entropy's floor
        ``H(p*)`` dashed).
    """
    names = list(runs)
    first = [Panel(title=f"{_LOSS_NAMES.get(loss, loss)}: scores", lines=_tokens(r.t, r.s),
                   y_title="score s<sub>i</sub>" if k == 0 else "", y_floor=(0.0, 1.0), note=_stopped(r))
             for k, (loss, r) in enumerate(runs.items())]

    def per_run(quantity: str) -> tuple[Line, ...]:
        return tuple(Line(x=runs[loss].t, y=np.asarray(getattr(runs[loss], quantity)),
                          name=_LOSS_NAMES.get(loss, loss), color=LOSS_COLORS.get(loss, _INK), width=3,
                          legend=quantity == "entropy") for loss in names)

    n = next(iter(runs.values())).s.shape[1]
    log_n = math.log(n)
    t_all = np.concatenate([r.t[r.t > 0] for r in runs.values()])
    lo, hi = float(t_all.min()), float(t_all.max())
    uniform = Line(x=np.array([lo, hi]), y=np.array([log_n, log_n]), name="log n (uniform)", color=_GREY,
                   dash="dash", width=2, moving=False)
    loss_lines = per_run("loss")
    if "kl" in runs and runs["kl"].experiment.target is not None:
        floor = float(entropy_of(np.asarray(runs["kl"].experiment.target)))
        loss_lines += (Line(x=np.array([lo, hi]), y=np.array([floor, floor]), name=f"H(p*) = {floor:.3g}",
                            color=LOSS_COLORS["kl"], dash="dash", width=2, moving=False, legend=True),)
    second = [
        Panel(title="entropy H(s)", lines=(*per_run("entropy"), uniform), y_title="nats",
              y_floor=(0.0, log_n * 1.05)),
        Panel(title="1 \u2212 max s", lines=per_run("one_minus_max"), log_y=True),
        Panel(title="loss (dashed: the KL floor H(p*))", lines=loss_lines, log_y=True),
    ]
    return animated_grid(first + second, cols=3, frames=frames, row_height=330, legend=True)


def regression_figure(results: Mapping[float, Result], *, frames: int = FRAMES) -> go.Figure:
    """The logits ``a(t)`` of the regression for each condition number ``kappa`` (square loss).

    Parameters
    ----------
    results : mapping of kappa to Result
    frames : int

    Returns
    -------
    plotly.graph_objects.Figure
        One panel per kappa (up to 5 per row), ``n`` curves each.
    """
    panels = [Panel(title=f"\u03ba = {kappa:g}: logits a(t)", lines=_tokens(r.t, r.a),
                    y_title="a<sub>i</sub>" if k % 5 == 0 else "", note=_stopped(r))
              for k, (kappa, r) in enumerate(results.items())]
    return animated_grid(panels, cols=min(5, len(panels)), frames=frames, row_height=300)


def kappa_figure(results: Mapping[float, Result]) -> go.Figure:
    """Final entropy and ``max s`` against the condition number (a static figure of two panels).

    Parameters
    ----------
    results : mapping of kappa to Result

    Returns
    -------
    plotly.graph_objects.Figure
        Two panels, one curve with markers each; no frames.
    """
    kappas = np.array([float(k) for k in results])
    h = np.array([r.entropy[-1] for r in results.values()])
    top = np.array([r.s[-1].max() for r in results.values()])
    n = next(iter(results.values())).s.shape[1]
    panels = [
        Panel(title="final entropy H(s)", x_title="condition number \u03ba", log_x=False, y_title="nats",
              y_floor=(0.0, math.log(n)),
              lines=(Line(x=kappas, y=h, name="entropy", width=3, moving=False),)),
        Panel(title="final max s", x_title="condition number \u03ba", log_x=False, y_floor=(0.0, 1.0),
              lines=(Line(x=kappas, y=top, name="max s", width=3, moving=False),)),
    ]
    fig = animated_grid(panels, cols=2, row_height=280)
    fig.update_traces(mode="lines+markers", marker=dict(size=11))
    return fig


def tied_figure(results: Mapping[int, Result], *, frames: int = FRAMES) -> go.Figure:
    """The tied model for each size ``D``: loss, ``alpha(t)`` and the column norms of ``U``.

    Parameters
    ----------
    results : mapping of D to Result (``model="tied"``)
    frames : int

    Returns
    -------
    plotly.graph_objects.Figure
        One row per ``D``: the loss (log-log), ``alpha_i(t)``, and the norm of
        ``U``'s column at ``argmax alpha`` against the largest and smallest of the others.
    """
    panels = []
    for D, r in results.items():
        norms = np.asarray(r.column_norms, dtype=float)
        lead = np.argmax(r.s, axis=1)
        others = np.where(np.arange(norms.shape[1])[None, :] == lead[:, None], np.nan, norms)
        panels += [
            Panel(title=f"D = {D}: loss", lines=(Line(x=r.t, y=r.loss, name="loss", width=3),), log_y=True,
                  note=_stopped(r)),
            Panel(title=f"D = {D}: \u03b1<sub>i</sub>(t)", lines=_tokens(r.t, r.s, prefix="\u03b1"),
                  y_floor=(0.0, 1.0)),
            Panel(title=f"D = {D}: column norms of U", y_floor=(0.0, 1.0), lines=(
                Line(x=r.t, y=r.winner_column_norm, name="column at argmax \u03b1", color=_ALERT, width=3.5,
                     legend=True),
                Line(x=r.t, y=np.nanmax(others, axis=1), name="largest other column", color=_GREY,
                     dash="dash", legend=True),
                Line(x=r.t, y=np.nanmin(others, axis=1), name="smallest other column", color=_GREY,
                     dash="dot", legend=True))),
        ]
    return animated_grid(panels, cols=3, frames=frames, row_height=260, legend=True)


def descent_figure(comparisons: Sequence[Any], *, frames: int = FRAMES) -> go.Figure:
    """The exact flow against gradient descent at each step size.

    Parameters
    ----------
    comparisons : sequence of ``studies.DescentComparison`` (L of them)
    frames : int

    Returns
    -------
    plotly.graph_objects.Figure
        Two rows of L panels: ``s_i(t)`` of the flow (solid) and of the descent
        (dashed, up to where it stayed finite); the distance ``|s_gd - s_flow|``.
    """
    top, bottom = [], []
    gaps = np.concatenate([c.distance for c in comparisons])
    shared = _log_span(gaps[np.isfinite(gaps)])  # one distance scale for every step size
    for c in comparisons:
        note = "" if c.same_winner else c.message.split(": ", 1)[-1]
        top.append(Panel(title=f"lr = {c.lr:g}: solid flow, dashed descent", y_floor=(0.0, 1.0),
                         y_title="score s<sub>i</sub>" if not top else "", note=note,
                         lines=_tokens(c.flow.t, c.flow.s, width=1.8)
                         + _tokens(c.descent.t, c.descent.s, prefix="gd token", dash="dash", width=2.6)))
        k = len(c.distance)
        bottom.append(Panel(title=f"lr = {c.lr:g}: |s<sub>gd</sub> \u2212 s<sub>flow</sub>|",
                            y_title="distance" if not bottom else "", log_y=True,
                            y_range=tuple(shared) if shared else None,
                            lines=(Line(x=c.descent.t[:k], y=c.distance, name="distance",
                                        color=_ALERT if c.diverged else _INK, width=3),)))
    return animated_grid(top + bottom, cols=len(comparisons), frames=frames, row_height=300)


def rate_figure(result: Result, rate: Any, *, frames: int = FRAMES) -> go.Figure:
    """How slowly polarization proceeds: the gap, the losers' ratios and the margin (log-log).

    Parameters
    ----------
    result : Result
        A logistic run (``K`` saved times, ``n`` tokens).
    rate : ``studies.Rate``
        Its decay against the theory (``K'`` times with ``t > 1``).
    frames : int

    Returns
    -------
    plotly.graph_objects.Figure
        Three panels: ``1 - max s`` with ``2(n-1)/(n z^2)`` and the theorem's
        ``C / log t``; each ``s_i / max s`` of the losers; the margin ``z`` with ``log t``.
    """
    winner = result.winner
    ratio = np.asarray(result.ratio, dtype=float)
    colors = token_colors(ratio.shape[1])
    losers = tuple(Line(x=result.t, y=ratio[:, i], name=f"token {i}", color=colors[i], width=2)
                   for i in range(ratio.shape[1]) if i != winner)
    shown = rate.sharp < 10  # the asymptotic curves blow up at early times
    panels = [
        Panel(title=f"1 \u2212 max s (fitted slope vs log log t: {rate.slope:.2f})", log_y=True, lines=(
            Line(x=rate.t, y=rate.gap, name="1 \u2212 max s (run)", width=3.5, legend=True),
            Line(x=rate.t[shown], y=rate.sharp[shown], name="2(n\u22121)/(n z\u00b2)", color=_ALERT,
                 dash="dash", moving=False, legend=True),
            Line(x=rate.t, y=rate.theorem, name="theorem: C / log t", color=_GREY, dash="dot", width=3,
                 moving=False, legend=True))),
        Panel(title="losers: s<sub>i</sub> / max s", log_y=True, lines=losers),
        Panel(title="margin z = \u03b2*\u1d40Vs", log_y=True, lines=(
            Line(x=rate.t, y=rate.margin, name="margin z", width=3.5),
            Line(x=rate.t, y=np.log(rate.t), name="log t", color=_GREY, dash="dash", moving=False,
                 legend=True))),
    ]
    return animated_grid(panels, cols=3, frames=frames, row_height=420, legend=True)
