"""The browser window, measured by a tiny element (``viewport_frontend/viewport.js``), as a ``Display``.

``last(...)`` is the display the page last posted: the window's width, whether the page shows a dark
theme and the main column's width; before it has posted in this session, what the browser's cookie
remembers of an earlier one (``COOKIE``), else the default, a 1280 x 720 projector, in the theme the
browser asked for (``st.context.theme``). ``measure()`` draws the element (a Streamlit component v2 in
the page's own DOM, out of sight), telling it what the server assumed: the page posts a value back (its
state value ``STATE``) only when the truth differs (debounced, rounded to ``STEP`` px). It reads only
what Streamlit documents: the main figure's container by its key's class, the theme's CSS variables
of a v2 component, the window and the document's fonts.

What the server does not need is not measured: the window's height and where the main figure goes.
The chart element fits each figure to the room below its top in the browser (``ui.charts``), its
bands and its crowding (tick labels, y titles, the notes of short panels), from the description the
server writes in the figure (``polarize.plots.present_figure``). So a first visit in the window the
server assumes is one script run, its figure drawn at once; so is one in any window when the app's
server (``server.py``) has put in the page's head the script that writes the window's width into the
cookie before the session starts (``ui.window_cookie``). A page resized by a step, a theme switched,
or (served without that script) a phone's or a wider window's first visit reruns the view's fragment
once, for what changes the figures' content: the phone's stacked panels, the dark palette, the
column's width (the tables' layout, the titles' wrapping).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import streamlit as st
from streamlit.components.v2 import component

from polarize.fields import ConfigError
from polarize.plots.display import NARROW_BELOW, STEP, Display
from polarize.serialize import load_json
from ui.theme import VIEWPORT

__all__ = ["COOKIE", "FIGURE", "KEPT", "KEY", "NAME", "SCRIPT", "STATE", "STEP", "assumed", "last", "measure",
           "read", "remembered"]


NAME = "polarize_viewport"
"""The element's component name."""
KEY = "_viewport"
"""The element's key (its state ``STATE``: the last measure the page posted)."""
STATE = "measure"
"""The element's state value: the last measure the page posted, a dict of ``_POSTED``."""
FIGURE = "main_figure"
"""The key of the main figure's container (its class ``st-key-main_figure``, ``ui.renderer``), whose width
the page measures: the main column's."""
SCRIPT = Path(__file__).parent / "viewport_frontend" / "viewport.js"
"""The element's browser side."""

COOKIE = "polarize_viewport"
"""The browser's cookie, written by the element when it posts: the window's width, the theme and the
main column's width it measured (in the mode it measured, presented or not). A later session of the
same browser reads it (``st.context.cookies``, sent with the page's first request): its first run is
fitted to it, and the page posts nothing."""
KEPT = "path=/; max-age=31536000; SameSite=Strict"
"""How the browser keeps ``COOKIE``, for every script that writes it (the element, and the page's head:
``ui.window_cookie``): for a year, for every page of the app, never sent by another site's request."""
_LONGEST = 4096
"""A cookie longer than this (characters) is not read (a browser keeps at most about 4 kB a cookie)."""
_DEEPEST = 2
"""How deep the cookie's JSON nests: deeper is not read (4 kB of brackets made Python's parser raise
RecursionError on every page while the cookie lived)."""

_DEBOUNCE_MS = 250
_WAIT_MS = 10_000
"""A page whose style sheet or fonts never come is measured as it is after this."""
_POSTED = ("window", "dark", "width", "presenting")
"""What the page posts: the window's width, the theme, the main column's width and the mode it was
measured in (presented or not: the sidebar is closed when presenting, the column wider)."""

# In the page's own DOM (no shadow root): the theme's CSS variables and the page's layout are its to read.
_ELEMENT = component(NAME, js=SCRIPT.read_text(encoding="utf-8"), isolate_styles=False)


def read(value: Any, *, presenting: bool = False, deck: bool = False) -> Display:
    """The display a page posted (``value``), read with care (it comes from the browser): what cannot
    be read is the default's; the column's width only if measured in this mode.

    Parameters
    ----------
    value : any
        The element's state value ``STATE``: a dict of ``_POSTED`` (None until the page has posted).
    presenting, deck : bool
        Presentation mode (from the address) and a deck being presented: not the browser's to say.
    """
    posted = value if isinstance(value, dict) else {}
    dark = posted.get("dark") is True
    column = posted.get("width") if posted.get("presenting") is presenting else None
    return Display.of(presenting=presenting, deck=deck, width=posted.get("window"), column=column,
                      dark_page=dark)


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


def _theme() -> dict[str, bool]:
    """The theme the browser said with this run (``st.context.theme``), as a post says it; empty when it
    has not said (a first load may not know yet: the page then posts its theme)."""
    kind = st.context.theme.type
    return {} if kind is None else {"dark": kind == "dark"}


def last(*, presenting: bool, deck: bool) -> Display:
    """The display as the page last posted it (``read``); before it has posted in this session, as its
    cookie remembers it (perhaps the window's width alone, written by the page's head:
    ``ui.window_cookie``); the theme, where neither says it, as the browser says it; before either, the
    default."""
    state = st.session_state.get(KEY)
    posted = state.get(STATE) if isinstance(state, Mapping) else None
    if posted is None:
        posted = remembered(st.context.cookies.get(COOKIE))
    posted = dict(posted) if isinstance(posted, dict) else {}  # it comes from the browser
    if posted.get("dark") is None:
        posted.update(_theme())
    return read(posted, presenting=presenting, deck=deck)


def assumed(display: Display) -> dict[str, Any]:
    """What the server assumed of the window, in the element's terms (``_POSTED``): the page posts
    only where the truth differs (a width by ``STEP`` px or more, or across ``NARROW_BELOW``)."""
    return {"window": display.width, "dark": display.dark_page, "width": display.column_width,
            "presenting": display.presenting}


def measure(display: Display) -> None:
    """Draw the measuring element, telling it what the server assumed (``display``).

    The page writes the app's style sheet (``ui.theme.style``, as ``ui.app`` does on every run): the
    element measures once that is in effect, which hides its container, and the fonts are loaded
    (before, the layout above the figure is not final); a page without it is measured after 10 s.
    """
    with st.container(key=VIEWPORT):  # hidden (``ui.theme``): it takes no room
        _ELEMENT(key=KEY, data={"assumed": assumed(display), "holder": f"st-key-{VIEWPORT}",
                                "figure": f"st-key-{FIGURE}", "narrow_below": NARROW_BELOW, "step": STEP,
                                "debounce_ms": _DEBOUNCE_MS, "wait_ms": _WAIT_MS, "state": STATE,
                                "cookie": COOKIE, "kept": KEPT})
