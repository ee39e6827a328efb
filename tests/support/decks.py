"""Decks for the deck tests: three slides (one title with Markdown and HTML, shown as text), and files
edited after export."""

from __future__ import annotations

import json

from polarize.web.deck_file import digest, to_json
from polarize.web.deck_store import Deck, Slide

__all__ = ["SLIDES", "relinked", "tampered"]

SLIDES = (
    Slide(link="/explorer?n=8&loss=logistic", title="Softmax polarizes", notes="Point at the winner."),
    Slide(link="/losses?n=8&horizon=1e6", title="Losses: *not* markdown <b>", notes=""),
    Slide(link="/rates", title="How slowly", notes="1/log t\nsecond line"),
)


def tampered(edit, *, resign=False):
    """A deck file edited after export; ``resign``: its SHA-256 recomputed, as a deliberate forger would."""
    data = json.loads(to_json(Deck(name="d", slides=SLIDES)))
    edit(data["deck"])
    if resign:
        data["sha256"] = digest(data["deck"])
    return json.dumps(data)


def relinked(deck, link="javascript:alert(1)"):
    deck["slides"][0]["link"] = link
