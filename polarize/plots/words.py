"""A figure that says, in words, why there is nothing to draw (too little data), instead of raising."""

from __future__ import annotations

import plotly.graph_objects as go

from polarize.plots.style import base_layout, font, wrap

__all__ = ["words_figure"]


def words_figure(text: str, *, height: int = 320) -> go.Figure:
    """An empty figure holding ``text`` in its middle (no axes): what a notebook shows for too little data.

    Parameters
    ----------
    text : str
        One or two sentences, plain text (it is escaped: ``<`` and ``&`` show as typed).
    height : int
        The figure's height in pixels.
    """
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    figure = go.Figure(layout=base_layout(height=height))
    figure.add_annotation(text=wrap(escaped, 70), x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
                          font=font(2))
    figure.update_xaxes(visible=False)
    figure.update_yaxes(visible=False)
    return figure
