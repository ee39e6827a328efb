"""The sidebar's "Present or add to a deck" box, drawn once by the renderer on every page.

It saves the view on screen (its link, a title, speaker notes) as a slide of a named deck, and
shows a presentation link to it (``st.code`` has a copy button), below the form. Which
store holds a visitor's decks is said here, once (``visitor_store``): the session's own, in
memory, unless an operator shares the server's disk (``polarize.env.shares_disk``). It is read
from the session wherever decks are read or written (a fragment's rerun and a button's callback
included) and handed to whatever needs it: there is no current store to forget to set.

The box is folded, and its inside is drawn only while it is open (``OPEN``): drawn folded, it
cost every first visit ``st.code``'s 1.5 MB syntax highlighter (a quarter of a second of the
browser's main thread) and every run a form, for a box most visits never open.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from polarize.env import shares_disk
from polarize.web import deck_store as deck
from polarize.web import links
from polarize.web.echo import echo
from polarize.web.page import PageSpec
from polarize.web.pages.deck import NAME, shown_error
from ui import theme

__all__ = ["deck_box", "visitor_store"]

_STORE, _SAID, _DECK = "_deck_store", "_deckbar_said", "_deckbar_deck"

OPEN = "deckbar_open"
"""The box's widget key: whether it is open (opening or folding it reruns the box alone)."""


def visitor_store() -> deck.DeckStore:
    """This visitor's decks: the session's own store in memory, or the server's file where an operator
    shares its disk (``DeckStore.shared``, which refuses otherwise)."""
    if shares_disk():
        return deck.DeckStore.shared()
    if _STORE not in st.session_state:
        st.session_state[_STORE] = deck.DeckStore.in_memory()
    return st.session_state[_STORE]


def deck_box(spec: PageSpec, values: dict[str, Any], *, presenting: bool = False) -> None:
    """The sidebar box: a form adding this view to a deck, and a presentation link to it."""
    if not spec.slide:
        return
    with st.sidebar:
        _box(spec, values, presenting)


@st.fragment
def _box(spec: PageSpec, values: dict[str, Any], presenting: bool) -> None:
    """The box: a fragment (``st.fragment``), so that adding a slide reruns the box alone, not the page
    and its figures (its arguments are those of the page's last run: the view on screen)."""
    box = st.expander("Present or add to a deck", icon=":material/slideshow:", key=OPEN, on_change="rerun")
    if not box.open:
        return
    with box:
        with st.form(f"{spec.name}_deckbar", border=False, clear_on_submit=False):
            key = f"{spec.name}_deckbar"
            # The deck last added to, kept while the box is folded (its widgets are not drawn then).
            name = st.text_input("Deck", value=st.session_state.get(_DECK, "Lecture"), max_chars=100,
                                 key=f"{key}_name")
            title = st.text_input("Slide title", value=spec.heading(values), max_chars=200,
                                  key=f"{key}_title")
            notes = st.text_area("Speaker notes", max_chars=10000, key=f"{key}_notes")
            if st.form_submit_button("Add to deck", icon=":material/add:"):
                st.session_state[_SAID] = (spec.name, *_add(name, links.link(spec, values), title, notes))
                st.session_state[_DECK] = name
        # What the last add said, on its page, in every run until the next add: shown once, it was
        # gone when a rerun queued behind the add's drew the box again at once. Another page drops it.
        said = st.session_state.get(_SAID)
        if said is not None and said[0] == spec.name:
            _, ok, message = said
            (st.success if ok else st.error)(message)
        elif said is not None:
            del st.session_state[_SAID]
        # The link comes last: st.code's syntax highlighter is a 1.5 MB chunk the browser fetches when the
        # box first opens, and the block grows by its wrapped lines only then (300 px for the Explorer's
        # link), moving whatever is below it. Above the form, it moved "Add to deck" away from a click
        # (tests/browser/test_deck_browser.py holds the chunk back and watches the button).
        st.code(_absolute(spec, links.link(spec, values, present=True)), language=None, wrap_lines=True)
        if not presenting:
            theme.caption("A link to this view in presentation mode: copy it with the button on its right.")


def _add(name: str, link: str, title: str, notes: str) -> tuple[bool, str]:
    """Append a slide to this visitor's deck ``name``: ``(ok, message)``, user strings in code spans
    (never links)."""
    try:
        slide = deck.Slide(link=link, title=title.strip(), notes=notes)
        saved = visitor_store().add_slide(name.strip(), slide)
    except deck.DeckError as exc:
        return False, shown_error(exc)
    return True, f"Added slide {len(saved.slides)} to the deck {echo(saved.name, NAME)}."


def _absolute(spec: PageSpec, link: str) -> str:
    """``link`` (``/rates?...``, ``/?...``) after the app's own address, when the browser told it.

    The browser's address is the app's root, or the root and this page's ``url_path`` (the
    default page may be opened either way).
    """
    url = st.context.url
    if not url:
        return link
    base = url.split("?", 1)[0].rstrip("/")
    if base.endswith("/" + spec.url_path):
        base = base[: -len(spec.url_path)].rstrip("/")
    return base + link
