"""A view's blocks on the page: one drawing function per block type (``polarize.web.view``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import streamlit as st

from polarize.serve.admission import ServerBusy
from polarize.web import tables
from polarize.web.fit import main_block
from polarize.web.page import selected_values
from polarize.web.pages import by_name
from polarize.web.progress import progress_notices
from polarize.web.view import (
    Action,
    Caption,
    Columns,
    Download,
    Folded,
    Header,
    Link,
    Maths,
    Metric,
    Plot,
    Table,
    Text,
    View,
    walk,
)
from ui import charts, deck_show, theme
from ui.state import current_values, settle, widget_key

__all__ = ["APP_RERUN", "DRAFT", "draw_block", "draw_downloads", "draw_draft", "hold_main_figure"]

APP_RERUN = "_app_rerun"
"""Session key: set by a callback that changed the page's controls from inside the view (a fragment,
``ui.renderer._body``), which reruns only itself: the fragment then reruns the page's script."""


def _columns(block: Columns, page: str) -> None:
    for column, blocks in zip(st.columns(block.widths or len(block.columns), gap=block.gap), block.columns,
                              strict=True):
        with column:
            for inner in blocks:
                draw_block(inner, page)


def _folded(block: Folded, page: str) -> None:
    with st.expander(block.label, expanded=block.expanded):
        for inner in block.blocks:
            draw_block(inner, page)


# No chart toolbar: it showed on hover at the figure's top right, over the legend there (zoom is a
# drag and a double click resets; the page's figures are in its downloads).
_CONFIG = {"displaylogo": False, "displayModeBar": False}

DRAFT = "draft"
"""The key of the container of a view's draft, with its number (``draw_draft``: its class ``st-key-draft_1``,
``st-key-draft_2``, ...)."""


def _chart_key(block: Plot, page: str) -> str:
    """The key of ``block``'s chart element on ``page`` (the chart ``hold_main_figure`` holds for)."""
    return f"{page}_{block.key}"


def _plot(block: Plot, page: str) -> None:
    key = _chart_key(block, page)
    charts.chart(block.figure, key=key, config=_CONFIG,
                 on_click=(lambda: _clicked(block, page)) if block.selects else None)
    # hold_main_figure gives the browser this figure's bytes ahead: the same key, config and clicks.
    # The figure in words, for a screen reader (shown to no one else: ``theme.screen_reader``), after
    # it: Streamlit keeps a gap above an element even out of sight, which moved the figure down from
    # its place as measured (``ui.viewport``). Escaped HTML, never Markdown (a title may hold a user's
    # text, and Markdown would link a URL).
    theme.screen_reader(block.summary, key)
    if block.caption:
        theme.caption(block.caption)


def _table(block: Table, page: str) -> None:
    """The sortable grid, or plain tables whose cells wrap, as ``tables.layout`` chooses for the room.

    The grid cuts a long cell at its column's width (Flow vs descent's "what happened" was read
    as "descent ends on tok...") and hid the columns past a phone's width; a plain table shows all
    of its text, and is read out as a table. Parts follow each other in a container keyed
    ``tables_<page>`` (``theme.TABLES``; each part in one keyed ``table_<page>_<i>``). A plain table is
    escaped HTML (``tables.html``), never ``st.table``, which renders its cells' Markdown.
    """
    rows = list(block.rows)
    chosen = tables.layout(rows, block.room, scale=block.scale, wrap=block.wrap)
    if chosen.grid:
        st.dataframe(rows, key=f"{page}_table", hide_index=True)
        return
    with st.container(key=f"{theme.TABLES}_{page}"):
        for i, part in enumerate(chosen.parts):
            with st.container(key=f"table_{page}_{i}"):
                st.html(tables.html(rows, part))


def _clicked(block: Plot, page: str) -> None:
    """Chart callback (before the rerun): set the controls a clicked point names (``Plot.selects``).

    The widgets are not drawn yet, so their state may change; the rerun then runs the page
    with these values and writes them into the link (the chart is in the view's fragment, whose
    rerun asks for the page's: ``APP_RERUN``).
    """
    spec = by_name(page)
    points = st.session_state[_chart_key(block, page)]["click"] or []
    for key, value in selected_values(block, points, spec, settle(spec, current_values(spec))).items():
        st.session_state[widget_key(spec, key)] = value
    st.session_state[APP_RERUN] = True


