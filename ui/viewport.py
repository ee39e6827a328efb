"""The browser window, measured by a tiny component (``viewport_frontend/index.html``), as a ``Display``.

``last(...)`` is the display the page last posted: the window's width, whether the page shows a dark
theme (and whether it was chosen in the app menu) and the main column's width; before it has posted
in this session, what the browser's cookie remembers of an earlier one (``COOKIE``), else the
default, a 1280 x 720 projector, in the theme the browser asked for (``st.context.theme``).
``measure()`` draws the component (its frame is 0 px tall), telling it what the server assumed:
the page posts a value back only when the truth differs (debounced, rounded to ``STEP`` px).

What the server does not need is not measured: the window's height and where the main figure goes.
The chart element fits each figure to the room below its top in the browser (``ui.charts``), its
bands and its crowding (tick labels, y titles, the notes of short panels), from the description the
server writes in the figure (``polarize.plots.present_figure``). So a first visit in the window the
server assumes is one script run, its figure drawn at once; a phone's, a dark or a wider window's
reruns the view's fragment once, for what changes the figures' content: the phone's stacked panels,
the dark palette, the column's width (the tables' layout, the titles' wrapping).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote

import streamlit as st
import streamlit.components.v1 as components

from polarize.fields import ConfigError
from polarize.plots.display import NARROW_BELOW, STEP, Display
from polarize.serialize import load_json
from ui.theme import VIEWPORT

__all__ = ["COOKIE", "KEY", "STEP", "assumed", "last", "measure", "read", "remembered"]


KEY = "_viewport"
"""The component's widget key (its value: the last measure the page posted)."""

COOKIE = "polarize_viewport"
"""The browser's cookie, written by the component when it posts: the window's width, the theme and the
main column's width it measured (in the mode it measured, presented or not). A later session of the
same browser reads it (``st.context.cookies``, sent with the page's first request): its first run is
fitted to it, and the page posts nothing."""
_LONGEST = 4096
"""A cookie longer than this (characters) is not read (a browser keeps at most about 4 kB a cookie)."""
_DEEPEST = 2
"""How deep the cookie's JSON nests: deeper is not read (4 kB of brackets made Python's parser raise
RecursionError on every page while the cookie lived)."""

_DEBOUNCE_MS = 250
_POSTED = ("window", "dark", "dark_chosen", "width", "presenting")
"""What the page posts: the window's width, the theme, the main column's width and the mode it was
measured in (presented or not: the sidebar is closed when presenting, the column wider)."""

_component = components.declare_component("viewport", path=str(Path(__file__).parent / "viewport_frontend"))


def read(value: Any, *, presenting: bool = False, deck: bool = False) -> Display:
    """The display a page posted (``value``), read with care (it comes from the browser): what cannot
    be read is the default's; the column's width only if measured in this mode.

    Parameters
    ----------
    value : any
        The component's value: a dict of ``_POSTED`` (None until the page has posted).
    presenting, deck : bool
        Presentation mode (from the address) and a deck being presented: not the browser's to say.
    """
    posted = value if isinstance(value, dict) else {}
    dark = posted.get("dark") is True
    column = posted.get("width") if posted.get("presenting") is presenting else None
    return Display.of(presenting=presenting, deck=deck, width=posted.get("window"), column=column,
                      dark_page=dark, dark_chosen=dark and posted.get("dark_chosen") is True)


def remembered(text: Any) -> dict[str, Any] | None:
    """The post a cookie remembers (``COOKIE``'s value, ``text``): None if there is none or it cannot
    be read (it comes from the browser)."""
    try:
        saved = (load_json(COOKIE, unquote(text), depth=_DEEPEST)
                 if isinstance(text, str) and len(text) <= _LONGEST else None)
    except ConfigError:
        return None
    if not isinstance(saved, dict):
        return None
    return {name: saved.get(name) for name in _POSTED}


def _posted() -> Any:
    """What the page posted this session, else what its browser's cookie remembers, else None."""
    posted = st.session_state.get(KEY)
    if posted is not None:
        return posted
    return remembered(st.context.cookies.get(COOKIE))


def _theme_dark() -> bool:
    """Whether the browser said it shows a dark theme with this run (``st.context.theme``; a first
    load may not know yet: the page then posts its theme)."""
    return st.context.theme.type == "dark"


def last(*, presenting: bool, deck: bool) -> Display:
    """The display as the page last posted it (``read``), or as its cookie remembers it; before either,
    the default in the theme the browser asked for."""
    posted = _posted()
    if posted is None:
        posted = {"dark": _theme_dark()}
    return read(posted, presenting=presenting, deck=deck)


def assumed(display: Display) -> dict[str, Any]:
    """What the server assumed of the window, in the component's terms (``_POSTED``): the page posts
    only where the truth differs (a width by ``STEP`` px or more, or across ``NARROW_BELOW``)."""
    return {"window": display.width, "dark": display.dark_page, "dark_chosen": display.dark_chosen,
            "width": display.column_width, "presenting": display.presenting}


def measure(display: Display) -> None:
    """Draw the measuring component, telling it what the server assumed (``display``).

    The page writes the app's style sheet (``ui.theme.style``, as ``ui.app`` does on every run): the
    component measures once that is in effect, which hides its container, and the fonts are loaded
    (before, the layout above the figure is not final); a page without it is measured after 10 s.
    """
    with st.container(key=VIEWPORT):  # hidden (``ui.theme``): its frame takes no room
        _component(assumed=assumed(display), holder=f"st-key-{VIEWPORT}", narrow_below=NARROW_BELOW,
                   step=STEP, debounce_ms=_DEBOUNCE_MS, key=KEY, default=None)
