"""A figure that says, in words, why there is nothing to draw (too little data), instead of raising."""

from __future__ import annotations

from typing import Any

from polarize.plots.style import base_layout, font, plotly_template, wrap

__all__ = ["words_figure"]


def words_figure(text: str, *, height: int = 320) -> dict[str, Any]:
    """An empty figure holding ``text`` in its middle (no axes): what a notebook shows for too little data.

    Parameters
    ----------
    text : str
        One or two sentences, plain text (it is escaped: ``<`` and ``&`` show as typed).
    height : int
        The figure's height in pixels.
    """
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    layout = base_layout(height=height) | dict(
        annotations=[dict(text=wrap(escaped, 70), x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
                          font=font(2))],
        xaxis=dict(visible=False), yaxis=dict(visible=False), template=plotly_template())
    return dict(data=[], layout=layout, frames=[])
