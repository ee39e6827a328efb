"""The one Streamlit renderer: draws any page spec (``polarize.web.page.PageSpec``).

``render(spec)`` gives the page's controls their values (``ui.state``), draws them in
the sidebar (``ui.sidebar``), writes them into the address, computes the ``View`` the
spec makes of them (once per distinct job for the whole server: ``VIEWS``) and draws
its blocks (``ui.blocks``).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from polarize.serve.admission import queue_notices
from polarize.serve.cache import SharedCache
from polarize.web.failures import queue_notice
from polarize.web.leads import LEADS, TOURS
from polarize.web.page import PageSpec, Problem, Screen
from polarize.web.pages import by_name
from polarize.web.progress import progress_notices
from polarize.web.view import View
from ui import deckbar, present_mode, theme, transport
from ui.blocks import draw_block, draw_downloads
from ui.sidebar import sidebar
from ui.state import init_state, mended_note, share
from ui.viewport import viewport

__all__ = ["VIEWS", "render"]

VIEWS = SharedCache(32)
"""Every page's views, keyed by (page, job, screen) and shared by every session: a view is
immutable, and ``ui.charts`` hands its figures to Streamlit without building them again."""


def render(spec: PageSpec) -> None:
    """Draw a page: its controls in the sidebar and the address, then its view."""
    window = viewport(measure_height=present_mode.on())  # once a run, for every use of the window's size
    theme.dark_style(window.dark)
    deckbar.bind_store()
    present_mode.look()
    ignored = init_state(spec)
    values = sidebar(spec)
    share(spec, values)
    deckbar.deck_box(spec, values)
    _head(spec, values, ignored)
    job = spec.make_job(values)
    if isinstance(job, Problem):
        st.error(job.message, icon=":material/error:")
        st.stop()
    screen = Screen(narrow=window.narrow, dark=theme.dark(window.dark))  # a phone: panels stacked
    view = _view(spec, job, screen, spec.running(values))
    _show(present_mode.fitted(spec.name, (job, screen), view, window.height, narrow=screen.narrow), spec.name)


def _head(spec: PageSpec, values: dict[str, Any], ignored: dict[str, str]) -> None:
    """The title, the presentation bar, the caption and what the opening link had that was ignored."""
    st.title(spec.heading(values))
    present_mode.show_bar()
    _orientation(spec.name)
    caption = spec.caption(values)
    if caption and not present_mode.on():
        st.caption(caption)
    note = mended_note(spec, values)
    if note:
        st.info(note, icon=":material/swap_horiz:")
    if ignored:
        st.warning("This link had values this page could not use; it used the defaults instead:\n\n"
                   + "\n".join(f"- {line}" for line in ignored.values()), icon=":material/link_off:")


def _orientation(page: str) -> None:
    """The page's lead and its guided first visit (open the first time in a session), not on a slide."""
    if present_mode.on():
        return
    if page in LEADS:
        st.markdown(LEADS[page])
    if page in TOURS:
        seen = f"_{page}_toured"
        with st.expander("First visit? What to watch for", icon=":material/tour:",
                         expanded=seen not in st.session_state):
            st.markdown("\n".join(f"{i}. {step}" for i, step in enumerate(TOURS[page], 1)))
        st.session_state[seen] = True


def _view(spec: PageSpec, job: Any, screen: Screen, running: str) -> View:
    """The page's view of ``job``, from ``VIEWS`` or computed here with the session's notices.

    While it computes, this session sees its place in the run queue or a progress bar; a
    passing view (a busy server, a run cut at its time limit) is not kept, so the next
    rerun tries again.
    """
    notice, key = st.empty(), (spec.name, job, screen)
    with (st.spinner(running, show_time=True),
          queue_notices(lambda place: notice.info(queue_notice(place), icon=":material/hourglass_top:")),
          progress_notices(lambda fraction, text: notice.progress(fraction, text=text))):
        view = VIEWS.get(key, lambda: by_name(spec.name).show(job, screen))
    notice.empty()
    if view.passing:
        VIEWS.discard(key)
    return view


def _show(view: View, page: str) -> None:
    """Draw a view: its notes, its blocks, its downloads and the animated figures' transport."""
    if view.sidebar:
        st.sidebar.caption(view.sidebar)
    if view.error:
        st.error(view.error, icon=":material/error:")
        st.stop()
    for warning in view.warnings:
        st.warning(warning, icon=":material/warning:")
    for block in view.blocks:
        draw_block(block, page)
    draw_downloads(view, page)
    transport.controls(view)
