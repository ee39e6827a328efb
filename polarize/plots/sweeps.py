"""Figures of a sweep's results: a fraction with its Wilson band, a measure's spread over seeds,
and the sink score of every layer-1 head per attention variant.

Each takes a small table (``polarize.sweeps.summary``) and draws it as it is.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import numpy as np

from polarize.plots.style import PALETTE, axis_style, base_layout, layout_update, plotly_template

__all__ = ["fraction_figure", "sink_heads_figure", "spread_figure"]


def _rgba(color: str, alpha: float) -> str:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _groups(table, colour: str | None):
    if colour is None:
        yield "", table, PALETTE.cycle[0]
        return
    for k, (value, part) in enumerate(table.groupby(colour, sort=True)):
        yield _plain(f"{colour} = {value}"), part, PALETTE.cycle[k % len(PALETTE.cycle)]


def _plain(text: str) -> str:
    """A value from a results file as plain text in a figure: plotly reads tags and entities in labels."""
    return html.escape(str(text), quote=False)


def _band(x, low, high, color: str, name: str) -> dict[str, Any]:
    """A filled band from ``low`` to ``high`` over ``x``."""
    return dict(type="scatter", x=list(x) + list(x)[::-1], y=list(high) + list(low)[::-1], fill="toself",
                mode="lines", fillcolor=_rgba(color, 0.18), line=dict(width=0), hoverinfo="skip",
                showlegend=False, name=name)


def _figure(traces: list[dict[str, Any]], x_title: str, y_title: str, *, log_x: bool, log_y: bool = False,
            narrow: bool = False) -> dict[str, Any]:
    """The figure dict of ``traces`` on one pair of axes, in the common style."""
    def axis(title: str, log: bool) -> dict[str, Any]:
        return dict(title=dict(text=title), **({"type": "log"} if log else {}), **axis_style())

    layout = base_layout(height=380 if narrow else 420, delta=-2, margin=dict(l=20, r=20, t=30, b=40)) | dict(
        legend=dict(orientation="h", y=1.02, yanchor="bottom"), xaxis=axis(x_title, log_x),
        yaxis=axis(y_title, log_y), template=plotly_template())
    return dict(data=traces, layout=layout, frames=[])


def _is_log(values: Sequence[float]) -> bool:
    v = np.asarray([x for x in values if isinstance(x, (int, float))], dtype=float)
    return len(v) > 2 and np.all(v > 0) and v.max() / v.min() >= 50


def fraction_figure(table, x: str, colour: str | None, what: str, *, narrow: bool = False) -> dict[str, Any]:
    """``share`` against ``x``, one line per ``colour``, each in its 95% Wilson band (``low``, ``high``).

    Parameters
    ----------
    table : pandas.DataFrame
        ``summary.fraction_table``: columns ``x``, ``colour``, ``hits``, ``trials``, ``share``, ``low``,
        ``high``.
    what : str
        The fraction's name, for the axis.
    """
    traces = []
    for name, part, color in _groups(table, colour):
        traces.append(_band(_xs_in(table, x, part), part["low"], part["high"], color, name))
        traces.append(dict(
            type="scatter", x=_xs_in(table, x, part), y=part["share"].tolist(), mode="lines+markers",
            name=name or _plain(what), line=dict(color=color),
            customdata=np.stack([part["hits"], part["trials"]], axis=1).tolist(), showlegend=bool(name),
            hovertemplate=f"{x} = %{{x}}<br>share %{{y:.3f}} (%{{customdata[0]:.0f}} of "
                          "%{customdata[1]:.0f})<extra>" + name + "</extra>"))
    figure = _figure(traces, x, f"share {what}", log_x=_is_log(table[x].tolist()), narrow=narrow)
    figure["layout"]["yaxis"]["range"] = [-0.03, 1.03]
    _category_ticks(figure, table[x].tolist(), narrow)
    return figure


def _categories(values: list) -> dict | None:
    """Text values on x: each at a whole-number position (numeric ticks for the layout checks)."""
    if not values or not isinstance(values[0], str):
        return None
    return {v: k for k, v in enumerate(sorted(set(values)))}


def _xs_in(table, x: str, part) -> list:
    """The x positions of a group's rows: the values, or their categories' places in the whole table."""
    places = _categories(table[x].tolist())
    return part[x].tolist() if places is None else [places[v] for v in part[x]]


_UPRIGHT = 4
"""Text values on a phone's x axis beyond which they stand on end: six variants of the sinks sweep
(``linear-normalized``...) side by side in a phone's 300 px overlapped, even broken in two."""


