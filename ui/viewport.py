"""The browser window, measured by a tiny component (``viewport_frontend/index.html``), as a ``Display``.

``display(...)`` draws the component (its frame is 0 px tall) and returns the display the page
last posted: the window's size, whether the page shows a dark theme (and whether it was chosen in
the app menu), where the page's main figure goes (its top, from the page's top) and the main
column's width. Python sends what it assumes, and the page posts a value back only when the truth
differs (debounced, rounded to ``STEP`` px): a resize costs one rerun when a rounded size changes.
Until the page has posted, the display is the default: a 1280 x 720 projector.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st
import streamlit.components.v1 as components

from polarize.plots.display import NARROW_BELOW, Display

__all__ = ["KEY", "STEP", "display", "read"]

STEP = 40
"""The window's size and the main column's width are reported rounded down to a multiple of this (px)."""

KEY = "_viewport"
"""The component's widget key (its value: the last measure the page posted)."""

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


def display(*, presenting: bool, deck: bool) -> Display:
    """Draw the measuring component; the display as last posted (``read``)."""
    last = st.session_state.get(KEY)
    assumed = {name: last.get(name) for name in _POSTED} if isinstance(last, dict) else None
    value = _component(assumed=assumed, narrow_below=NARROW_BELOW, step=STEP, debounce_ms=_DEBOUNCE_MS,
                       key=KEY, default=None)
    return read(value, presenting=presenting, deck=deck)
