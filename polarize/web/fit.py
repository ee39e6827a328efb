"""A view fitted to its display: ``fit(view, display)``, the one place a display meets the figures.

The renderer builds a page's view for the display's ``phone`` (``PageSpec.show``: panels stacked,
the transport on top), then fits it here, once per display:

- the rows of numbers and the tables above the main figure move just below it (``figure_first``);
- every figure is at most the room the display leaves it (``Display.figure_room``), its controls
  and legends kept in pixels (``plots.present_figure.presented``); on a phone, where Streamlit
  stacks columns, each figure takes the column's width and its rows keep ``geometry.LEAST_ROW`` px;
  the figure's ``layout.meta["bands"]`` says how (``present_figure.described``) and where its room is
  (``room``), and the chart element fits it again, in the browser, to the room below its top;
- in presentation mode (``?present=true`` or embedded) the figures take ``style.PRESENT_SCALE``
  times their type, none under ``style.PRESENT_LEAST`` px (``?present=true``), and captions and
  help go (the lecturer says them); on a phone only the small print goes (at the larger type its
  stacked panels would overlap);
- on a dark page the figures are repainted in the dark palette (``style.in_dark``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from polarize.plots.display import NARROW_BELOW, STEP, Display, Mode
from polarize.plots.geometry import LEAST_ROW
from polarize.plots.present_figure import BANDS, presented
from polarize.plots.style import PRESENT_LEAST, PRESENT_SCALE, in_dark
from polarize.web.view import Caption, Columns, Folded, Metric, Plot, Table, View

__all__ = ["figure_first", "fit", "main_block", "room"]


def fit(view: View, display: Display) -> View:
    """``view`` fitted to ``display`` (a new view; ``view``, shared by every session, is not modified).

    Parameters
    ----------
    view : View
        Built for ``display.phone`` (``PageSpec.show``).
    display : Display
        The window, the mode, the theme and the chrome's sizes (``polarize.plots.display``).

    Returns
    -------
    View
        Its main figure first, each figure fitted; in presentation mode without captions, help or
        the sidebar's note.
    """
    view = figure_first(view)
    present = display.presenting
    scale = PRESENT_SCALE if display.mode is Mode.PRESENT else 1.0
    blocks = _blocks(view.blocks, display, display.column_width, present=present, scale=scale)
    return replace(view, blocks=blocks, sidebar="" if present else view.sidebar)


def _blocks(blocks: tuple[Any, ...], display: Display, width: float, *, present: bool,
            scale: float) -> tuple[Any, ...]:
    """The blocks fitted, a figure ``width`` px wide (its column's share of the page's, or all of it
    on a phone, which stacks columns); in presentation mode without their small print."""
    out: list[Any] = []
    for block in blocks:
        if isinstance(block, Caption) and present:
            continue
        if isinstance(block, Plot):
            figure = presented(block.figure, height=display.figure_room, width=width, scale=scale,
                               least_row=LEAST_ROW if display.phone else 0,
                               least_font=PRESENT_LEAST if display.mode is Mode.PRESENT else 0,
                               even_logs=display.mode is Mode.PRESENT)
            figure["layout"]["meta"][BANDS]["room"] = room(display)
            block = replace(block, figure=in_dark(figure) if display.dark else figure,
                            caption="" if present else block.caption)
        elif isinstance(block, Table):  # laid out for its width and type (``polarize.web.tables``)
            block = replace(block, room=width, scale=display.page_type)
        elif isinstance(block, Metric) and present:
            block = replace(block, help="")
        elif isinstance(block, Folded):  # a verdict kept for after Play: fitted as if shown
            block = replace(block, blocks=_blocks(block.blocks, display, width, present=present, scale=scale))
        elif isinstance(block, Columns):
            shares = block.widths or (1,) * len(block.columns)
            places = [width if display.phone else width * share / sum(shares) - display.column_gap
                      for share in shares]
            fitted = (_blocks(column, display, place, present=present, scale=scale)
                      for column, place in zip(block.columns, places, strict=True))
            block = replace(block, columns=tuple(fitted))
        out.append(block)
    return tuple(out)


def room(display: Display) -> dict[str, Any]:
    """How the chart element finds a figure's room in the browser (``Display.figure_room``'s rule, with
    the figure's own top and the window's height): the window below the figure's top less ``gap``;
    when that is less than half the window, or on a ``phone``, the window under the ``header``. And
    the window's width the figure was made for (``window``), with the rule by which the page's viewport
    element finds it wrong (``narrow_below``, ``step``: ``ui.viewport``): such a figure is not the
    page's first draw, the one made for the window is coming (``madeElsewhere``,
    ``ui/chart_frontend/fit.js``)."""
    return {"header": display.header, "gap": display.gap, "phone": display.phone, "window": display.width,
            "narrow_below": NARROW_BELOW, "step": STEP}


def main_block(blocks: tuple[Any, ...]) -> int | None:
    """The index of the first block that holds a figure (the page's main figure), None if none does."""
    for i, block in enumerate(blocks):
        if isinstance(block, Plot) or (isinstance(block, Columns) and main_block(
                tuple(inner for column in block.columns for inner in column)) is not None):
            return i
    return None


def figure_first(view: View) -> View:
    """``view`` with the rows of numbers and the tables above its main figure moved just below it (a new
    view).

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
    """Whether ``block`` is a metric or a table, or columns of metrics only (a table of a sweep's grid
    above its figure pushed the figure to 471-996 px of a presented 1280 x 720 window)."""
    if isinstance(block, Columns):
        inner = [b for column in block.columns for b in column]
        return bool(inner) and all(isinstance(b, Metric) for b in inner)
    return isinstance(block, Metric | Table)