def _action(block: Action, page: str) -> None:
    """A button (or file upload) that changes stored data; what it said shows under it after the rerun.

    The page shows what its last action said, in every run until its next action (``_said``): shown
    once, it was gone when a rerun queued behind the action's (a fragment's) drew the page again at
    once. An answer that asks (``(ok, message, choices)``) stays, its choices as buttons under it,
    until one is clicked; then that one's answer shows.
    """
    key, said, asking = f"{page}_{block.key}", _said_key(page, block), f"_{page}_{block.key}_asking"
    if block.upload:
        file = st.file_uploader(block.label, type=list(block.upload), key=key, help=block.help or None)
        if file is not None and st.session_state.get(f"{said}_file") != file.file_id:
            st.session_state[f"{said}_file"] = file.file_id
            _said(page, said, block.run(file.getvalue()))
            st.rerun()
    elif st.button(block.label, key=key, help=block.help or None):
        _said(page, said, block.run())
        st.rerun()
    if said in st.session_state:
        ok, message, *choices = st.session_state[said]
        if choices and choices[0]:
            del st.session_state[said]
            st.session_state[asking] = (message, choices[0])
        else:
            st.session_state.pop(asking, None)
            (st.success if ok else st.error)(message)
    if asking in st.session_state:
        _ask(key, said, asking, page)


def _said_key(page: str, block: Action) -> str:
    return f"_{page}_{block.key}_said"


def _said(page: str, said: str, answer: Any) -> None:
    """Keep ``answer`` as what the page's last action said (under its key ``said``): the answers of
    the page's earlier actions go."""
    for key in _answers(page):
        del st.session_state[key]
    st.session_state[said] = answer


def _answers(page: str) -> list[str]:
    """The session's keys of what the page's actions said."""
    prefix = f"_{page}_"
    return [k for k in st.session_state if str(k).startswith(prefix) and str(k).endswith("_said")]


def unshown_answers(page: str, view: View) -> None:
    """Show what an action said whose button ``view`` does not draw: deleting the last deck takes its
    Delete button away, and the answer, kept for that button, was never shown."""
    drawn = {_said_key(page, block) for block in walk(view.blocks) if isinstance(block, Action)}
    for key in _answers(page):
        if key not in drawn:
            ok, message, *_ = st.session_state[key]
            (st.success if ok else st.error)(message)


def _ask(key: str, said: str, asking: str, page: str) -> None:
    """The question an action asked, with a button for each choice."""
    message, choices = st.session_state[asking]
    st.info(message, icon=":material/help:")
    with st.container(horizontal=True):
        for choice in choices:
            if st.button(choice.label, key=f"{key}_{choice.key}", help=choice.help or None, width="content"):
                st.session_state.pop(asking)
                _said(page, said, choice.run())
                st.rerun()


_DRAW: dict[type, Callable[[Any, str], None]] = {
    Text: lambda b, page: st.markdown(b.text),
    Caption: lambda b, page: theme.caption(b.text),
    Header: lambda b, page: st.header(b.text),
    Maths: lambda b, page: st.latex(b.latex),
    Metric: lambda b, page: st.metric(b.label, b.value, help=b.help or None),
    Table: lambda b, page: _table(b, page),
    Plot: _plot,
    Columns: _columns,
    Folded: _folded,
    Action: _action,
    Link: deck_show.draw_link,
}


def _main_plot(view: View) -> Plot | None:
    """The page's main figure (``polarize.web.fit.main_block``'s first figure), None if it has none."""
    main = main_block(view.blocks)
    return None if main is None else next(b for b in walk((view.blocks[main],)) if isinstance(b, Plot))


def _payload(block: Plot, page: str) -> bytes:
    """What ``_plot`` gives the chart element for ``block`` (``charts.payload``), byte for byte."""
    return charts.payload(block.figure, config=_CONFIG, clicks=bool(block.selects),
                          key=_chart_key(block, page))


