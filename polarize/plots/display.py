"""The display a page is shown on: one frozen description, made once per rerun, passed explicitly.

The renderer (``ui.renderer``) makes a ``Display`` from what the browser measured (``ui.viewport``)
and the address (presentation mode); the page's figures are built for its ``phone`` (panels
stacked, the transport on top) and fitted to it (``polarize.web.fit``). Until the browser has
measured anything, a display is a 1280 x 720 projector.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from polarize.fields import ConfigError, integer

__all__ = ["DEFAULT", "NARROW_BELOW", "PRESENT_TYPE", "STEP", "Display", "Mode"]

NARROW_BELOW = 640
"""Windows narrower than this many CSS pixels are phones (a 1280 px projector is not)."""
STEP = 40
"""The browser reports a window's and a column's width rounded down to a multiple of this (px), and only
when the server's assumption is wrong by this much or more (``ui.viewport``)."""
PRESENT_TYPE = 1.5
"""The page's type in presentation mode (phones too), times the usual (figures: ``style.PRESENT_SCALE``)."""

_LARGEST = 20_000
"""Most pixels of any length a display is told (a window, a column, a figure's top)."""


class Mode(enum.Enum):
    """How a page is laid out: on a desktop, presented to a hall, or on a phone."""

    NORMAL = "normal"
    """A desktop window: the sidebar open, the usual type, captions and help."""
    PRESENT = "present"
    """Presentation mode (``?present=true`` or embedded): larger type, no small print, figures fit
    the window."""
    PHONE = "phone"
    """A window narrower than ``NARROW_BELOW``: panels stacked, the transport above them."""


@dataclass(frozen=True, kw_only=True)
class Display:
    """The window a page is shown in, and the sizes of the app's own chrome in it (px).

    Attributes
    ----------
    presenting : bool
        The address asks for presentation mode. On a phone the mode stays ``PHONE`` (the larger
        type would make its stacked panels overlap); only the small print goes.
    width, height : int
        The window's inner size (default: a 1280 x 720 projector).
    column : int or None
        The page's main column's content width, as measured; None: estimated (``column_width``).
    top : int or None
        From the page's top to its main figure's, as measured; None: estimated (``figure_top``).
    dark_page : bool
        The page shows a dark theme (the system's or the app menu's).
    deck : bool
        A lecture deck is being presented: its bar (Previous, Next, End) is above the page.
    header : int
        Streamlit's header, over the page's top even when it is scrolled.
    gap : int
        Left free below a fitted figure.
    chrome : int
        Above the main figure in presentation mode, until measured (the header, the title, gaps).
    deck_bar : int
        The deck's bar.
    sidebar : int
        The open sidebar, beside the main column in normal mode.
    padding : int
        The main column's side padding in all on a desktop in normal mode (the column is the window
        less this, and the sidebar).
    present_padding : int
        The main column's side padding in all on a desktop when presenting (the app's style sheet
        takes some of Streamlit's back, ``ui.theme``; no sidebar).
    phone_padding : int
        The main column's side padding in all on a phone.

    The chrome's sizes are Chromium's at the app's style sheet (measured: a 1280 px window's column
    is 791 px in normal mode, 1194 presented, a 390 px phone's 356): the server's estimate of the
    column, which a first visit's page posts only when wrong by ``STEP`` px or more.
    column_gap : int
        Between columns of a view.
    """

    presenting: bool = False
    width: int = 1280
    height: int = 720
    column: int | None = None
    top: int | None = None
    dark_page: bool = False
    deck: bool = False
    header: int = 60
    gap: int = 16
    chrome: int = 100
    deck_bar: int = 40
    sidebar: int = 319
    padding: int = 170
    present_padding: int = 86
    phone_padding: int = 34
    column_gap: int = 24

    def __post_init__(self) -> None:
        for name in ("presenting", "dark_page", "deck"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(name, f"must be true or false, not {getattr(self, name)!r}")
        for name in ("width", "height", "header", "gap", "chrome", "deck_bar", "sidebar", "padding",
                     "present_padding", "phone_padding", "column_gap"):
            object.__setattr__(self, name, integer(name, getattr(self, name), 0, _LARGEST))
        for name in ("column", "top"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, integer(name, getattr(self, name), 1, _LARGEST))
        if self.width < 1 or self.height < 1:
            raise ConfigError("width" if self.width < 1 else "height", "must be at least 1 px")

    @property
    def mode(self) -> Mode:
        """``PHONE`` for a window narrower than ``NARROW_BELOW``, else ``PRESENT`` when presenting."""
        if self.width < NARROW_BELOW:
            return Mode.PHONE
        return Mode.PRESENT if self.presenting else Mode.NORMAL

    @property
    def phone(self) -> bool:
        """Figures built for a phone: panels stacked, the transport above them."""
        return self.mode is Mode.PHONE

    @property
    def page_type(self) -> float:
        """The page's type (its text and tables, not its figures), times a normal page's."""
        return PRESENT_TYPE if self.presenting else 1.0

    @property
    def dark(self) -> bool:
        """Figures drawn dark: on a dark page, presented or not. Presentation mode drew them light
        unless dark was chosen in the app menu: a white card on a black page (issue 45)."""
        return self.dark_page

    @property
    def column_width(self) -> int:
        """Pixels of the main column: as measured, else the window less the padding (and the sidebar,
        open in normal mode)."""
        if self.column is not None:
            return self.column
        if self.phone:
            return max(self.width - self.phone_padding, 1)
        if self.mode is Mode.PRESENT:
            return max(self.width - self.present_padding, 1)
        return max(self.width - self.padding - self.sidebar, 1)

    @property
    def figure_top(self) -> int:
        """Pixels above the main figure: as measured, else the chrome (and the deck's bar)."""
        if self.top is not None:
            return self.top
        return self.chrome + (self.deck_bar if self.deck else 0)

    @property
    def figure_room(self) -> int:
        """Pixels of height the main figure may take: the window below ``figure_top``; when that is
        less than half the window (a page that explains first), the window under the header (the
        figure is seen scrolled to). On a phone always the latter."""
        under_header = self.height - self.header - self.gap
        room = self.height - self.figure_top - self.gap
        return under_header if self.phone or room < self.height / 2 else room

    def __repr__(self) -> str:
        shown = {name: getattr(self, name) for name in ("presenting", "width", "height", "column", "top",
                                                          "dark_page", "deck")}
        return f"Display({', '.join(f'{k}={v!r}' for k, v in shown.items())})"

    @classmethod
    def of(cls, **values: Any) -> Display:
        """A display from untrusted values (a browser's post): what cannot be read is left at its default."""
        kept: dict[str, Any] = {}
        for name, value in values.items():
            try:
                cls(**{name: value})
            except (ConfigError, TypeError):
                continue
            kept[name] = value
        return cls(**kept)


DEFAULT = Display()
"""A 1280 x 720 projector in normal mode, light: the display until the browser has measured one."""
