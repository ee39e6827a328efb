"""The browser window's size class, reported by a tiny component (``viewport_frontend/index.html``).

``viewport()`` tells the renderer whether the window is narrow (a phone), whether the
page shows a dark theme, and, when asked, how tall it is and where the page's main
figure (its first chart) sits: its top from the page's top, and the main column's width, measured once
the script has run (the renderer sizes the figure to fit the window below what is above
it). Python sends
what it assumes, and the page posts a value back only when the truth differs: an
ordinary desktop visitor costs no rerun, a phone one rerun on its first page, and a
resize one rerun when the class changes (debounced in the page). The component
draws nothing (its frame is 0 px tall).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st
import streamlit.components.v1 as components

__all__ = ["HEIGHT_STEP", "KEY", "NARROW_BELOW", "Viewport", "viewport"]

NARROW_BELOW = 640
"""Windows narrower than this many CSS pixels are narrow (phones; a 1280 px projector is not)."""

HEIGHT_STEP = 40
"""The window's height is reported rounded down to a multiple of this (px): fewer reruns on resize."""

KEY = "_viewport"
"""The component's widget key (its value: the last size class the page posted)."""

_TALLEST = 20_000
_DEBOUNCE_MS = 250

_component = components.declare_component("viewport", path=str(Path(__file__).parent / "viewport_frontend"))


@dataclass(frozen=True, kw_only=True)
class Viewport:
    """The browser window's size class.

    Attributes
    ----------
    narrow : bool
        Narrower than ``NARROW_BELOW`` px: panels stack, grids take one or two columns.
    height : int or None
        The window's inner height in px, rounded down to ``HEIGHT_STEP``; None when not measured.
    dark : bool
        The page shows a dark theme (the system's, or the app menu's choice): figures are drawn dark.
    dark_chosen : bool
        The dark theme was chosen in the app menu (not the system's): presentation mode, which
        stays light for a projector, draws its figures dark only then.
    top : int or None
        Pixels from the page's top to its main figure's, rounded up to 10; None when not measured
        or the page has no figure.
    width : int or None
        The page's main column's width in px, rounded down to ``HEIGHT_STEP``; None when not measured.
    """

    narrow: bool = False
    height: int | None = None
    dark: bool = False
    dark_chosen: bool = False
    top: int | None = None
    width: int | None = None

    @classmethod
    def from_browser(cls, value: Any) -> Viewport:
        """The size class a page posted, read with care (it comes from the browser); default if unreadable."""
        if not isinstance(value, dict):
            return cls()
        narrow, dark, chosen = value.get("narrow"), value.get("dark"), value.get("dark_chosen")
        height, top, width = (_pixels(value.get(name)) for name in ("height", "top", "width"))
        return cls(narrow=narrow if isinstance(narrow, bool) else False, height=height, dark=dark is True,
                   dark_chosen=dark is True and chosen is True,
                   top=top if height is not None else None, width=width if height is not None else None)


def _pixels(value: Any) -> int | None:
    """A length the page posted, if it is a whole number of pixels in reason (else None)."""
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 < value <= _TALLEST
    return value if ok else None


def viewport(*, measure_height: bool = False) -> Viewport:
    """The browser window's size class, as last reported (the default until a page reports another).

    Parameters
    ----------
    measure_height : bool
        Also report the window's height and the main figure's place (to fit the figure);
        otherwise ``height``, ``top`` and ``width`` are None and their changes cost no rerun.
    """
    assumed = _known(st.session_state.get(KEY), measure_height)
    value = _component(assumed={"narrow": assumed.narrow, "height": assumed.height, "dark": assumed.dark,
                                "dark_chosen": assumed.dark_chosen,
                                "top": assumed.top, "width": assumed.width},
                       measure_height=measure_height, narrow_below=NARROW_BELOW, step=HEIGHT_STEP,
                       debounce_ms=_DEBOUNCE_MS, key=KEY, default=None)
    return _known(value, measure_height)


def _known(value: Any, measure_height: bool) -> Viewport:
    """The size class the page last posted (None: nothing yet), the height dropped when not measured."""
    known = Viewport.from_browser(value)
    if measure_height:
        return known
    return Viewport(narrow=known.narrow, dark=known.dark, dark_chosen=known.dark_chosen)
