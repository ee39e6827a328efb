"""Presenting a lecture deck: its slides' addresses opened one after another, a bar above the view.

A deck is presented by opening its first slide's address in presentation mode (``follow``), with
Previous, Next and End above the view (``show_bar``) and the slide's notes in the sidebar; a deck's
link (a ``Link`` block) is a button that starts it (``draw_link``).
"""

from __future__ import annotations

import streamlit as st

from polarize.web import links
from polarize.web.pages import PAGES
from polarize.web.pages.deck import bar_title
from polarize.web.slides import Slide
from polarize.web.view import Link
from ui.navigation import switch_to

__all__ = ["FOLLOW", "draw_link", "follow", "show_bar", "showing"]

FOLLOW, SHOW = "_follow", "_show"
"""Session keys: the page a slide opens (to read its link afresh); the deck being shown and where."""


def follow(slides: tuple[Slide, ...], index: int) -> None:
    """Open slide ``index`` of ``slides`` in presentation mode, remembering the deck.

    The page it opens reads the slide's address as a first visit would (``FOLLOW``), not the
    values it was last left with.
    """
    target = links.resolve(slides[index].link, PAGES)
    if target is None:
        return
    spec, query = target
    st.session_state[FOLLOW] = spec.name
    st.session_state[SHOW] = (slides, index) if len(slides) > 1 else None
    switch_to(spec.name, query | {links.PRESENT: "true"})


def draw_link(block: Link, page: str) -> None:
    """A button opening ``block``'s slides, passing over those whose address names no page of the app
    (shown as text when none is left)."""
    slides = tuple(slide for slide in block.slides if links.resolve(slide.link, PAGES))
    if not slides:
        st.text("Not a page of this app: " + " ".join(slide.link for slide in block.slides))
    elif st.button(block.label, key=f"{page}_{block.key}", help=block.help or None):
        follow(slides, 0)


def show_bar(presenting: bool) -> int | None:
    """Previous, Next and End above the view while a deck is presented, the slide's notes in the sidebar;
    the slide's index (None: no deck presented)."""
    if not showing(presenting):
        return None
    slides, index = st.session_state[SHOW]
    with st.container(key="show_bar", horizontal=True, vertical_alignment="center"):
        if st.button("\u25c0 Previous", key="_show_back", disabled=index == 0):
            follow(slides, index - 1)
        if st.button("Next \u25b6", key="_show_next", disabled=index == len(slides) - 1):
            follow(slides, index + 1)
        if st.button("End", key="_show_end"):
            st.session_state[SHOW] = None
            switch_to("deck")
        st.markdown(bar_title(slides, index), width="content")
    if slides[index].notes:
        st.sidebar.subheader("Speaker notes")
        st.sidebar.text(slides[index].notes)
    return index


def showing(presenting: bool) -> bool:
    """Whether a deck is being presented (its bar is above the view)."""
    return bool(st.session_state.get(SHOW)) and presenting
