"""The replicator lens's figures: the field on the triangle, the basin map and the naive prediction's odds.

Points of the triangle are drawn as the Explorer draws the simplex
(``project_to_polygon``: token 0 at the top, then anticlockwise), in the
palette's token colours.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from plotly.colors import get_colorscale, sample_colorscale

from polarize.ensemble import Ensemble
from polarize.plots import style
from polarize.plots.numbers import log_span, rounded
from polarize.plots.polygon import project_to_polygon, simplex_vertices
from polarize.science.basins import Basins, NaiveOdds
from polarize.science.flow_field import naive_winner, slice_shares, square_to_triangle
from polarize.science.rest_points import RestPoint

__all__ = ["ARROW", "STABILITY_MARKERS", "basin_figure", "odds_figure", "portrait_figure", "starts_figure"]

ARROW = 0.07
"""Length of a field arrow, in units of the triangle's circumradius (arrows show direction; colour, speed)."""
SPEED_SCALE = "Viridis"
SPEED_BINS = 6
STABILITY_MARKERS = {
    "stable": dict(symbol="circle", fill=True),
    "unstable": dict(symbol="circle", fill=False),
    "saddle": dict(symbol="diamond", fill=False),
    "degenerate": dict(symbol="square", fill=False),
}
_REACH = 1.25
_LABEL_OFF = np.array([0.17, -0.17, -0.17])
"""Each vertex's label straight above (the top one) or below it, clear of its rest point's marker: out
along the radius the bottom ones sat on their markers and ran off a phone's figure."""


def _triangle(tokens: Sequence[int], n: int) -> list[dict[str, Any]]:
    """The outline, and the labels of the three ``tokens`` (of ``n``) in their colours."""
    vertices = simplex_vertices(3)
    outline = np.vstack([vertices, vertices[:1]])
    colors = [style.token_colors(n)[t] for t in tokens]
    return [
        dict(type="scatter", x=rounded(outline[:, 0]), y=rounded(outline[:, 1]), mode="lines", name="simplex",
                   line=dict(color=style.PALETTE.grey, width=2), hoverinfo="skip", showlegend=False,
                   uid="phase-outline"),
        dict(type="scatter", x=rounded(vertices[:, 0]), y=rounded(vertices[:, 1] + _LABEL_OFF), mode="text",
                   text=[f"token {t}" for t in tokens], textfont=dict(size=style.FONT_SIZE - 2, color=colors),
                   hoverinfo="skip", showlegend=False, uid="phase-labels"),
    ]


def _gaps(values: np.ndarray) -> list:
    """Rounded values with NaN as None: the breaks between the segments of one trace."""
    return [None if np.isnan(v) else v for v in rounded(values)]


def _layout(traces: list[dict[str, Any]], height: int, title: str) -> dict[str, Any]:
    """The figure dict of ``traces`` on the triangle: no axes, equal scales, the legend below."""
    layout = style.base_layout(height=height, delta=-2, margin=dict(l=10, r=10, t=50, b=10)) | dict(
        title=dict(text=title, font=style.font(-1)),
        legend=dict(orientation="h", y=-0.02, yanchor="top", font=style.font(-4)),
        xaxis=dict(range=[-_REACH, _REACH], visible=False, fixedrange=True),
        yaxis=dict(range=[-0.75, 1.25], visible=False, scaleanchor="x", scaleratio=1, fixedrange=True))
    return dict(data=traces, layout=layout | dict(template=style.plotly_template()), frames=[])


def _arrows(shares: np.ndarray, velocity: np.ndarray) -> list[dict[str, Any]]:
    """One trace per speed bin: a segment from each point along its velocity, a head at its tip."""
    start = project_to_polygon(shares)
    move = velocity @ simplex_vertices(3)
    speed = np.linalg.norm(move, axis=1)
    tip = start + ARROW * move / np.where(speed > 0, speed, 1.0)[:, None]
    edges = np.geomspace(max(speed.min(), 1e-300), max(speed.max(), 1e-300), SPEED_BINS + 1)
    which = np.clip(np.searchsorted(edges, speed, side="right") - 1, 0, SPEED_BINS - 1)
    colors = sample_colorscale(SPEED_SCALE, list(np.linspace(0, 1, SPEED_BINS)))
    traces = []
    for b in range(SPEED_BINS):
        chosen = np.flatnonzero((which == b) & (speed > 0))
        if not len(chosen):
            continue
        x = np.full(3 * len(chosen), np.nan)
        y = np.full(3 * len(chosen), np.nan)
        x[0::3], x[1::3] = start[chosen, 0], tip[chosen, 0]
        y[0::3], y[1::3] = start[chosen, 1], tip[chosen, 1]
        sizes = np.tile([0, 8, 0], len(chosen))
        traces.append(dict(type="scatter",
            x=_gaps(x), y=_gaps(y),
            mode="lines+markers", line=dict(color=colors[b], width=2),
            marker=dict(symbol="arrow", angleref="previous", size=sizes.tolist(), color=colors[b]),
            name=f"|ds/dt| {edges[b]:.2g}\u2013{edges[b + 1]:.2g}", hoverinfo="skip", uid=f"phase-field-{b}",
            legendgroup="field", showlegend=False))
    traces.append(dict(type="scatter",   # the speed scale, as a colour bar
        x=[None], y=[None], mode="markers", hoverinfo="skip", showlegend=False, uid="phase-speed-scale",
        marker=dict(colorscale=get_colorscale(SPEED_SCALE), cmin=np.log10(edges[0]),
                    cmax=np.log10(edges[-1]), color=[0], showscale=True,
                    colorbar=dict(title=dict(text="log<sub>10</sub> |ds/dt|", side="right"),
                                  thickness=12, len=0.6, tickfont=style.font(-5)))))
    return traces


