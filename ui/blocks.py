"""A view's blocks on the page: one drawing function per block type (``polarize.web.view``)."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import streamlit as st

from polarize.plots.alt_text import describe
from polarize.web.page import selected_values
from polarize.web.pages import by_name
from polarize.web.view import Action, Caption, Columns, Header, Link, Maths, Metric, Plot, Table, Text, View
from ui import charts, present_mode, theme
from ui.state import current_values, settle, widget_key

__all__ = ["draw_block", "draw_downloads"]


def _columns(block: Columns, page: str) -> None:
    for column, blocks in zip(st.columns(block.widths or len(block.columns), gap=block.gap), block.columns,
                              strict=True):
        with column:
            for inner in blocks:
                draw_block(inner, page)


def _plot(block: Plot, page: str) -> None:
    key = f"{page}_{block.key}"
    clicks = {"on_select": lambda: _clicked(block, page), "selection_mode": "points"} if block.selects else {}
    # No chart toolbar: it showed on hover at the figure's top right, over the legend there (zoom is a
    # drag and a double click resets; the page's figures are in its downloads).
    config = {"displaylogo": False, "displayModeBar": False}
    # The figure in words first, for a screen reader (shown to no one else: ui.theme's SCREEN_READER).
    st.markdown(f"<p class='{theme.SCREEN_READER}'>{html.escape(describe(block.figure))}</p>",
                unsafe_allow_html=True)
    charts.chart(block.figure, key=key, theme=None, config=config, **clicks)
    if block.caption:
        st.caption(block.caption)


LONG_CELL = 32
"""Characters of a cell's text above which a table is drawn whole (it wraps) rather than as a grid."""


def _table(block: Table, page: str) -> None:
    """A grid (sortable, scrolls), or a plain table whose cells wrap for a ``wrap`` table with long text.

    The grid cuts a long cell at its column's width (Flow vs descent's "what happened" was read
    as "descent ends on tok..."); a plain table shows all of it, and is read out as a table.
    """
    rows = list(block.rows)
    if block.wrap and any(len(str(value)) > LONG_CELL for row in rows for value in row.values()):
        st.table(rows)
    else:
        st.dataframe(rows, key=f"{page}_table", hide_index=True)


def _clicked(block: Plot, page: str) -> None:
    """Chart callback (before the rerun): set the controls a clicked point names (``Plot.selects``).

    The widgets are not drawn yet, so their state may change; the rerun then runs the page
    with these values and writes them into the link.
    """
    spec = by_name(page)
    points = st.session_state[f"{page}_{block.key}"]["selection"]["points"]
    for key, value in selected_values(block, points, spec, settle(spec, current_values(spec))).items():
        st.session_state[widget_key(spec, key)] = value


def _action(block: Action, page: str) -> None:
    """A button (or file upload) that changes stored data; what it said shows under it after the rerun."""
    key, said = f"{page}_{block.key}", f"_{page}_{block.key}_said"
    if block.upload:
        file = st.file_uploader(block.label, type=list(block.upload), key=key, help=block.help or None)
        if file is not None and st.session_state.get(f"{said}_file") != file.file_id:
            st.session_state[f"{said}_file"] = file.file_id
            st.session_state[said] = block.run(file.getvalue())
            st.rerun()
    elif st.button(block.label, key=key, help=block.help or None):
        st.session_state[said] = block.run()
        st.rerun()
    if said in st.session_state:
        ok, message = st.session_state.pop(said)
        (st.success if ok else st.error)(message)


_DRAW: dict[type, Callable[[Any, str], None]] = {
    Text: lambda b, page: st.markdown(b.text),
    Caption: lambda b, page: st.caption(b.text),
    Header: lambda b, page: st.header(b.text),
    Maths: lambda b, page: st.latex(b.latex),
    Metric: lambda b, page: st.metric(b.label, b.value, help=b.help or None),
    Table: lambda b, page: _table(b, page),
    Plot: _plot,
    Columns: _columns,
    Action: _action,
    Link: present_mode.draw_link,
}


def draw_block(block: Any, page: str) -> None:
    _DRAW[type(block)](block, page)


def draw_downloads(view: View, page: str) -> None:
    if not view.downloads:
        return
    st.subheader("Downloads")
    # A row that wraps, each button as wide as its label: in equal columns the labels were cut.
    with st.container(horizontal=True, key=f"{page}_downloads"):
        for d in view.downloads:
            st.download_button(d.label, d.data, d.filename, mime=d.mime, on_click="ignore", icon=d.icon,
                               key=f"{page}_download_{d.key}", help=d.help, width="content")
