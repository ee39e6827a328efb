"""A table laid out for the room it has: the sortable grid, one plain table, or plain tables in parts.

A table's columns need room in words: the grid draws each cell on one line (and cuts what is
longer than its column), a plain table wraps a cell at its spaces, so it needs only its longest
word. On a phone, or in presentation mode's larger type, a comparison's seven or eight columns need
more than the page's width: the grid showed three of seven and hid the rest behind a sideways
scroll nobody is told of (Normalizers: 541 px of columns in a 354 px box). ``layout`` chooses by the
room (``Table.room``, set by ``polarize.web.fit``):

- the grid, when every column fits on one line (sortable; a ``wrap`` table with long text is never
  one: it would cut it);
- else one plain table, its cells wrapping, when the columns' longest words fit;
- else parts: plain tables one after another, each the first column (the row's name) and as many
  of the others as fit, so every column shows within the width and each row is named in each part.

The widths are estimates from the text (``text_px``): where one is a little short, a plain table
breaks a word rather than run past the page's width.

A plain table is our own HTML (``html``), every cell escaped text: Streamlit's ``st.table`` renders
its cells as Markdown, so a deck's slide titled ``[Log in](https://evil.example)`` showed as a link
in the app's own table (and ``*x*``, ``$x^2$`` and ``:red[...]`` as markup).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

__all__ = ["CLASS", "LONG_CELL", "LONG_WORD", "TYPE_PX", "Layout", "cell_text", "html", "layout", "text_px"]

CLASS = "polarize-table"
"""The class of a plain table (``html``), styled by ``ui.theme`` as Streamlit styles its own."""

TYPE_PX = 15.0
"""A table's type on a normal page, px (Streamlit's table type, 0.85 of its 17.5 px text); presentation
mode's page type scales it (``Display.page_type``)."""
_PAD = 17.0
"""A cell's padding and rule, px at ``TYPE_PX`` (measured: 8.5 + 6.4 + 1)."""
_SPARE = 1.1
"""The estimate's margin (a sans-serif's widths vary with the letters; wider is safe)."""
LONG_CELL = 32
"""Characters of a cell's text above which a ``wrap`` table is never the grid (the grid cuts it)."""
LONG_WORD = 20
"""Characters of a word past which a plain table breaks it anywhere (``ui.theme``): a link."""
_NARROW = set("iljtfr.,:;'!|()[] 1")
_WIDE = set("mwMW@%")


def text_px(text: str, type_px: float) -> float:
    """About how wide ``text`` is on one line in the page's sans-serif of ``type_px`` px.

    Source Sans' letters are about half their type wide, narrow ones (i, l, t, 1, punctuation)
    about 0.28, wide ones (m, w) and capitals more.
    """
    ems = sum(0.28 if c in _NARROW else 0.82 if c in _WIDE else 0.62 if c.isupper() else 0.52 for c in text)
    return ems * type_px


@dataclass(frozen=True)
class Layout:
    """How a table is drawn.

    Attributes
    ----------
    grid : bool
        The whole table as the sortable grid.
    parts : tuple of tuple of str
        Otherwise: the columns of each plain table, drawn one after the other (one part: the whole
        table, wrapping).
    """

    grid: bool
    parts: tuple[tuple[str, ...], ...]


def layout(rows: Sequence[Mapping[str, Any]], room: float | None, *, scale: float = 1.0,
           wrap: bool = False) -> Layout:
    """How to draw ``rows`` (column -> value) in ``room`` px of width at the page's type ``scale``.

    Parameters
    ----------
    rows : sequence of mapping
        The table's rows, every one with the same columns (the first names the row).
    room : float or None
        The width it may take; None (not fitted): the grid, or one plain table for a ``wrap`` table
        with long text, as before the room was known.
    scale : float
        The page's type, times a normal page's (presentation mode's 1.5).
    wrap : bool
        Long text in it is a sentence to be read whole: never cut by the grid.

    Returns
    -------
    Layout
    """
    columns = tuple(rows[0]) if rows else ()
    texts = {c: [str(c), *(cell_text(row.get(c)) for row in rows)] for c in columns}
    long = wrap and any(len(t) > LONG_CELL for c in columns for t in texts[c][1:])
    if room is None or not columns:
        return Layout(grid=not long, parts=(columns,))
    type_px, pad = TYPE_PX * scale, _PAD * scale

    def need(words: list[str]) -> float:
        return _SPARE * max(text_px(w, type_px) for w in words) + pad

    def wrapped(text: str) -> list[str]:  # a word past ``LONG_WORD`` (a link) breaks anywhere
        return [w[:LONG_WORD] for w in text.split()] or [""]

    whole = {c: need(texts[c]) for c in columns}
    if not long and sum(whole.values()) <= room:
        return Layout(grid=True, parts=(columns,))
    least = {c: need([w for t in texts[c] for w in wrapped(t)]) for c in columns}
    if sum(least.values()) <= room:
        return Layout(grid=False, parts=(columns,))
    key, parts, part = columns[0], [], [columns[0]]
    for column in columns[1:]:
        if len(part) > 1 and sum(least[c] for c in part) + least[column] > room:
            parts.append(tuple(part))
            part = [key]
        part.append(column)
    parts.append(tuple(part))
    return Layout(grid=False, parts=tuple(parts))


def cell_text(value: Any) -> str:
    """A cell's value as the table shows it: nothing for None, yes or no for a truth value."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def html(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """The ``columns`` of ``rows`` as a plain HTML table, every cell text (escaped, never markup).

    The first column names each row (a row header, read out with each cell); a line break in a
    cell (a slide's notes) shows as one. A cell with a word past ``LONG_WORD`` characters (a link) is
    of the class ``long``: it breaks that word anywhere, as ``layout`` counted (a cell breaking
    anywhere lets the browser narrow its column to a letter: "0.1" was drawn "0." over "1").

    Parameters
    ----------
    rows : sequence of mapping
        Column -> value; a column a row lacks is an empty cell.
    columns : sequence of str
        The columns to show, in order.

    Returns
    -------
    str
        ``<table class="polarize-table">...</table>``, for ``st.html``.
    """
    def cell(tag: str, value: Any, scope: str = "") -> str:
        text = cell_text(value)
        long = " class=long" if any(len(word) > LONG_WORD for word in text.split()) else ""
        return f"<{tag}{scope and f' scope={scope}'}{long}>{escape(text)}</{tag}>"

    head = "".join(cell("th", column, "col") for column in columns)
    body = "".join("<tr>" + "".join(cell("th", row.get(c), "row") if i == 0 else cell("td", row.get(c))
                                    for i, c in enumerate(columns)) + "</tr>" for row in rows)
    return f'<table class="{CLASS}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
