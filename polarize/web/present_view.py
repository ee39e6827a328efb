"""Presentation mode of a view: no small print, larger type, figures that fit the window.

A lecturer opens a page with ``?present=true`` (or embeds it, ``?embed=true``): the
view shows what the hall reads from the back row. Captions and help texts go (the
lecturer says them), and every figure takes ``plots.style.PRESENT_SCALE`` times its
type and at most the window's height (``plots.present.presented``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from polarize.plots.present_figure import WIDTH, presented
from polarize.web.view import Caption, Columns, Metric, Plot, View

__all__ = ["presented_view"]

_GAP = 24
"""Pixels between columns (Streamlit's gap at the presented page's type)."""


def presented_view(view: View, *, height: int | None) -> View:
    """``view`` for presentation mode, each figure at most ``height`` px tall (a new view).

    Parameters
    ----------
    view : View
        Not modified (views are shared through the renderer's cache).
    height : int or None
        Pixels a figure may take: the window's height less the page's title; None: figures as
        they are (a phone's), only the small print goes.
    """
    return replace(view, blocks=_blocks(view.blocks, height, WIDTH), sidebar="")


def _blocks(blocks: tuple[Any, ...], height: int | None, width: float) -> tuple[Any, ...]:
    """The blocks presented, a figure ``width`` px wide (its column's share of the page's)."""
    out: list[Any] = []
    for block in blocks:
        if isinstance(block, Caption):
            continue
        if isinstance(block, Plot):
            figure = block.figure if height is None else presented(block.figure, height=height, width=width)
            block = replace(block, figure=figure, caption="")
        elif isinstance(block, Metric):
            block = replace(block, help="")
        elif isinstance(block, Columns):
            shares = block.widths or (1,) * len(block.columns)
            places = [width * share / sum(shares) - _GAP for share in shares]
            columns = zip(block.columns, places, strict=True)
            block = replace(block, columns=tuple(_blocks(column, height, place) for column, place in columns))
        out.append(block)
    return tuple(out)