def _category_ticks(figure: dict[str, Any], values: list, narrow: bool) -> None:
    """Text values on x, each broken at its hyphens (``sigmoid-unnormalized`` on two lines); on a phone,
    more than ``_UPRIGHT`` of them stand on end, the plot's bottom margin grown to hold them; in place."""
    places = _categories(values)
    if places is not None:
        upright = dict(tickangle=-90, automargin=True) if narrow and len(places) > _UPRIGHT else {}
        layout_update(figure["layout"], xaxis=dict(tickvals=list(places.values()),
                                                   ticktext=[_plain(v).replace("-", "<br>") for v in places],
                                                   **upright))


def spread_figure(table, x: str, colour: str | None, y: str, *, narrow: bool = False) -> dict[str, Any]:
    """The median of ``y`` against ``x`` per ``colour``, with its least-to-largest band over seeds.

    ``table`` is ``summary.spread_table`` (``median``, ``q1``, ``q3``, ``least``, ``most``).
    """
    traces = []
    for name, part, color in _groups(table, colour):
        traces.append(_band(_xs_in(table, x, part), part["least"], part["most"], color, name))
        traces.append(dict(
            type="scatter", x=_xs_in(table, x, part), y=part["median"].tolist(), mode="lines+markers",
            name=name or y,
            line=dict(color=color),
            error_y=dict(type="data", symmetric=False, array=(part["q3"] - part["median"]).tolist(),
                         arrayminus=(part["median"] - part["q1"]).tolist(), color=color, thickness=1.5,
                         width=4),
            showlegend=bool(name),
            hovertemplate=f"{x} = %{{x}}<br>median {y} %{{y:.3g}}<extra>{name}</extra>"))
    positive = bool((table["least"] > 0).all())
    figure = _figure(traces, x, f"{y} (median over seeds)", log_x=_is_log(table[x].tolist()), log_y=positive,
                     narrow=narrow)
    _category_ticks(figure, table[x].tolist(), narrow)
    return figure


def sink_heads_figure(frame, threshold: float = 0.9, *, narrow: bool = False) -> dict[str, Any]:
    """The sink score of every layer-1 head of every run, per variant (a dot each; colour: seed).

    ``frame`` holds ``variant``, ``seed`` and ``sink_l1_h<k>`` columns (``polarize.sweeps.load``).
    """
    heads = sorted((c for c in frame if c.startswith("sink_l1_h")), key=lambda c: int(c[9:]))
    variants = sorted(frame["variant"].dropna().unique())
    traces = []
    for k, seed in enumerate(sorted(frame["seed"].unique())):
        part = frame[frame["seed"] == seed]
        xs, ys, text = [], [], []
        for _, row in part.iterrows():
            for h, column in enumerate(heads):
                offset = (h - (len(heads) - 1) / 2) * 0.08 + (k - 0.5) * 0.02
                xs.append(variants.index(row["variant"]) + offset)
                ys.append(row[column])
                text.append(_plain(f"{row['variant']}, seed {seed}, head {h}"))
        traces.append(dict(type="scatter", x=xs, y=ys, mode="markers", name=f"seed {seed}", text=text,
                           marker=dict(size=9, color=PALETTE.cycle[k % len(PALETTE.cycle)]),
                           hovertemplate="%{text}: %{y:.3f}<extra></extra>"))
    figure = _figure(traces, "attention variant", "sink score, layer-1 heads", log_x=False, narrow=narrow)
    # The threshold across the plot (what ``go.Figure.add_hline`` draws).
    figure["layout"]["shapes"] = [dict(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=threshold,
                                       y1=threshold, line=dict(color=PALETTE.grey, dash="dash"))]
    layout_update(figure["layout"], xaxis=dict(tickvals=list(range(len(variants))),
                                               ticktext=[_plain(v).replace("-", "<br>") for v in variants]))
    return figure
