"""Figures of an attention-sink run (a record checked by ``polarize.sinks.runs.check_run``).

``attention_figure``: attention maps, one panel per layer and head (query x key),
animated over the training checkpoints, sink heads marked in their titles.
``training_figure``: sink score of every head and induction accuracy against the step.
``massive_figure``: the residual norm at BOS per layer beside the tied toy model's
growing column of ``U`` (the same massive activation, in the transformer and the toy).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
from plotly.colors import get_colorscale
from plotly.subplots import make_subplots

from polarize.plots import style
from polarize.plots.animation import animation_controls
from polarize.plots.comparisons import tied_panels
from polarize.plots.geometry import (
    EDGE,
    HEATMAP_ROW,
    MASSIVE_ROW,
    ON_TOP,
    PHONE_HEATMAP_ROW,
    PHONE_TRAINING_PLOT,
    TITLE_LINE,
    TRAINING_AXIS_ROOM,
    margins,
)
from polarize.plots.lines import Line, Panel
from polarize.plots.multiples import animated_grid, legend_height
from polarize.sinks.metrics import SINK_THRESHOLD, sink_heads

__all__ = ["attention_figure", "massive_figure", "token_labels", "training_figure"]

_DASHES = ("solid", "dot", "dash", "dashdot")


def token_labels(tokens: list[int], vocab: int) -> list[str]:
    """Axis labels: BOS, the tokens, the query marked with a prime (its base token)."""
    return [f"{i}:BOS" if t == 0 else f"{i}:{t - vocab}\u2032" if t >= vocab else f"{i}:{t}"
            for i, t in enumerate(tokens)]


def _titles(record: Mapping[str, Any], step: int, narrow: bool = False) -> list[str]:
    """Panel titles at a checkpoint: each head's sink score, a star on the sink heads (on a desktop
    with the word; on a phone, where "sink 0.98 \u2605 SINK" ran into its neighbour, the star alone:
    the caption says what it marks). The layer is the row's label (``attention_figure``)."""
    entry = next(h for h in record["history"] if h["step"] == step)
    scores = np.asarray(entry["sink_scores"])
    sinks = sink_heads(scores, entry["accuracy"])
    mark = " \u2605" if narrow else " \u2605 SINK"
    # One line a title on a desktop (two lines a row took 17 px of the heatmaps' 55 at 1280 x 720);
    # on a phone two, so that neighbours' titles stay apart in its half-width panels.
    return [f"head {head}{'<br>' if narrow else ': '}sink {scores[layer, head]:.2f}"
            + (mark if sinks[layer, head] else "")
            for layer in range(scores.shape[0]) for head in range(scores.shape[1])]


def _playing(controls: dict[str, Any]) -> dict[str, Any]:
    """The shared animation controls made to redraw every frame and to label it by training step.

    Plotly moves only scatter traces between frames without a redraw; heatmaps and
    the panel titles change only when the frame is redrawn.
    """
    for menu in controls["updatemenus"]:
        for button in menu["buttons"]:
            if button["method"] == "animate":  # not the step buttons (polarize/web/transport.js steps them)
                button["args"][1]["frame"]["redraw"] = True
    slider = controls["sliders"][0]
    for step in slider["steps"]:
        step["args"][1]["frame"]["redraw"] = True
    slider["currentvalue"]["prefix"] = "training step "
    return controls


