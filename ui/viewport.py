"""The browser window, measured by a tiny component (``viewport_frontend/index.html``), as a ``Display``.

``last(...)`` is the display the page last posted: the window's size, whether the page shows a dark
theme (and whether it was chosen in the app menu), where the page's main figure goes (its top, from
the page's top) and the main column's width; before it has posted in this session, what the
browser's cookie remembers of an earlier one (``COOKIE``). ``measure(place)`` draws the component
(its frame is 0 px tall), telling it the place (a digest of what is above the main figure): the page
posts a value back only when the truth differs (debounced, rounded to ``STEP`` px), with the place
it measured. Until the page has posted (or where its cookie has nothing), the display is the
default: a 1280 x 720 projector.

A figure drawn, then measured, then fitted and drawn again would lose a click or a key pressed
in between (the rerun replaces it): the renderer holds a page's main figure while its place is not
measured yet (``held``), drawing what is above it and the component; the page measures, posts, and
the view's fragment reruns and draws the figure once, fitted (``ui.renderer``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote

import streamlit as st
import streamlit.components.v1 as components

from polarize.fields import ConfigError
from polarize.plots.display import NARROW_BELOW, Display
from polarize.serialize import load_json
from ui.theme import VIEWPORT

__all__ = ["COOKIE", "KEY", "STEP", "held", "last", "measure", "read", "remembered"]

STEP = 40
"""The window's size and the main column's width are reported rounded down to a multiple of this (px)."""

KEY = "_viewport"
"""The component's widget key (its value: the last measure the page posted)."""

COOKIE = "polarize_viewport"
"""The browser's cookie, written by the component when it posts: the window and the theme it measured,
and the main figure's top and the column's width for the last ``PLACES`` places. A later session of
the same browser reads it (``st.context.cookies``, sent with the page's first request): its first
run draws the figure fitted at once where the place is remembered, and the page posts nothing."""
PLACES = 12
_LONGEST = 4096
"""A cookie longer than this (characters) is not read (a browser keeps at most about 4 kB a cookie)."""
_DEEPEST = 3
"""How deep the cookie's JSON nests (the post, its places, a place's top and width): deeper is not read
(4 kB of brackets made Python's parser raise RecursionError on every page while the cookie lived)."""

_DEBOUNCE_MS = 250
_POSTED = ("window", "height", "dark", "dark_chosen", "top", "width")
"""What the page posts: the window's width and height, the theme, the figure's top, the column's width."""

_component = components.declare_component("viewport", path=str(Path(__file__).parent / "viewport_frontend"))


def read(value: Any, *, presenting: bool = False, deck: bool = False) -> Display:
    """The display a page posted (``value``), read with care (it comes from the browser): what cannot
    be read is the default's.

    Parameters
    ----------
    value : any
        The component's value: a dict of ``_POSTED`` (None until the page has posted).
    presenting, deck : bool
        Presentation mode (from the address) and a deck being presented: not the browser's to say.
    """
    posted = value if isinstance(value, dict) else {}
    dark = posted.get("dark") is True
    return Display.of(presenting=presenting, deck=deck, width=posted.get("window"),
                      height=posted.get("height"), column=posted.get("width"), top=posted.get("top"),
                      dark_page=dark, dark_chosen=dark and posted.get("dark_chosen") is True)


def remembered(text: Any, place: str | None) -> dict[str, Any] | None:
    """The post a cookie remembers (``COOKIE``'s value, ``text``), for ``place``: None if there is none
    or it cannot be read (it comes from the browser); its top and width only where it measured
    ``place`` (else None, and its place None: the figure is held until the page measures it).
    """
    try:
        saved = (load_json(COOKIE, unquote(text), depth=_DEEPEST)
                 if isinstance(text, str) and len(text) <= _LONGEST else None)
    except ConfigError:
        return None
    if not isinstance(saved, dict):
        return None
    places = saved.get("places")
    spot = places.get(place) if isinstance(places, dict) and isinstance(place, str) else None
    top, width = spot if isinstance(spot, list) and len(spot) == 2 else (None, None)
    return {**{name: saved.get(name) for name in _POSTED[:4]}, "top": top, "width": width,
            "place": place if top is not None else None}


def _posted(place: str | None) -> Any:
    """What the page posted this session, else what its browser's cookie remembers for ``place``."""
    posted = st.session_state.get(KEY)
    if posted is not None:
        return posted
    return remembered(st.context.cookies.get(COOKIE), place)


def last(*, presenting: bool, deck: bool, place: str | None = None) -> Display:
    """The display as the page last posted it (``read``), or as its cookie remembers it for ``place``."""
    return read(_posted(place), presenting=presenting, deck=deck)


def measure(place: str) -> None:
    """Draw the measuring component, telling it ``place``: what is above the page's main figure.

    The page writes the app's style sheet (``ui.theme.style``, as ``ui.app`` does on every run): the
    component measures once that is in effect, which hides its container, and the fonts are loaded
    (before, the layout above the figure is not final); a page without it is measured after 10 s.
    """
    posted = _posted(place)
    assumed = {name: posted.get(name) for name in (*_POSTED, "place")} if isinstance(posted, dict) else None
    with st.container(key=VIEWPORT):  # hidden (``ui.theme``): its frame takes no room
        # The page measures once that style is in effect (its container hidden): the layout is final.
        _component(assumed=assumed, place=place, holder=f"st-key-{VIEWPORT}", narrow_below=NARROW_BELOW,
                   step=STEP, debounce_ms=_DEBOUNCE_MS, places=PLACES, key=KEY, default=None)


def held(place: str | None) -> bool:
    """Whether the main figure waits for the page to measure ``place`` (None: anything at all): in a
    browser (which runs the component; a headless client does not, and is shown the figure at once),
    until it has posted a measure of this place (this session, or one its cookie remembers)."""
    posted = _posted(place)
    measured = isinstance(posted, dict) and (place is None or posted.get("place") == place)
    return not measured and "Mozilla/" in (st.context.headers.get("User-Agent") or "")
