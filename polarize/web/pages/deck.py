"""The Deck page: every lecture deck, its slides in order, moved, removed, imported and exported.

The decks are the visitor's own store (``polarize.web.deck_store``), handed to the page by the
renderer (``PageSpec.decks``): the session's own in memory, or the server's file where an operator
shares its disk. The page's one control is the page of slides (``PAGE`` slides with their buttons at
a time, so a rerun costs the same for 30 slides as for 1,500); its ``job`` (``DeckJob``) is the store,
its revision and that page, so the renderer's cache of the view lasts exactly until the next write,
and every button of the view (move, remove, delete, import, export) changes that store and no other.
Every user's string (deck names, titles, notes, links) is shown
through a table or as a code span (``echo.echo``), never as prose: Streamlit's Markdown
auto-links a bare URL or ``www.`` name even when every character is escaped, and a code
span is the one place it does not. Slides open through ``Link`` buttons labelled in our
own words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from polarize.web import deck_file
from polarize.web.controls import Control
from polarize.web.deck_store import Deck, DeckChanged, DeckError, DeckStore, Slide
from polarize.web.echo import echo
from polarize.web.leads import LEADS
from polarize.web.page import PageSpec
from polarize.web.slides import MOST
from polarize.web.view import Action, Caption, Columns, Download, Link, Table, Text, View

__all__ = ["DECK", "NAME", "TITLE", "DeckJob", "bar_title", "deck_view", "describe", "shown_error"]

NAME, TITLE = MOST["name"], MOST["title"]
"""Longest deck name and slide title (``polarize.web.slides.MOST``): shown whole."""


def bar_title(slides: tuple[Slide, ...], index: int) -> str:
    """The presentation bar's Markdown: which slide of how many, and its title as text."""
    return f"Slide {index + 1} of {len(slides)}: {echo(slides[index].title, TITLE)}"


def shown_error(exc: DeckError) -> str:
    """A deck's error as Markdown that shows it as text: our words, the user's inside a code span."""
    return echo(str(exc), most=600)


def _attempt(store: DeckStore, change: Callable[[DeckStore], Any],
             done: Callable[[Any], str]) -> tuple[bool, str]:
    """Make ``change`` to ``store``: ``(True, done(its result))``, or ``(False, why not)``."""
    try:
        outcome = change(store)
    except DeckError as exc:
        return False, shown_error(exc)
    return True, done(outcome)


Answer = tuple[bool, str] | tuple[bool, str, tuple[Action, ...]]


def _import(store: DeckStore, data: bytes) -> Answer:
    """Import a deck file: at once when its name is new; else say how it differs and ask.

    A file edited by hand is a deck all the same (said so); only what is not a deck is refused.
    """
    try:
        read = deck_file.read(data)
    except DeckError as exc:
        return False, shown_error(exc)
    edited = " It was edited after it was exported (its checksum does not match)." if read.edited else ""
    return _ask(store, read.deck, edited)


def _replace(store: DeckStore, deck: Deck, stored: Deck, edited: str) -> Answer:
    """Replace ``stored`` by the file's ``deck``, only if the deck is still as it was when asked;
    else ask again about the deck as it is now (a slide added meanwhile is not lost)."""
    try:
        store.save(deck, replace=True, was=stored)
    except DeckChanged:
        return _ask(store, deck, edited, "Nothing was replaced: the deck changed after you were asked. ")
    except DeckError as exc:
        return False, shown_error(exc)
    return True, f"Replaced the deck {echo(deck.name, NAME)}: it has the file's {len(deck.slides)} slides."