def _continua(points: Sequence[RestPoint]) -> list[dict[str, Any]]:
    """Each set of rest points that is more than a point (a segment; a whole face) as a thick line."""
    traces = []
    for k, p in enumerate(q for q in points if q.continuum is not None):
        corners = project_to_polygon(np.asarray(p.continuum))
        if len(corners) > 2:
            corners = np.vstack([corners, corners[:1]])
        what = "line" if len(p.continuum) == 2 else "region"
        traces.append(dict(type="scatter",
            x=rounded(corners[:, 0]), y=rounded(corners[:, 1]), mode="lines", uid=f"phase-rest-line-{k}",
            name=f"a {what} of rest points: {p.stability}", hoverinfo="text",
            text=f"a {what} of rest points, from {np.round(p.continuum[0], 3).tolist()} to "
                 f"{np.round(p.continuum[-1], 3).tolist()}: {p.stability}",
            line=dict(color=style.PALETTE.ink, width=5, dash="solid" if p.stability == "stable" else "dot")))
    return traces


def _rest(points: Sequence[RestPoint]) -> list[dict[str, Any]]:
    traces = _continua(points)
    for stability, look in STABILITY_MARKERS.items():
        chosen = [p for p in points if p.stability == stability and p.continuum is None]
        if not chosen:
            continue
        xy = project_to_polygon(np.array([p.shares for p in chosen]))
        text = [f"rest point, shares {np.round(p.shares, 3).tolist()}: {stability}" for p in chosen]
        traces.append(dict(type="scatter",
            x=rounded(xy[:, 0]), y=rounded(xy[:, 1]), mode="markers", name=f"rest point: {stability}",
            text=text, hovertemplate="%{text}<extra></extra>", uid=f"phase-rest-{stability}",
            marker=dict(symbol=look["symbol"], size=17,
                        color=style.PALETTE.ink if look["fill"] else style.PALETTE.background,
                        line=dict(color=style.PALETTE.ink, width=2.5))))
    return traces


def _paths(paths: Sequence[np.ndarray], picked: np.ndarray | None) -> list[dict[str, Any]]:
    traces = []
    if len(paths):
        xy = [project_to_polygon(p) for p in paths]
        x = np.concatenate([np.append(p[:, 0], np.nan) for p in xy])
        y = np.concatenate([np.append(p[:, 1], np.nan) for p in xy])
        traces.append(dict(type="scatter",
            x=_gaps(x), y=_gaps(y),
            mode="lines", line=dict(color=style.PALETTE.muted, width=1.2), opacity=0.7,
            name="runs from many starts", hoverinfo="skip", uid="phase-paths"))
    if picked is not None:
        xy = project_to_polygon(picked)
        traces.append(dict(type="scatter", x=rounded(xy[:, 0]), y=rounded(xy[:, 1]), mode="lines+markers",
                                 line=dict(color=style.PALETTE.alert, width=3),
                                 marker=dict(size=[12] + [0] * (len(xy) - 1), color=style.PALETTE.alert),
                                 name="the run from the chosen start", uid="phase-picked", hoverinfo="skip"))
    return traces


