"""A view fitted to the window: figures no taller than the room below what is above them.

A lecturer opens a page with ``?present=true`` (or embeds it, ``?embed=true``): the
view shows what the hall reads from the back row. Captions and help texts go (the
lecturer says them), and every figure takes ``plots.style.PRESENT_SCALE`` times its
type and at most the window's height (``plots.present_figure.presented``). In normal mode
the figures keep their type and small print and are only fitted (``fitted_view``), so a
page's main figure and its transport (play, slider, time) are on screen together.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from polarize.plots.phone import GROWTH, controls_on_top
from polarize.plots.phone import WIDTH as PHONE_WIDTH
from polarize.plots.present_figure import LEAST_ROW, WIDTH, presented
from polarize.plots.style import PRESENT_SCALE
from polarize.web.view import Caption, Columns, Metric, Plot, View, rebuild, walk

__all__ = ["FIGURE_GAP", "HEADER", "LEAST_SHARE", "figure_first", "figure_room", "fitted_view", "main_block",
           "on_a_phone", "presented_view"]

_GAP = 24
"""Pixels between columns (Streamlit's gap at the presented page's type)."""
HEADER = 60
"""Pixels of Streamlit's header, which stays over the page's top when it is scrolled."""
FIGURE_GAP = 16
"""Pixels left free below a fitted figure."""
LEAST_SHARE = 0.5
"""The least share of the window the main figure is given below what is above it: with less
room there (a page that explains first), it takes the window's height and is seen scrolled to."""


def figure_room(window: int, top: int) -> int:
    """Pixels of height the page's main figure may take, ``top`` px below the page's top.

    Parameters
    ----------
    window : int
        The window's height in px.
    top : int
        Pixels above the figure (title, lead, notes, as measured on the page).

    Returns
    -------
    int
        The window below ``top`` (the figure and its controls show with the page at its top), or,
        when that is less than ``LEAST_SHARE`` of the window, the window under Streamlit's header.
    """
    room = window - top - FIGURE_GAP
    return room if room >= LEAST_SHARE * window else window - HEADER - FIGURE_GAP


def presented_view(view: View, *, height: int | None, width: float = WIDTH) -> View:
    """``view`` for presentation mode, each figure at most ``height`` px tall (a new view).

    Parameters
    ----------
    view : View
        Not modified (views are shared through the renderer's cache).
    height : int or None
        Pixels a figure may take: the window's height less the page's title; None: figures as
        they are (a phone's), only the small print goes.
    width : float
        Pixels of the page's main column.
    """
    return replace(view, blocks=_blocks(view.blocks, height, width, present=True), sidebar="")


def fitted_view(view: View, *, height: int, width: float, stacked: bool = False) -> View:
    """``view`` in normal mode, each figure at most ``height`` px tall, its type and small print kept.

    Parameters
    ----------
    view : View
        Not modified.
    height : int
        Pixels a figure may take (``figure_room``).
    width : float
        Pixels of the page's main column (legends and crowded panels are judged at it).
    stacked : bool
        Whether columns are stacked (a phone's: Streamlit stacks them), each the column's width; rows
        of panels then keep ``present_figure.LEAST_ROW`` px (a phone's figure may be taller than
        ``height`` rather than crushed).
    """
    return replace(view, blocks=_blocks(view.blocks, height, width, present=False, stacked=stacked))


def on_a_phone(view: View, *, width: float | None = None, window: int | None = None) -> View:
    """``view`` for a phone (a new view): each figure fitted to the window, seen scrolled to under
    Streamlit's header, and each animated figure's transport moved above its panels, so that Play,
    the time and the slider show at the figure's top (``plots.phone``).

    Parameters
    ----------
    view : View
        Built for a phone (``plots.style.narrow``); not modified.
    width : float, optional
        Pixels of the page's main column (None: ``plots.phone.WIDTH``); a phone stacks columns.
    window : int, optional
        Pixels of the window's height (None, not measured yet: the figures keep their height). A
        figure is fitted ``plots.phone.GROWTH`` px shorter than the room, for its transport on top;
        one that grew more (a title or a legend moved under the band) is fitted again, shorter by
        the excess.
    """
    width = width or PHONE_WIDTH
    if window is None:
        return replace(view, blocks=_on_top(view.blocks, width, None))
    room = window - HEADER - FIGURE_GAP
    fitted = fitted_view(view, height=room - GROWTH, width=width, stacked=True)
    return replace(fitted, blocks=_on_top(fitted.blocks, width, room))


def _on_top(blocks: tuple[Any, ...], width: float, room: int | None) -> tuple[Any, ...]:
    return rebuild(blocks, lambda block: replace(block, figure=_phone_figure(block.figure, width, room))
                   if isinstance(block, Plot) else block)


def _phone_figure(figure: Any, width: float, room: int | None) -> Any:
    moved = controls_on_top(figure, width=width)
    excess = _height(moved) - room if room is not None and moved is not figure else 0
    if excess <= 0:
        return moved
    shorter = presented(figure, height=_height(figure) - excess, width=width, scale=1.0, least_row=LEAST_ROW)
    return controls_on_top(shorter, width=width)


def _height(figure: Any) -> int:
    layout = figure["layout"] if isinstance(figure, dict) else figure.layout
    return int(layout["height"] or 0)


def main_block(blocks: tuple[Any, ...]) -> int | None:
    """The index of the first block that holds a figure (the page's main figure), None if none does."""
    for i, block in enumerate(blocks):
        if any(isinstance(inner, Plot) for inner in walk((block,))):
            return i
    return None


def figure_first(view: View) -> View:
    """``view`` with the rows of numbers above its main figure moved just below it (a new view).

    Numbers are a run's outcome: above the figure they push it and its Play button out of the
    window, and they tell the end before the run has played.
    """
    main = main_block(view.blocks)
    if main is None:
        return view
    before = view.blocks[:main]
    numbers = tuple(block for block in before if _numbers(block))
    if not numbers:
        return view
    rest = tuple(block for block in before if not _numbers(block))
    return replace(view, blocks=(*rest, view.blocks[main], *numbers, *view.blocks[main + 1:]))


def _numbers(block: Any) -> bool:
    """Whether ``block`` is a metric, or columns of metrics only."""
    inner = [b for b in walk((block,)) if not isinstance(b, Columns)]
    return bool(inner) and all(isinstance(b, Metric) for b in inner)


def _blocks(blocks: tuple[Any, ...], height: int | None, width: float, *, present: bool,
            stacked: bool = False) -> tuple[Any, ...]:
    """The blocks fitted, a figure ``width`` px wide (its column's share of the page's, or all of it
    if ``stacked``); in presentation mode also larger and without their small print."""
    out: list[Any] = []
    scale = PRESENT_SCALE if present else 1.0
    for block in blocks:
        if isinstance(block, Caption) and present:
            continue
        if isinstance(block, Plot):
            figure = block.figure if height is None else presented(
                block.figure, height=height, width=width, scale=scale, least_row=LEAST_ROW if stacked else 0)
            block = replace(block, figure=figure, caption="" if present else block.caption)
        elif isinstance(block, Metric) and present:
            block = replace(block, help="")
        elif isinstance(block, Columns):
            shares = block.widths or (1,) * len(block.columns)
            places = [width if stacked else width * share / sum(shares) - _GAP for share in shares]
            columns = zip(block.columns, places, strict=True)
            fitted = [_blocks(column, height, place, present=present, stacked=stacked)
                      for column, place in columns]
            block = replace(block, columns=tuple(fitted))
        out.append(block)
    return tuple(out)
