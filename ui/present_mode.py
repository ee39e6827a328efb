"""Presentation mode in the app: read from the address, the page's look, figures fitted, decks in turn.

``?present=true`` on any page, or Streamlit's ``?embed=true``, turns it on: the sidebar
starts collapsed, captions and help go, type is ``PRESENT_SCALE`` times larger, and every
figure fits the window's height (``polarize.web.fit``). A deck is presented by opening
its slides' addresses one after another (``follow``), with Previous and Next above the view.
"""

from __future__ import annotations

import streamlit as st

from polarize.plots.display import NARROW_BELOW
from polarize.web import links
from polarize.web.deck_store import Slide
from polarize.web.pages import PAGES
from polarize.web.pages.deck import bar_title
from polarize.web.view import Link
from ui.navigation import switch_to

__all__ = ["FOLLOW", "draw_link", "follow", "look", "on", "show_bar", "showing", "sidebar_state"]

TYPE_SCALE = 1.5
"""The page's type in presentation mode, times the usual (figures: ``plots.style.PRESENT_SCALE``)."""
FOLLOW, SHOW = "_follow", "_show"
"""Session keys: the page a slide opens (to read its link afresh); the deck being shown and where."""

# Our own CSS, no user text: larger type (Streamlit sizes everything in rem), less blank space,
# no captions or help icons, the main column the whole width. On a phone the side padding (room
# for the sidebar's arrow) would leave the column narrower than a phone figure's transport, which
# Plotly lays out in pixels: its last button was cut off; there the title goes under the arrow.
_CSS = f"""<style>
html {{font-size: {TYPE_SCALE * 100:.0f}%;}}
[data-testid='stHeader'] {{background: transparent; height: 2.2rem; min-height: 0;}}
[data-testid='stMainBlockContainer'] {{padding: 0.4rem 1.2rem 0.4rem 2.4rem; max-width: none;}}
[data-testid='stMainBlockContainer'] h1 {{font-size: 1.6rem; padding: 0 0 0.3rem;}}
[data-testid='stCaptionContainer'], [data-testid='stTooltipIcon'] {{display: none;}}
.st-key-show_bar button {{min-height: 0; padding: 0.05rem 0.6rem;}}
.st-key-show_bar p {{font-size: 0.75rem;}}
@media (max-width: {NARROW_BELOW - 1}px) {{
  [data-testid='stMainBlockContainer'] {{padding: 2.4rem 0.5rem 0.4rem 1rem;}}
}}
</style>"""


def on() -> bool:
    """Whether this run is in presentation mode (``?present=true``, or embedded: ``?embed=true``)."""
    return bool(links.presenting(st.query_params.to_dict()) or st.context.is_embedded)


def sidebar_state() -> str:
    """``st.set_page_config``'s ``initial_sidebar_state``: collapsed in presentation mode, else
    Streamlit's "auto" (expanded, but collapsed on a phone, where it would cover the page)."""
    return "collapsed" if on() else "auto"


def look(presenting: bool) -> None:
    """The page's look in presentation mode (nothing otherwise)."""
    if presenting:
        st.html(_CSS)


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