def portrait_figure(shares: np.ndarray, velocity: np.ndarray, *, rest: Sequence[RestPoint] = (),
                    paths: Sequence[np.ndarray] = (), picked: np.ndarray | None = None,
                    tokens: Sequence[int] = (0, 1, 2), n: int = 3, title: str = "",
                    height: int = 560) -> dict[str, Any]:
    """The field on the triangle as arrows coloured by speed, with rest points and runs over it.

    Parameters
    ----------
    shares, velocity : ndarray, shape (A, 3)
        Where the arrows start (shares of the three ``tokens``) and the velocity of those shares.
    rest : sequence of RestPoint
        Drawn by stability (``STABILITY_MARKERS``).
    paths : sequence of ndarray, each (T, 3)
        Runs from many starts, as shares of the three tokens over time.
    picked : ndarray, shape (T, 3), optional
        One run to highlight (the chosen start).
    tokens : three ints
        The tokens at the vertices (the slice, for n > 3).
    n : int
        Number of tokens (for their colours).
    """
    return _layout(_triangle(tokens, n) + _arrows(shares, velocity) + _paths(paths, picked) + _rest(rest),
                   height, title)


def cell_corners(resolution: int) -> np.ndarray:
    """The corners (R^2, 4, 3) of the basin grid's cells, as shares: start ``k``'s cell of the unit square,
    mapped as ``triangle_grid`` maps its centre (straight edges: rows are horizontal, columns run to
    the top vertex, so the cells tile the triangle with no gap)."""
    edges = np.arange(resolution + 1) / resolution
    i, j = np.divmod(np.arange(resolution**2), resolution)
    x = np.stack([edges[i], edges[i], edges[i + 1], edges[i + 1]], axis=1)
    y = np.stack([edges[j], edges[j + 1], edges[j + 1], edges[j]], axis=1)
    return square_to_triangle(x, y)


def _cells(resolution: int, winner: np.ndarray, holds: np.ndarray,
           colors: np.ndarray) -> list[dict[str, Any]]:
    """The run starts' cells filled by winner, one trace per (winner, naive holds): squares of one size
    left stripes near the top vertex, where the rows are far apart and each row's cells are narrow."""
    corners = project_to_polygon(cell_corners(resolution)[:len(winner)].reshape(-1, 3)).reshape(-1, 4, 2)
    traces = []
    for token in np.unique(winner):
        for fades in (True, False):
            chosen = np.flatnonzero((winner == token) & (holds[:len(winner)] == fades))
            if not len(chosen):
                continue
            breaks = np.full((len(chosen), 1, 2), np.nan)
            shapes = np.concatenate([corners[chosen], corners[chosen, :1], breaks], axis=1).reshape(-1, 2)
            traces.append(dict(type="scatter",
                x=_gaps(shapes[:, 0]), y=_gaps(shapes[:, 1]), mode="lines", fill="toself", hoverinfo="skip",
                fillcolor=colors[token], line=dict(width=0.5, color=colors[token]),
                opacity=0.55 if fades else 1.0,
                showlegend=False, uid=f"basin-cells-{token}-{'naive' if fades else 'other'}"))
    return traces