def hold_main_figure(shown: View, upcoming: View, page: str, button: str) -> bool:
    """Hold in the browser ``upcoming``'s main figure for a press of ``button``, which is to show it
    where ``shown``'s is now (``charts.hold``); whether it is held (both views have a main figure, in
    the same chart)."""
    now, then = _main_plot(shown), _main_plot(upcoming)
    if now is None or then is None or now.key != then.key:
        return False
    charts.hold(_payload(then, page), key=_chart_key(then, page), after=charts.revision(_payload(now, page)),
                button=button)
    return True


def draw_block(block: Any, page: str) -> None:
    _DRAW[type(block)](block, page)


def draw_draft(view: View, text: str, page: str, where: Any, count: int) -> None:
    """What a view has so far (``polarize.web.progress.draft``) in ``where`` (an ``st.empty``, in place of
    the last draft): ``text`` (what it still waits for), its warnings and its figures, as they are.

    ``count`` numbers this run's drafts: each figure's key is new (the whole view's figures, drawn
    after, keep theirs).
    """
    with where.container(key=f"{DRAFT}_{count}"):
        st.caption(text)
        for warning in view.warnings:
            st.warning(warning, icon=":material/warning:")
        for plot in view.plots():
            charts.chart(plot.figure, key=f"{page}_{DRAFT}{count}_{plot.key}", config=_CONFIG)


def draw_downloads(view: View, page: str) -> None:
    """The view's downloads: a button each, or one that makes a slow one (``_downloads``)."""
    if view.downloads:
        _downloads(view, page)


def _downloads(view: View, page: str) -> None:
    """The downloads row; the clip made, its download button takes the place of the one that made it.

    Not a fragment of its own: it is drawn inside the view's fragment (``ui.renderer``), so a click
    on "Make clip" reruns the view's fragment (its figure sent as a reference the browser holds). A
    fragment inside another crashed the page: when a run of the outer one is cut short by the next
    (a measure posted again), Streamlit drops the outer one's unsent messages but keeps the inner
    one's (``ForwardMsgQueue.clear`` keeps other fragments' deltas), which then address a place the
    dropped ones never made, and the frontend throws ("Bad delta path index 6 (should be between
    [0, 3])") and draws nothing more: a blank page, seen on first visits of the Explorer under load."""
    st.subheader("Downloads")
    asked = None
    # A row that wraps, each button as wide as its label: in equal columns the labels were cut.
    with st.container(horizontal=True, key=f"{page}_downloads"):
        for d in view.downloads:
            data = _made(d, page) if d.slow else d.data
            if data is None:  # a slow one not made yet: a button makes it, below, with its progress
                slot = st.empty()
                label = f"Make {d.label[:1].lower()}{d.label[1:]}"
                if slot.button(label, key=f"{page}_make_{d.key}", icon=d.icon, help=d.help, width="content"):
                    asked = d, slot
                continue
            _offer(d, data, page, st)
    if asked is not None:
        _make(*asked, page)


def _offer(d: Download, data: bytes | str, page: str, where: Any) -> None:
    """The download button of ``d`` (``data``), in ``where`` (the row, or a made one's place in it)."""
    where.download_button(d.label, data, d.filename, mime=d.mime, on_click="ignore", icon=d.icon,
                          key=f"{page}_download_{d.key}", help=d.help, width="content")


def _made(d: Download, page: str) -> bytes | str | None:
    """What a slow download made for this view (its ``data`` callable is the view's own), or None."""
    made = st.session_state.get(f"_{page}_made_{d.key}")
    return made[1] if made is not None and made[0] is d.data else None


def _make(d: Download, slot: Any, page: str) -> None:
    """Make a slow download with a progress bar, keep it for the session, and offer it in ``slot``
    (where the button that asked for it was)."""
    bar = st.progress(0.0, text=f"Making {d.filename}")
    start = time.perf_counter()
    try:
        with progress_notices(lambda fraction, text: bar.progress(fraction, text=text)):
            data = d.data() if callable(d.data) else d.data
    except ServerBusy as exc:  # a full queue of clips: said, and the button stays to try again
        bar.empty()
        st.warning(str(exc), icon=":material/hourglass_empty:")
        return
    st.session_state[f"_{page}_made_{d.key}"] = (d.data, data)
    bar.empty()
    _offer(d, data, page, slot)
    st.toast(f"{d.label} made in {time.perf_counter() - start:.1f} s: download it with its button.",
             icon=":material/check_circle:")
