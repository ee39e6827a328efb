"""A slide: one view of the app (its link, a title, speaker notes), checked when it is made.

Below the view model (``polarize.web.view``'s ``Link`` carries slides) and the deck store
(``polarize.web.deck_store`` keeps them in SQLite): a view never imports SQLite. Every field a
slide or a deck may not hold (a link to another site, an over-long title) is a ``DeckError``
naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from polarize.fields import ConfigError

__all__ = ["MOST", "DeckError", "Slide", "text_field"]

MOST = {"name": 100, "title": 200, "link": 4000, "notes": 10000, "slides": 500}
"""Longest deck name, slide title, link and notes (characters); most slides in a deck."""


class DeckError(ConfigError):
    """A deck, a slide or a deck file that cannot be used; ``field`` names the part at fault."""


def text_field(field: str, value: Any, *, empty: bool = False) -> str:
    """``value`` if it is text a deck may hold in ``field`` (``MOST``), else a ``DeckError`` naming it."""
    if not isinstance(value, str):
        raise DeckError(field, f"must be text, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate ("\ud800" is a valid JSON escape): no page can show it
        raise DeckError(field, "holds a character that is not text (a lone surrogate)") from None
    if not empty and not value.strip():
        raise DeckError(field, "must not be empty")
    if len(value) > MOST[field.split(".")[-1]]:
        raise DeckError(field, f"is longer than {MOST[field.split('.')[-1]]} characters")
    return value


def _link(field: str, value: Any) -> str:
    """A link into this app: a path and a query, no scheme or host (nothing that leaves the app)."""
    value = text_field(field, value)
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or value.startswith("//") or any(c in value for c in "\\\n\r\t <>\"'"):
        raise DeckError(field, "must be a link into this app (like /explorer?n=8), not to another site")
    return value


@dataclass(frozen=True, kw_only=True)
class Slide:
    """One view of the app in a deck: its link (path and query), a title, speaker notes."""

    link: str
    title: str
    notes: str = ""

    def __post_init__(self) -> None:
        _link("link", self.link)
        text_field("title", self.title)
        text_field("notes", self.notes, empty=True)
