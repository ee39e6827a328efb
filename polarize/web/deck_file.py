"""The deck file: a deck as JSON to carry to another machine, read back forgivingly.

``to_json`` writes ``{"format", "version", "deck": {"name", "slides"}, "sha256"}``, the
SHA-256 of the deck's content. ``read`` takes a file back: whatever is not a deck (not
JSON, another format, a missing key, a link out of the app, an over-long field) is refused
with a ``DeckError`` naming the field; a deck edited by hand after export (its SHA-256 no
longer matches) is a deck all the same, read with ``edited`` set, so that the page can show
what changed (``changes``) before storing it. ``copy_name`` names an imported copy.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from polarize.web.deck_store import MOST, Deck, DeckError, Slide

__all__ = ["FORMAT", "VERSION", "Change", "DeckFile", "changes", "copy_name", "digest", "from_json", "read",
           "to_json"]

FORMAT, VERSION = "polarize-deck", 1
_MOST_FILE = 64 << 20
"""Longest deck file (characters): 500 slides of the longest fields fit, even written as JSON escapes."""


def digest(content: dict[str, Any]) -> str:
    """The SHA-256 of a deck's content (``Deck.to_dict()``), as a deck file carries it."""
    return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=True).encode()).hexdigest()


def to_json(deck: Deck) -> str:
    """A deck as a JSON file to carry to another machine (``read`` takes it back).

    Returns
    -------
    str
        ``{"format", "version", "deck": {"name", "slides": [{"title", "link", "notes"}]}, "sha256"}``.
    """
    content = deck.to_dict()
    return json.dumps({"format": FORMAT, "version": VERSION, "deck": content, "sha256": digest(content)},
                      indent=1, ensure_ascii=False)


@dataclass(frozen=True, kw_only=True)
class DeckFile:
    """A deck file read: its deck, and whether it was edited after export (its SHA-256 does not match)."""

    deck: Deck
    edited: bool


def _exact_keys(field: str, value: Any, keys: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DeckError(field, f"must be an object, not {type(value).__name__}")
    if set(value) != keys:
        odd = sorted(set(value) ^ keys)
        raise DeckError(field, f"has the wrong keys ({', '.join(odd)}); expected {', '.join(sorted(keys))}")
    return value


def read(text: str | bytes) -> DeckFile:
    """The deck in a file written by ``to_json``, perhaps edited by hand since.

    Raises
    ------
    DeckError
        When the text is not a deck: not JSON, not a deck file of a known version, or holding
        a field a deck may not have; ``field`` names where (e.g. ``slides.3.link``).
    """
    if len(text) > _MOST_FILE:
        raise DeckError("file", f"is larger than {_MOST_FILE >> 20} MiB, more than any deck needs")
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DeckError("file", f"is not JSON ({exc})") from None
    except RecursionError:
        raise DeckError("file", "nests lists or objects far deeper than a deck file does") from None
    top = _exact_keys("file", data, {"format", "version", "deck", "sha256"})
    if top["format"] != FORMAT or top["version"] != VERSION:
        raise DeckError("file", f"is not a {FORMAT} file of version {VERSION}")
    content = _exact_keys("deck", top["deck"], {"name", "slides"})
    if not isinstance(content["slides"], list):
        raise DeckError("slides", "must be a list")
    slides = []
    for k, raw in enumerate(content["slides"]):
        item = _exact_keys(f"slides.{k}", raw, {"title", "link", "notes"})
        try:
            slides.append(Slide(link=item["link"], title=item["title"], notes=item["notes"]))
        except DeckError as exc:
            raise DeckError(f"slides.{k}.{exc.field}", str(exc).split(": ", 1)[1]) from None
    deck = Deck(name=content["name"], slides=tuple(slides))
    return DeckFile(deck=deck, edited=top["sha256"] != digest(content))


def from_json(text: str | bytes) -> Deck:
    """The deck of a deck file, edited or not (``read``'s deck)."""
    return read(text).deck


class ChangeKind(StrEnum):
    """What a ``Change`` is: a slide removed or added, or one of a slide's fields changed."""

    REMOVED = "removed"
    ADDED = "added"
    TITLE = "title"
    LINK = "link"
    NOTES = "notes"

    @property
    def whole_slide(self) -> bool:
        """A slide removed or added (told by its title), not one of its fields changed."""
        return self in (ChangeKind.REMOVED, ChangeKind.ADDED)


SLIDE_FIELDS = (ChangeKind.TITLE, ChangeKind.LINK, ChangeKind.NOTES)
"""The slide's fields a change can be to, in the order they are told."""


@dataclass(frozen=True, kw_only=True)
class Change:
    """One difference between two decks.

    Attributes
    ----------
    kind : ChangeKind
    place : int
        The slide's number (from 1): in the old deck for ``removed``, else in the new one.
    before, after : str
        The slide's title (``removed``, ``added``), or the field's old and new text.
    """

    kind: ChangeKind
    place: int
    before: str = ""
    after: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", ChangeKind(self.kind))


def changes(old: Deck, new: Deck) -> list[Change]:
    """What ``new`` changes of ``old``, slide by slide, in order.

    Slides that are the same in both are matched first (``difflib``), so that a slide
    dropped or added is one change, not a change to every slide after it; where slides
    differ in place of each other they are compared field by field, the rest removed or added.
    """
    key = [(s.title, s.link, s.notes) for s in old.slides], [(s.title, s.link, s.notes) for s in new.slides]
    out: list[Change] = []
    for op, i0, i1, j0, j1 in difflib.SequenceMatcher(None, *key, autojunk=False).get_opcodes():
        paired = min(i1 - i0, j1 - j0) if op == "replace" else 0
        for i, j in zip(range(i0, i0 + paired), range(j0, j0 + paired), strict=True):
            out += [Change(kind=field, place=j + 1, before=getattr(old.slides[i], field),
                           after=getattr(new.slides[j], field))
                    for field in SLIDE_FIELDS
                    if getattr(old.slides[i], field) != getattr(new.slides[j], field)]
        if op in ("replace", "delete"):
            out += [Change(kind=ChangeKind.REMOVED, place=i + 1, before=old.slides[i].title)
                    for i in range(i0 + paired, i1)]
        if op in ("replace", "insert"):
            out += [Change(kind=ChangeKind.ADDED, place=j + 1, after=new.slides[j].title)
                    for j in range(j0 + paired, j1)]
    return out


def copy_name(name: str, taken: list[str] | set[str]) -> str:
    """A name for a copy of the deck ``name`` that no deck in ``taken`` has: "Lecture (2)", "(3)", ..."""
    for k in itertools.count(2):
        suffix = f" ({k})"
        candidate = name[:MOST["name"] - len(suffix)].rstrip() + suffix
        if candidate not in taken:
            return candidate
    raise AssertionError("itertools.count has no end")