def attention_figure(record: Mapping[str, Any], sequence: int = 0, *, narrow: bool = False) -> dict[str, Any]:
    """Attention weights at every checkpoint as an animation, layers as rows and heads as columns.

    Parameters
    ----------
    record : mapping
        A run record: ``maps``, per checkpoint, weights of shape (sequences, layers, heads,
        length, length); ``history`` with each checkpoint's sink scores and accuracy.
    sequence : int
        Which stored evaluation sequence.
    narrow : bool
        For a phone: two heads a row.

    Returns
    -------
    dict
        The figure dict: ``layers x heads`` heatmaps showing the end of training (where the sinks are:
        the numbers a page shows are for it), one frame per checkpoint (named by its step), play buttons and a
        step slider below. One colour scale for every frame.
    """
    snapshots = record["maps"]
    stack = np.asarray([np.asarray(s["weights"])[sequence] for s in snapshots])  # (C, L, H, T, T)
    layers, heads = stack.shape[1:3]
    cols = min(2, heads) if narrow else heads
    rows = -(-layers * heads // cols)
    plot = (PHONE_HEATMAP_ROW if narrow else HEATMAP_ROW) * rows
    head_room = 130 if narrow else 78  # the title, then the first row's title lines
    # Between rows the lower row's title lines: the keys are labelled under the last row only (every
    # panel has the same keys), and the rows by their layer (at 1280 x 720 the rotated keys under
    # each row and two title lines left the heatmaps 55 px tall).
    titles = _titles(record, snapshots[-1]["step"], narrow)
    layout = make_subplots(rows=rows, cols=cols, subplot_titles=titles, horizontal_spacing=0.04,
                           vertical_spacing=(45 if narrow else 2 * TITLE_LINE) / plot).layout.to_plotly_json()
    labels = token_labels(record["map_tokens"][sequence], record["config"].vocab)
    low, top = min(0.0, float(stack.min())), float(max(stack.max(), 1e-9))
    data = []
    for layer in range(layers):
        for head in range(heads):
            cell = layer * heads + head
            row, col = divmod(cell, cols)
            suffix = "" if cell == 0 else str(cell + 1)  # make_subplots numbers the cells' axes row by row
            data.append(dict(type="heatmap", z=stack[-1, layer, head], x=labels, y=labels, zmin=low, zmax=top,
                             colorscale=get_colorscale("Blues"), showscale=layer == 0 and head == heads - 1,
                             hovertemplate="query %{y}<br>key %{x}<br>weight %{z:.3f}<extra></extra>",
                             xaxis=f"x{suffix}", yaxis=f"y{suffix}"))
            # Keys and queries at the panels' titles' size (13 px; at 11 they were drawn 9 to 10 px
            # high); plotly leaves out labels that would not fit a panel, never shrinks them.
            layout["yaxis" + suffix].update(autorange="reversed", showticklabels=col == 0,
                                            tickfont=style.font(-4), automargin=True,
                                            title=dict(text=f"layer {layer}" if col == 0 else "",
                                                       font=style.font(-3)))
            layout["xaxis" + suffix].update(showticklabels=row == rows - 1, tickangle=-90,
                                            tickfont=style.font(-4), automargin=True)
    for note in layout["annotations"]:
        style.layout_update(note, font=style.font(-4))
    panels = layout["annotations"]
    names = [str(s["step"]) for s in snapshots]
    frames = []
    for c, snapshot in enumerate(snapshots):
        titles = _titles(record, snapshot["step"], narrow)
        frames.append(dict(name=names[c], data=[dict(type="heatmap", z=stack[c, layer, head])
                                                for layer in range(layers) for head in range(heads)],
                           layout=dict(annotations=[{**panel, "text": text}
                                                    for panel, text in zip(panels, titles, strict=True)])))
    title = "Attention (rows: queries, columns: keys) during training"
    # On a phone the transport is on top (``geometry.margins``), the title under it; the rotated keys
    # under the last row keep the room the transport leaves below.
    top, bottom = margins(head_room, narrow=True) if narrow else (head_room, 130)
    height = plot + top + bottom
    place = dict(yref="container", yanchor="top", y=1 - (ON_TOP + 3 * EDGE) / height) if narrow else {}
    style.layout_update(layout, **style.base_layout(height=height, delta=-2,
                                                    margin=dict(l=20, r=20, t=top, b=bottom)),
                        title=dict(text=style.wrap(title, 36) if narrow else title, font=style.font(-1),
                                   **place),
                        meta=dict(animated=list(range(layers * heads))),  # what a clip redraws
                        **_playing(animation_controls(names, names, plot_height=plot, start=len(names) - 1,
                                                      narrow=narrow, top=top)))
    return dict(data=data, layout=layout, frames=frames)


def training_figure(record: Mapping[str, Any], *, narrow: bool = False) -> dict[str, Any]:
    """Sink score of every head (colour: head, dash: layer) and induction accuracy against the step
    (``narrow``: for a phone, the legend below the panel, in a margin of its own)."""
    history = record["history"]
    steps = [h["step"] for h in history]
    scores = np.asarray([h["sink_scores"] for h in history])  # (checkpoints, layers, heads)
    colors = style.token_colors(scores.shape[2])
    data = [dict(type="scatter", x=steps, y=scores[:, layer, head], mode="lines",
                 name=f"layer {layer} head {head}", line=dict(color=colors[head], dash=_DASHES[layer % 4]))
            for layer in range(scores.shape[1]) for head in range(scores.shape[2])]
    data.append(dict(type="scatter", x=steps, y=[h["accuracy"] for h in history], mode="lines+markers",
                     name="induction accuracy", line=dict(color=style.PALETTE.ink, width=3)))
    title = "Sink score per head, induction accuracy"
    size = style.font(-3)["size"]
    below = legend_height([t["name"] for t in data], size=size, narrow=True) if narrow else 0
    bottom = TRAINING_AXIS_ROOM + below if narrow else 40
    height = 80 + PHONE_TRAINING_PLOT + bottom if narrow else 420
    layout = style.base_layout(height=height, delta=-2, margin=dict(l=20, r=20, t=80, b=bottom)) | dict(
        title=dict(text=style.wrap(title, 36) if narrow else title, font=style.font(-1)),
        xaxis=dict(title=dict(text="training step"), **style.axis_style()),
        yaxis=dict(title=dict(text="sink score, accuracy"), **style.axis_style(), range=[0, 1.02]),
        # The threshold across the plot (what ``go.Figure.add_hline`` draws).
        shapes=[dict(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=SINK_THRESHOLD, y1=SINK_THRESHOLD,
                     line=dict(color=style.PALETTE.axis_line, dash="dash"))],
        template=style.plotly_template())
    if narrow:  # under the x title; its rows are estimated high, so the spare room goes below it
        layout["legend"] = dict(orientation="h", x=0, y=-TRAINING_AXIS_ROOM / PHONE_TRAINING_PLOT,
                                yanchor="top", font=style.font(-3))
    return dict(data=data, layout=layout, frames=[])


def massive_figure(record: Mapping[str, Any], tied: Any, *, narrow: bool = False) -> dict[str, Any]:
    """The residual norm at BOS per layer (left) beside the tied model's column norms of ``U`` (right).

    Parameters
    ----------
    record : mapping
        A run record (``history`` with ``bos_norms``, one per layer, at each checkpoint).
    tied : polarize.diagnostics.Result
        A run of the tied model (``model="tied"``); its panel is the Massive activations page's.

    Returns
    -------
    dict
        The figure dict: two static panels: norms against the training step, and against the toy's time.
    """
    history = record["history"]
    steps = np.asarray([h["step"] for h in history], dtype=float)
    norms = np.asarray([h["bos_norms"] for h in history])  # (checkpoints, layers)
    bos = Panel(title="Transformer: residual norm at BOS", x_title="training step", log_x=False,
                y_floor=(0.0, 1.0), markers=True, lines=tuple(
                    Line(x=steps, y=norms[:, layer], name=f"BOS, after layer {layer}",
                         color=style.PALETTE.alert, width=3.5 - layer, dash=_DASHES[layer % 4],
                         moving=False, legend=True)
                    for layer in range(norms.shape[1])))
    toy = tied_panels(int(np.shape(tied.s)[1]), tied)[-1]
    toy = dataclasses.replace(toy, title=f"Tied toy model, {toy.title}")
    return animated_grid([bos, toy], cols=2, row_height=MASSIVE_ROW, legend=True, animated=False,
                         narrow=narrow)