def _ask(store: DeckStore, deck: Deck, edited: str, before: str = "") -> Answer:
    """Store ``deck`` when its name is new; else the question (what the file changes) and its answers."""
    try:
        names = store.names()
        stored = store.get(deck.name) if deck.name in names else None
    except DeckError as exc:
        return False, shown_error(exc)
    if stored is None:
        said = f"Imported the deck {echo(deck.name, NAME)} ({len(deck.slides)} slides).{edited}"
        return _attempt(store, lambda store: store.save(deck), lambda _: said)
    copy = deck_file.copy_name(deck.name, names)
    as_copy = Action("copy", "Import as a copy", lambda: _save_copy(store, deck),
                     f"Keep both: the file's deck is stored as {echo(copy, NAME)}")
    cancel = Action("cancel", "Cancel", lambda: (True, "Nothing was imported."))
    listed = [f"- {line}" for line in describe(deck_file.changes(stored, deck))]
    if not listed:
        return True, (f"{before}The deck {echo(deck.name, NAME)} here holds the same slides as the file."
                      f"{edited} Import it as a copy?"), (as_copy, cancel)
    replace = Action("replace", "Replace", lambda: _replace(store, deck, stored, edited),
                     "Store the file's slides under this name; the deck's slides here are dropped")
    question = (f"{before}A deck called {echo(deck.name, NAME)} exists already.{edited} "
                f"The file's deck differs from it:\n\n" + "\n".join(listed[:_LISTED]))
    if len(listed) > _LISTED:
        question += f"\n- and {len(listed) - _LISTED} more changes"
    return True, question + "\n\nReplace it, or import the file as a copy?", (replace, as_copy, cancel)


_LISTED = 30
"""Changes listed at most before a deck is imported over another."""


def _save_copy(store: DeckStore, deck: Deck) -> tuple[bool, str]:
    """Store ``deck`` under a name no deck has yet ("Lecture (2)"), chosen when the button is clicked."""
    def save(store: DeckStore) -> str:
        name = deck_file.copy_name(deck.name, store.names())
        store.save(Deck(name=name, slides=deck.slides))
        return name

    return _attempt(store, save, lambda name: f"Imported the deck as {echo(name, NAME)} "
                                       f"({len(deck.slides)} slides).")


def describe(found: list[deck_file.Change]) -> list[str]:
    """Each change as one line of Markdown, the decks' own text in code spans (``echo``)."""
    lines = []
    for change in found:
        if change.kind.whole_slide:
            title = change.before or change.after
            lines.append(f"slide {change.place} {change.kind}: {echo(title, TITLE)}")
        else:
            lines.append(f"slide {change.place}, {change.kind}: {echo(change.before, 80)} "
                         f"\u2192 {echo(change.after, 80)}")
    return lines


def _move(store: DeckStore, name: str, index: int, to: int) -> tuple[bool, str]:
    return _attempt(store, lambda store: store.move(name, index, to),
                    lambda _: f"Moved slide {index + 1} to place {to + 1}.")


def _remove(store: DeckStore, name: str, index: int) -> tuple[bool, str]:
    return _attempt(store, lambda store: store.remove(name, index), lambda _: f"Removed slide {index + 1}.")


def _delete(store: DeckStore, name: str) -> tuple[bool, str]:
    return _attempt(store, lambda store: store.delete(name),
                    lambda _: f"Deleted the deck {echo(name, NAME)}.")


def _slide_row(store: DeckStore, j: int, deck: Deck, k: int) -> Columns:
    """One slide: its number and title, and buttons to open it, move it up or down, or remove it."""
    last, slide, name = len(deck.slides) - 1, deck.slides[k], deck.name
    title = Text(f"**{k + 1}.** {echo(slide.title, TITLE)}")
    buttons = (
        Link(f"open{j}_{k}", "Open", (slide,), "Open this view in presentation mode"),
        Action(f"up{j}_{k}", "\u2191", lambda: _move(store, name, k, max(k - 1, 0)), "Move this slide up"),
        Action(f"down{j}_{k}", "\u2193", lambda: _move(store, name, k, min(k + 1, last)), "Move it down"),
        Action(f"remove{j}_{k}", "\u2715", lambda: _remove(store, name, k), "Remove it from the deck"),
    )
    return Columns(((title,), *((b,) for b in buttons)), widths=(7, 1.4, 1, 1, 1))


PAGE = 25
"""Slides listed with their buttons at a time: the page costs the same whatever the decks hold."""
MOST_PAGES = 10_000
"""The largest page of slides the control takes (a page past the last shows the last)."""


@dataclass(frozen=True, kw_only=True)
class DeckJob:
    """What the Deck page shows: the visitor's ``store``, its ``revision`` (-1: unreadable) and the
    ``page`` of slides. Equal jobs are the same store (its ``key``) at the same revision and page: the
    renderer's cache of the view, shared by every session, holds one visitor's view under a key only
    that visitor's store has."""

    store: DeckStore = field(compare=False, repr=False)
    key: str
    revision: int
    page: int = 1

    @classmethod
    def of(cls, values: Any, store: DeckStore) -> DeckJob:
        """The job for the page's control ``values`` (the page of slides) and the visitor's ``store``."""
        page = values.get("page", 1) if hasattr(values, "get") else 1
        page = int(page) if isinstance(page, (int, float)) and not isinstance(page, bool) and page >= 1 else 1
        try:
            revision = store.revision()
        except DeckError:  # the view says why, in words
            revision = -1
        return cls(store=store, key=store.key, revision=revision, page=page)