def basin_figure(basins: Basins, *, picked: np.ndarray | None = None, title: str = "",
                 height: int = 560) -> dict[str, Any]:
    """Each start of the grid coloured by the token that wins from it, and where the naive guess fails.

    The grid's trace (uid ``basin-starts``) carries ``[index, s_a, s_b]`` per start as ``customdata``:
    its index in ``basins.shares`` and the shares of the first two of the three tokens, so that a
    clicked point names its start. Starts not run (``basins.missing``) are grey squares (uid
    ``basin-missing``).
    """
    n = basins.ensemble.experiment.n
    colors = np.array(style.token_colors(n))
    run = len(basins.ensemble)
    xy = project_to_polygon(basins.shares)
    winner = basins.ensemble.winner
    holds = basins.naive_holds
    clicked = [[k, *pair] for k, pair in enumerate(rounded(basins.shares[:run, :2]))]
    size = max(3, 360 // basins.resolution)
    # The cells below show the colours; these markers, not drawn, carry each start's hover and click.
    starts = dict(type="scatter",
        x=rounded(xy[:run, 0]), y=rounded(xy[:run, 1]), mode="markers", name="start, coloured by its winner",
        marker=dict(symbol="square", size=size, color=colors[winner].tolist(), opacity=0.0,
                    line=dict(width=0)),
        showlegend=False, customdata=clicked, text=[f"token {w} wins" for w in winner],
        hovertemplate="%{text}<extra></extra>", uid="basin-starts")
    boundary = project_to_polygon(basins.boundary()) if len(basins.boundary()) else np.zeros((0, 2))
    line = dict(type="scatter", x=rounded(boundary[:, 0]), y=rounded(boundary[:, 1]), mode="markers",
                      marker=dict(size=4, color=style.PALETTE.ink), uid="basin-naive-line",
                      name=f"where 'the largest p\u1d62(0) wins' (token {basins.naive}) stops holding",
                      hoverinfo="skip")
    traces: list[Any] = [*_triangle(basins.tokens, n), *_cells(basins.resolution, winner, holds, colors),
                         starts, line]
    if basins.missing:
        traces.append(dict(type="scatter",
            x=rounded(xy[run:, 0]), y=rounded(xy[run:, 1]), mode="markers", uid="basin-missing",
            name="start not run in time", hoverinfo="skip",
            marker=dict(symbol="square", size=size, color=style.PALETTE.grey, opacity=0.35,
                        line=dict(width=0))))
    traces += _paths((), picked)
    return _layout(traces, height, title)


def odds_figure(odds: NaiveOdds, *, height: int = 360) -> dict[str, Any]:
    """The chance that the naive prediction wins against the scale of random ``a(0)``, with its 95% band."""
    x = rounded(odds.scales)
    band = dict(type="scatter", x=x + x[::-1], y=rounded(np.concatenate([odds.high, odds.low[::-1]])),
                mode="lines", fill="toself", fillcolor="rgba(31,119,180,0.18)", line=dict(width=0),
                hoverinfo="skip", name="95% interval", uid="odds-band")
    line = dict(type="scatter", x=x, y=rounded(odds.odds), mode="lines+markers",
                name="the largest p\u1d62(0) wins", line=dict(color=style.PALETTE.tokens[0], width=3),
                uid="odds-line", hovertemplate="scale %{x:.3g}: %{y:.2f}<extra></extra>")
    layout = style.base_layout(height=height, delta=-2) | dict(
        # Above the plot, from its top edge: anchored at its top it hung into the plot.
        legend=dict(orientation="h", y=1.02, yanchor="bottom", font=style.font(-4)),
        # Its range given, so that a hall's fit can label whole decades (``present_figure``).
        xaxis=dict(type="log", range=log_span(odds.scales),
                   title=dict(text="scale of random a(0) = scale \u00d7 randn", font=style.font(-2)),
                   **style.axis_style()),
        yaxis=dict(range=[0, 1.02], title=dict(text="P(naive prediction wins)", font=style.font(-2)),
                   **style.axis_style()))
    return dict(data=[band, line], layout=layout | dict(template=style.plotly_template()), frames=[])


def starts_figure(ensemble: Ensemble, tokens: Sequence[int] = (0, 1, 2), *, title: str = "",
                  height: int = 560) -> dict[str, Any]:
    """Where each start of an ensemble ends: each start on the triangle of three tokens, by its winner.

    The basin picture for any starts (``basin_figure`` draws a grid of them): each start is placed by
    the shares of ``tokens`` among themselves in its starting scores ``sigma(a0)`` and coloured by the
    token that wins from it; starts where the naive prediction (``naive_winner``) wins are paler.
    With two tokens the starts lie on a segment.

    Parameters
    ----------
    ensemble : Ensemble
        ``K`` starts of ``n`` tokens.
    tokens : three ints
        The tokens at the vertices (for n = 2, both tokens, whatever is given).
    title : str
    height : int

    Returns
    -------
    dict
        The outline (uid ``phase-outline``), the starts (uid ``ensemble-starts``, one marker per start,
        its colour the winner's and its ``customdata`` ``[start index, winner]``).
    """
    e, n = ensemble.experiment, ensemble.experiment.n
    tokens = (0, 1) if n == 2 else tuple(tokens)
    s0 = e.sigma.forward(ensemble.a0)
    part = np.abs(s0[:, list(tokens)]) if n == 2 else np.abs(slice_shares(s0, tokens))
    xy = project_to_polygon(part)
    colors = np.array(style.token_colors(n))
    holds = ensemble.winner == naive_winner(e)
    starts = dict(type="scatter",
        x=rounded(xy[:, 0]), y=rounded(xy[:, 1]), mode="markers", name="start, coloured by its winner",
        marker=dict(size=max(4, 14 - int(np.log2(len(ensemble)))), color=colors[ensemble.winner].tolist(),
                    opacity=np.where(holds, 0.55, 1.0).tolist(), line=dict(width=0)),
        customdata=[[k, int(w)] for k, w in enumerate(ensemble.winner)],
        text=[f"token {w} wins" for w in ensemble.winner], hovertemplate="%{text}<extra></extra>",
        uid="ensemble-starts")
    traces = [*_triangle(tokens, n), starts] if n > 2 else [*_segment(n), starts]
    return _layout(traces, height, title)


def _segment(n: int) -> list[dict[str, Any]]:
    """The simplex of two tokens: a segment, its ends labelled."""
    ends = simplex_vertices(2)
    return [dict(type="scatter", x=rounded(ends[:, 0]), y=rounded(ends[:, 1]), mode="lines+text",
                 uid="phase-outline", text=["token 0", "token 1"], textposition="top center",
                 showlegend=False, line=dict(color=style.PALETTE.grey, width=2), hoverinfo="skip")]
