"""Static figures in the layout of the paper's toy experiments (PAPER.md section 6).

Each builder takes finished ``Result`` objects and returns a Plotly figure;
time axes are logarithmic, so the saved time ``t = 0`` is left out. A run that
stopped early is drawn up to where it stopped, with its message as a note.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from polarize.diagnostics import Result
from polarize.losses import entropy
from polarize.plots.dashboard import token_colors

__all__ = [
    "comparison_figure",
    "kl_figure",
    "logistic_figure",
    "regression_figure",
    "tied_figure",
    "token_colors",
]

_FONT = dict(size=15)


def _lines(fig: go.Figure, t: np.ndarray, series: np.ndarray, *, row: int, col: int,
           name: str, legend: bool = False) -> None:
    """One line per token (columns of ``series``), skipping ``t = 0`` for log axes."""
    colors = token_colors(series.shape[1])
    for i in range(series.shape[1]):
        fig.add_trace(go.Scatter(x=t[1:], y=series[1:, i], mode="lines", line=dict(color=colors[i], width=2),
                                 name=f"{name} {i}", legendgroup=str(i), showlegend=legend),
                      row=row, col=col)


def _note_if_stopped(fig: go.Figure, result: Result, *, row: int, col: int) -> None:
    if not result.finished:
        fig.add_annotation(text=result.message[:90] + ("..." if len(result.message) > 90 else ""),
                           xref="x domain", yref="y domain", x=0.02, y=0.98, showarrow=False,
                           font=dict(size=11, color="#b00020"), align="left", row=row, col=col)


def _style(fig: go.Figure, *, height: int, rows: int = 1) -> go.Figure:
    fig.update_layout(height=height, width=1200, template="plotly_white", font=_FONT,
                      margin=dict(l=60, r=20, t=90, b=50))
    fig.update_xaxes(type="log")
    fig.update_xaxes(title_text="t", row=rows)
    return fig


def logistic_figure(result: Result) -> go.Figure:
    """Scores ``s_i(t)`` (log-log) and value projections ``p_i(t)`` (log-x): paper experiment 1."""
    fig = make_subplots(rows=1, cols=2,
                        subplot_titles=("scores s_i(t)", "value projections p_i = (V^T beta*)_i"))
    _lines(fig, result.t, result.s, row=1, col=1, name="s", legend=True)
    if result.p is not None:
        _lines(fig, result.t, result.p, row=1, col=2, name="p")
    fig.update_yaxes(type="log", row=1, col=1)
    _note_if_stopped(fig, result, row=1, col=1)
    return _style(fig, height=480)


def comparison_figure(results: dict[str, Result]) -> go.Figure:
    """Normalized scores ``alpha(t)`` and logits ``a(t)``, one row per normalizer: experiment 2."""
    names = list(results)
    titles = [f"{name}: {panel}" for name in names for panel in ("alpha(t)", "a(t)")]
    fig = make_subplots(rows=len(names), cols=2, subplot_titles=titles, vertical_spacing=0.35 / len(names))
    for row, name in enumerate(names, start=1):
        r = results[name]
        _lines(fig, r.t, r.s, row=row, col=1, name="alpha", legend=row == 1)
        _lines(fig, r.t, r.a, row=row, col=2, name="a")
        _note_if_stopped(fig, r, row=row, col=1)
    return _style(fig, height=230 * len(names), rows=len(names))


def tied_figure(results: dict[str, Result]) -> go.Figure:
    """Loss, ``alpha(t)`` and the winning column's norm against the others: experiment 3."""
    labels = list(results)
    titles = [f"{label}: {panel}" for label in labels
              for panel in ("loss", "alpha(t)", "column norms of U")]
    fig = make_subplots(rows=len(labels), cols=3, subplot_titles=titles,
                        vertical_spacing=0.3 / len(labels))
    for row, label in enumerate(labels, start=1):
        r = results[label]
        t = r.t[1:]
        fig.add_trace(go.Scatter(x=t, y=r.loss[1:], mode="lines", line=dict(color="#333", width=2),
                                 showlegend=False), row=row, col=1)
        fig.update_yaxes(type="log", row=row, col=1)
        _lines(fig, r.t, r.s, row=row, col=2, name="alpha")
        winner = r.winner_column_norm[1:]
        others = np.where(np.arange(r.s.shape[1]) == r.winner, np.nan, r.column_norms)[1:]
        fig.add_trace(go.Scatter(x=t, y=winner, mode="lines", line=dict(color="#d62728", width=3),
                                 name="column at argmax alpha", showlegend=row == 1), row=row, col=3)
        fig.add_trace(go.Scatter(x=t, y=np.nanmax(others, axis=1), mode="lines",
                                 line=dict(color="#7f7f7f", width=2, dash="dash"),
                                 name="largest other column", showlegend=row == 1), row=row, col=3)
        _note_if_stopped(fig, r, row=row, col=1)
    return _style(fig, height=260 * len(labels), rows=len(labels))


def regression_figure(results: dict[str, Result]) -> go.Figure:
    """Logits ``a(t)`` per condition number, and final entropy and ``max s`` against it: experiment 4."""
    labels = list(results)
    k = len(labels)
    specs = [[{} for _ in range(k)], [{"colspan": k}] + [None] * (k - 1)]
    fig = make_subplots(rows=2, cols=k, specs=specs, row_heights=[0.55, 0.45],
                        subplot_titles=[f"{label}: a(t)" for label in labels]
                        + ["final entropy and max s against the condition number"])
    for col, label in enumerate(labels, start=1):
        _lines(fig, results[label].t, results[label].a, row=1, col=col, name="a")
        _note_if_stopped(fig, results[label], row=1, col=col)
    kappas = [float(label.split("=")[-1]) for label in labels]
    fig.add_trace(go.Scatter(x=kappas, y=[results[label].entropy[-1] for label in labels],
                             mode="lines+markers", name="entropy H(s)", line=dict(width=3)), row=2, col=1)
    fig.add_trace(go.Scatter(x=kappas, y=[results[label].s[-1].max() for label in labels],
                             mode="lines+markers", name="max s", line=dict(width=3)), row=2, col=1)
    _style(fig, height=700, rows=1)
    fig.update_xaxes(type="linear", title_text="kappa", row=2, col=1)
    return fig


def kl_figure(result: Result) -> go.Figure:
    """Loss against its floor ``H(p*)``, gradient norms and logits ``a(t)``: experiment 5."""
    fig = make_subplots(rows=1, cols=3, subplot_titles=("loss and its floor H(p*)", "gradient norms", "a(t)"))
    t = result.t[1:]
    floor = float(entropy(np.asarray(result.experiment.target)))
    fig.add_trace(go.Scatter(x=t, y=result.loss[1:], mode="lines", name="loss",
                             line=dict(color="#333", width=3)), row=1, col=1)
    fig.add_hline(y=floor, line=dict(color="#d62728", dash="dash"), row=1, col=1,
                  annotation_text=f"H(p*) = {floor:.4f}")
    fig.add_trace(go.Scatter(x=t, y=result.grad_norm_V[1:], mode="lines", name="|dL/dV|"), row=1, col=2)
    fig.add_trace(go.Scatter(x=t, y=result.grad_norm_a[1:], mode="lines", name="|dL/da|"), row=1, col=2)
    fig.update_yaxes(type="log", row=1, col=2)
    _lines(fig, result.t, result.a, row=1, col=3, name="a")
    _note_if_stopped(fig, result, row=1, col=1)
    return _style(fig, height=460)