_NONE = "No decks yet: add a view from any page (\"Present or add to a deck\" in its sidebar), or import one."


def _file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:60] or "deck"


def deck_view(job: DeckJob, narrow: bool = False) -> View:
    """Every deck of ``job.store``: a table of all slides, then per deck its slides with their buttons,
    every button acting on that store; never raises."""
    store = job.store
    importer = Action("import", "Import a deck (JSON)", lambda data: _import(store, data), upload=("json",),
                      help="A file exported from this page, on this machine or another.")
    try:
        decks = [store.get(name) for name in store.names()]
    except DeckError as exc:
        return View(error=shown_error(exc))
    where = Caption(_where(store))
    if not decks:
        return View(blocks=(where, Text(_NONE), importer))
    every = [(j, k) for j, deck in enumerate(decks) for k in range(len(deck.slides))]
    pages = max(1, -(-len(every) // PAGE))
    page = min(job.page, pages)
    shown = every[(page - 1) * PAGE:page * PAGE]
    rows = tuple({"deck": decks[j].name, "slide": k + 1, "title": decks[j].slides[k].title,
                  "link": decks[j].slides[k].link, "notes": decks[j].slides[k].notes} for j, k in shown)
    blocks: list[Any] = [where, Caption(_paging(page, pages, len(every))), Table(rows), importer]
    downloads = []
    for j, deck in enumerate(decks):
        blocks.append(Text(f"#### {echo(deck.name, NAME)} ({len(deck.slides)} slides)"))
        if deck.slides:
            blocks.append(Link(f"present{j}", f"Present deck {j + 1}", deck.slides,
                               "Show its slides one after another in presentation mode (Next, Previous; "
                               "the speaker notes are in the sidebar)."))
        blocks += [_slide_row(store, j, deck, k) for at, k in shown if at == j]
        blocks.append(Action(f"delete{j}", f"Delete deck {j + 1}",
                             lambda name=deck.name: _delete(store, name),
                             "Delete this deck and its slides (export it first to keep a copy)."))
        downloads.append(Download(f"export{j}", f"Deck {j + 1} (JSON)",
                                  lambda name=deck.name: deck_file.to_json(store.get(name)),
                                  f"{_file_name(deck.name)}.json", "application/json",
                                  ":material/slideshow:", "The deck as a file to import elsewhere."))
    return View(blocks=tuple(blocks), downloads=tuple(downloads), data=decks)


def _paging(page: int, pages: int, count: int) -> str:
    """Which slides this page lists, in words."""
    if pages == 1:
        return f"{count} slide{'s' if count != 1 else ''} in all."
    first, last = (page - 1) * PAGE + 1, min(page * PAGE, count)
    return (f"Slides {first} to {last} of {count} (page {page} of {pages}): choose the page of slides in "
            "the sidebar.")


def _where(store: DeckStore) -> str:
    """Where the decks are kept, in words (a hosted server's own paths are never shown)."""
    if store.path is None:
        return ("This server keeps your decks for this visit only, for you alone: export a deck to keep it, "
                "and import it on your next visit.")
    return f"Decks are kept in {echo(store.path, 300)} (set POLARIZE\\_DATA\\_DIR to move them)."


DECK = PageSpec(
    name="deck",
    lead=LEADS["deck"], nav_title="Lecture decks", title="Lecture decks", icon=":material/slideshow:",
    url_path="deck", view=deck_view, job=DeckJob.of, decks=True, slide=False,
    controls=(Control("page", "Page of slides", "number", low=1, high=MOST_PAGES, step=1, integer=True,
                      help=f"The slides are listed {PAGE} at a time, with their buttons."),),
    defaults=lambda preset: {"page": 1},
    caption=lambda values: "Slides are views of this app (a link, a title, speaker notes), kept in order "
                           "for a lecture. Add them from any page's sidebar, reorder and present them "
                           "here; export a deck to carry it to another machine.")
