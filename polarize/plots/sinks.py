"""Figures of an attention-sink run (a record read by ``polarize.sinks.runs.read_run``).

``attention_figure``: attention maps, one panel per layer and head (query x key),
at one training checkpoint, sink heads marked in their titles.
``training_figure``: sink score of every head, induction accuracy and the BOS
residual norm per layer against the training step.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from polarize.plots import style
from polarize.sinks.metrics import SINK_THRESHOLD, sink_heads

__all__ = ["attention_figure", "token_labels", "training_figure"]


def token_labels(tokens: list[int], vocab: int) -> list[str]:
    """Axis labels: BOS, the tokens, the query marked with a prime (its base token)."""
    return [f"{i}:BOS" if t == 0 else f"{i}:{t - vocab}\u2032" if t >= vocab else f"{i}:{t}"
            for i, t in enumerate(tokens)]


def attention_figure(record: Mapping[str, Any], checkpoint: int, sequence: int = 0) -> go.Figure:
    """Attention weights at one checkpoint, layers as rows and heads as columns.

    Parameters
    ----------
    record : mapping
        A run record (``maps`` of shape (sequences, layers, heads, length, length) per checkpoint).
    checkpoint : int
        Index into ``record["maps"]``.
    sequence : int
        Which stored evaluation sequence.
    """
    snapshot = record["maps"][checkpoint]
    weights = np.asarray(snapshot["weights"])[sequence]
    layers, heads = weights.shape[:2]
    entry = next(h for h in record["history"] if h["step"] == snapshot["step"])
    sinks = sink_heads(entry["sink_scores"], entry["accuracy"])
    scores = np.asarray(entry["sink_scores"])
    # Two lines a title, so that neighbours' titles stay apart; on a phone two heads a row.
    titles = [f"layer {layer}, head {head}<br>sink {scores[layer, head]:.2f}"
              + (" \u2605 SINK" if sinks[layer, head] else "")
              for layer in range(layers) for head in range(heads)]
    cols = min(2, heads) if style.narrow() else heads
    rows = -(-layers * heads // cols)
    height = (260 if style.narrow() else 330) * rows + 100
    figure = make_subplots(rows=rows, cols=cols, subplot_titles=titles, horizontal_spacing=0.04,
                           vertical_spacing=95 / (height - 140))  # rotated ticks, then two title lines
    labels = token_labels(record["map_tokens"][sequence], record["config"].vocab)
    top = float(max(weights.max(), 1e-9))
    for layer in range(layers):
        for head in range(heads):
            row, col = divmod(layer * heads + head, cols)
            figure.add_trace(go.Heatmap(
                z=weights[layer, head], x=labels, y=labels, zmin=0.0, zmax=top, colorscale="Blues",
                showscale=layer == 0 and head == heads - 1,
                hovertemplate="query %{y}<br>key %{x}<br>weight %{z:.3f}<extra></extra>"),
                row=row + 1, col=col + 1)
            figure.update_yaxes(autorange="reversed", row=row + 1, col=col + 1, showticklabels=col == 0)
    figure.update_xaxes(tickangle=-90, tickfont=style.font(-6), automargin=True)
    figure.update_yaxes(tickfont=style.font(-6), automargin=True)
    figure.update_annotations(font=style.font(-4))
    title = f"Attention (rows: queries, columns: keys) at step {snapshot['step']}"
    figure.update_layout(**style.base_layout(height=height, delta=-2,
                                             margin=dict(l=20, r=20, t=130 if style.narrow() else 100, b=40)),
                         title=dict(text=style.wrap(title, 36, lines=2) if style.narrow() else title,
                                    font=style.font(-1)))
    return figure


def training_figure(record: Mapping[str, Any]) -> go.Figure:
    """Sink score per head and accuracy (left), BOS residual norm per layer (right), against step."""
    history = record["history"]
    steps = [h["step"] for h in history]
    scores = np.asarray([h["sink_scores"] for h in history])  # (checkpoints, layers, heads)
    norms = np.asarray([h["bos_norms"] for h in history])  # (checkpoints, layers)
    narrow = style.narrow()  # a phone: the two panels stacked, the legend below them
    figure = make_subplots(rows=2 if narrow else 1, cols=1 if narrow else 2, vertical_spacing=0.24,
                           subplot_titles=("Sink score per head,<br>induction accuracy",
                                           "Residual norm at BOS<br>per layer"))
    colors = style.token_colors(scores.shape[2])
    dashes = ("solid", "dot", "dash", "dashdot")
    for layer in range(scores.shape[1]):
        for head in range(scores.shape[2]):
            figure.add_trace(go.Scatter(x=steps, y=scores[:, layer, head], mode="lines",
                                        name=f"layer {layer} head {head}",
                                        line=dict(color=colors[head], dash=dashes[layer % 4])), row=1, col=1)
        figure.add_trace(go.Scatter(x=steps, y=norms[:, layer], mode="lines+markers",
                                    name=f"BOS norm, layer {layer}",
                                    line=dict(color=style.PALETTE.ink, dash=dashes[layer % 4])),
                         row=2 if narrow else 1, col=1 if narrow else 2)
    figure.add_trace(go.Scatter(x=steps, y=[h["accuracy"] for h in history], mode="lines+markers",
                                name="induction accuracy", line=dict(color=style.PALETTE.ink, width=3)),
                     row=1, col=1)
    figure.add_hline(y=SINK_THRESHOLD, line=dict(color=style.PALETTE.axis_line, dash="dash"), row=1, col=1)
    figure.update_xaxes(title_text="training step", **style.axis_style())
    figure.update_yaxes(**style.axis_style())
    figure.update_yaxes(range=[0, 1.02], row=1, col=1)
    figure.update_layout(**style.base_layout(height=900 if narrow else 440, delta=-2,
                                             margin=dict(l=20, r=20, t=80, b=40)),
                         legend=dict(orientation="h", x=0, y=-0.1, yanchor="top") if narrow else {})
    return figure
