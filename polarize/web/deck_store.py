"""Lecture decks: named lists of slides (a page's link, a title, speaker notes), kept in SQLite.

A ``DeckStore`` keeps every deck in one SQLite file (stdlib ``sqlite3``) under
``POLARIZE_DATA_DIR``, by default the user's data directory. Every write is one
``BEGIN IMMEDIATE`` transaction, so several processes (app sessions, scripts) can
write at once without losing a slide. Every deck and slide is checked when it is
made: anything a deck may not hold (a link to another site, an over-long field) is a
``DeckError`` naming the field. Decks travel as JSON files (``polarize.web.deck_file``).

The app shares no decks between visitors unless an operator asked for it
(``polarize.env.shares_disk``): each session keeps its own in memory
(``DeckStore.in_memory``) and carries decks away and back as JSON. There is no ambient
store: whoever reads or writes decks is handed the store to use, and the server's own file
(``DeckStore.shared``) is refused while the disk is not shared, so no forgotten hand-over can
fall back to it.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from polarize.env import data_dir, shares_disk
from polarize.fields import ConfigError
from polarize.web.slides import MOST, DeckError, Slide
from polarize.web.slides import text_field as _text

__all__ = ["MOST", "SESSION", "Deck", "DeckChanged", "DeckError", "DeckStore", "Slide", "data_dir"]

SESSION = {"decks": 20, "slides": 2000}
"""Most decks, and slides in all its decks, of one visitor's store (``DeckStore.in_memory``): a hosted
server's memory is shared by every visitor, and a session could import 500-slide decks without end."""


class DeckChanged(DeckError):
    """The deck is not as it was when a question about it was asked (``DeckStore.save(was=...)``)."""


@dataclass(frozen=True, kw_only=True)
class Deck:
    """A named deck: its slides in presenting order."""

    name: str
    slides: tuple[Slide, ...] = ()

    def __post_init__(self) -> None:
        _text("name", self.name)
        if len(self.slides) > MOST["slides"]:
            raise DeckError("slides", f"a deck holds at most {MOST['slides']} slides")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "slides": [{"title": s.title, "link": s.link, "notes": s.notes}
                                              for s in self.slides]}


_SCHEMA = """
CREATE TABLE IF NOT EXISTS decks (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS slides (
    id INTEGER PRIMARY KEY,
    deck INTEGER NOT NULL REFERENCES decks(id) ON DELETE CASCADE,
    position INTEGER NOT NULL, title TEXT NOT NULL, link TEXT NOT NULL, notes TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS revision (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL);
INSERT OR IGNORE INTO revision VALUES (1, 0);
"""
_TABLES = {"decks", "slides", "revision"}


def _place(field: str, value: Any) -> int:
    """A slide's place: a whole number (not a bool, a float or a string)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise DeckError(field, f"must be a slide's place (a whole number), not {type(value).__name__}")
    return int(value)


class DeckStore:
    """Every deck, in one SQLite file, or in memory for one visitor (``in_memory``).

    Parameters
    ----------
    path : path
        The database file; created with its folder on first write. The server's own file, shared by
        every visitor, is ``shared()``.

    Attributes
    ----------
    path : Path or None
        None for a store in memory (``in_memory``).
    key : str
        Tells stores apart (for caches): the file's path, or the memory store's own name.
    most : dict or None
        Most ``decks`` and ``slides`` (in all) the store holds: ``SESSION`` for a session's own.
    """

    def __init__(self, path: Path | str):
        self.most: dict[str, int] | None = None
        self.path: Path | None = Path(path)
        self.key = str(self.path)
        self._keeper: sqlite3.Connection | None = None

    @classmethod
    def shared(cls) -> DeckStore:
        """The server's own file, ``data_dir() / "decks.sqlite3"``, which every visitor shares.

        Raises
        ------
        DeckError
            Naming ``POLARIZE_HOSTED`` while the operator has not shared the disk
            (``polarize.env.shares_disk``): a visitor's decks are then theirs alone, never on disk.
            Naming ``POLARIZE_DATA_DIR`` when that cannot be a folder.
        """
        try:
            folder = data_dir() if shares_disk() else None
        except ConfigError as exc:  # a bad POLARIZE_DATA_DIR or POLARIZE_HOSTED: said as the store's fault
            raise DeckError(exc.field, str(exc).split(": ", 1)[1]) from None
        if folder is None:
            raise DeckError("POLARIZE_HOSTED", "this server keeps each visitor's decks to themselves, never "
                            "on its disk (an operator shares decks on its disk with POLARIZE_HOSTED=0)")
        return cls(folder / "decks.sqlite3")

    @classmethod
    def in_memory(cls) -> DeckStore:
        """A store of its own in this process's memory, gone with the object (one visitor's decks)."""
        store = cls(":memory:")
        store.most = SESSION
        store.path, store.key = None, f"file:polarize-decks-{uuid.uuid4().hex}?mode=memory&cache=shared"
        # A shared in-memory database lives while a connection to it is open.
        store._keeper = sqlite3.connect(store.key, uri=True, check_same_thread=False)
        return store

    def _open(self, write: bool) -> sqlite3.Connection:
        """A connection: read-only to read a file (reads work in a read-only folder), to an empty
        database in memory when there is no file or it has no decks yet."""
        if self.path is None:
            return sqlite3.connect(self.key, uri=True, timeout=30, isolation_level=None)
        if write:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return sqlite3.connect(self.path, timeout=30, isolation_level=None)
        if self.path.exists():
            connection = sqlite3.connect(self.path.absolute().as_uri() + "?mode=ro", uri=True, timeout=30,
                                         isolation_level=None)
            if {row[0] for row in connection.execute("SELECT name FROM sqlite_master")} >= _TABLES:
                return connection
            connection.close()
        empty = sqlite3.connect(":memory:", isolation_level=None)
        empty.executescript(_SCHEMA)
        return empty

    @contextmanager
    def _connect(self, write: bool) -> Iterator[sqlite3.Connection]:
        """A connection in one transaction (``BEGIN IMMEDIATE`` for writes: one writer at a time);
        any fault of the file or its folder as a ``DeckError`` (``_fault``)."""
        try:
            connection = self._open(write)
        except (sqlite3.Error, OSError) as exc:
            raise self._fault(exc, write) from None
        try:
            connection.execute("PRAGMA foreign_keys = ON")
            connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            for statement in filter(str.strip, _SCHEMA.split(";") if write or self.path is None else ()):
                connection.execute(statement)
            yield connection
            if write:
                connection.execute("UPDATE revision SET value = value + 1")
            connection.execute("COMMIT")
        except (sqlite3.Error, OSError) as exc:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise self._fault(exc, write) from None
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        finally:
            connection.close()

    def _fault(self, exc: BaseException, write: bool) -> DeckError:
        """What went wrong with the store, in one sentence that names its folder and says what to do."""
        doing = "saved to" if write else "read from"
        words = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        reason = " ".join((words or type(exc).__name__).split())[:200]  # one line, an OSError's without errno
        if self.path is None:
            return DeckError("file", f"the decks of this session could not be {doing} ({reason}); "
                             "export your decks and reload the page")
        folder, lowered = self.path.parent, reason.lower()
        if "readonly" in lowered or "read-only" in lowered or isinstance(exc, PermissionError):
            fix = "make it writable, or set POLARIZE_DATA_DIR to a folder you can write to"
        elif "locked" in lowered or "busy" in lowered:
            fix = "another program is writing to it: try again in a moment"
        elif not isinstance(exc, OSError):
            return DeckError("file", f"{self.path} is not a deck database that can be used ({reason}): move "
                             f"it out of the folder {folder} (a new one is made), or set POLARIZE_DATA_DIR "
                             "to another folder")
        else:
            fix = "set POLARIZE_DATA_DIR to a folder you can write to"
        return DeckError("file", f"the decks in the folder {folder} could not be {doing} ({reason}): {fix}")

    def revision(self) -> int:
        """A number that changes with every write (for caches)."""
        with self._connect(False) as db:
            value = db.execute("SELECT value FROM revision").fetchone()
        if value is None or not isinstance(value[0], int):
            raise self._fault(sqlite3.DatabaseError("its revision is not a number, so it is damaged"), False)
        return value[0]

    def names(self) -> list[str]:
        """Every deck's name, alphabetically."""
        with self._connect(False) as db:
            return [row[0] for row in db.execute("SELECT name FROM decks ORDER BY name")]

    def get(self, name: str) -> Deck:
        """The deck called ``name``; ``DeckError`` (field ``name``) when there is none."""
        with self._connect(False) as db:
            return self._read(db, name)

    def save(self, deck: Deck, *, replace: bool = False, was: Deck | None = None) -> None:
        """Store ``deck`` whole; an existing deck of that name only with ``replace``.

        With ``was``, only over the deck as it was then (a question's answer): ``DeckChanged``
        when it has changed since (a slide added, moved or removed, or the deck deleted).
        """
        with self._connect(True) as db:
            row = db.execute("SELECT id FROM decks WHERE name = ?", (deck.name,)).fetchone()
            if row and not replace:
                raise DeckError("name", f"a deck called {deck.name!r} exists already")
            if was is not None and (not row or self._read(db, deck.name) != was):
                raise DeckChanged("name", f"the deck {deck.name!r} changed after the question was asked")
            self._room(db, deck.name, new=not row, slides=len(deck.slides))
            if not row:
                db.execute("INSERT INTO decks (name) VALUES (?)", (deck.name,))
            self._rewrite(db, deck.name, list(deck.slides))

    def _room(self, db: sqlite3.Connection, name: str, *, new: bool, slides: int) -> None:
        """Refuse a write that would take the store past ``most``: a new deck, or ``slides`` for ``name``."""
        if self.most is None:
            return
        decks = db.execute("SELECT COUNT(*) FROM decks").fetchone()[0]
        if new and decks >= self.most["decks"]:
            raise DeckError("decks", f"this session holds at most {self.most['decks']} decks: export one and "
                            "delete it to make room")
        others = db.execute("SELECT COUNT(*) FROM slides s JOIN decks d ON s.deck = d.id WHERE d.name != ?",
                            (name,)).fetchone()[0]
        if others + slides > self.most["slides"]:
            raise DeckError("slides", f"this session holds at most {self.most['slides']} slides in all its "
                            "decks: export a deck and delete it to make room")

    def add_slide(self, name: str, slide: Slide) -> Deck:
        """Append ``slide`` to the deck ``name`` (made if new); the deck after it."""
        Deck(name=name)  # validates the name
        with self._connect(True) as db:
            row = db.execute("SELECT COUNT(s.id) FROM decks d LEFT JOIN slides s ON s.deck = d.id "
                             "WHERE d.name = ? GROUP BY d.id", (name,)).fetchone()
            self._room(db, name, new=row is None, slides=(row[0] if row else 0) + 1)
            db.execute("INSERT OR IGNORE INTO decks (name) VALUES (?)", (name,))
            deck_id, count = db.execute("SELECT d.id, COUNT(s.id) FROM decks d LEFT JOIN slides s "
                                        "ON s.deck = d.id WHERE d.name = ? GROUP BY d.id", (name,)).fetchone()
            if count >= MOST["slides"]:
                raise DeckError("slides", f"a deck holds at most {MOST['slides']} slides")
            db.execute("INSERT INTO slides (deck, position, title, link, notes) VALUES "
                       "(?, (SELECT COALESCE(MAX(position) + 1, 0) FROM slides WHERE deck = ?), ?, ?, ?)",
                       (deck_id, deck_id, slide.title, slide.link, slide.notes))
            return self._read(db, name)

    def move(self, name: str, index: int, to: int) -> Deck:
        """Move slide ``index`` (0-based) of deck ``name`` to place ``to``; the deck after it."""
        index, to = _place("index", index), _place("to", to)
        with self._connect(True) as db:
            slides = list(self._read(db, name).slides)
            if not (0 <= index < len(slides) and 0 <= to < len(slides)):
                raise DeckError("index", f"the deck has slides 0 to {len(slides) - 1}")
            slides.insert(to, slides.pop(index))
            return self._rewrite(db, name, slides)

    def remove(self, name: str, index: int) -> Deck:
        """Remove slide ``index`` (0-based) of deck ``name``; the deck after it."""
        index = _place("index", index)
        with self._connect(True) as db:
            slides = list(self._read(db, name).slides)
            if not 0 <= index < len(slides):
                raise DeckError("index", f"the deck has slides 0 to {len(slides) - 1}")
            del slides[index]
            return self._rewrite(db, name, slides)

    def delete(self, name: str) -> None:
        """Delete the deck ``name`` and its slides (nothing when there is none)."""
        with self._connect(True) as db:
            db.execute("DELETE FROM decks WHERE name = ?", (name,))

    def _read(self, db: sqlite3.Connection, name: str) -> Deck:
        row = db.execute("SELECT id FROM decks WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise DeckError("name", f"there is no deck called {name!r}")
        rows = db.execute("SELECT title, link, notes FROM slides WHERE deck = ? ORDER BY position, id", row)
        return Deck(name=name, slides=tuple(Slide(title=t, link=link, notes=n) for t, link, n in rows))

    def _rewrite(self, db: sqlite3.Connection, name: str, slides: list[Slide]) -> Deck:
        (deck_id,) = db.execute("SELECT id FROM decks WHERE name = ?", (name,)).fetchone()
        db.execute("DELETE FROM slides WHERE deck = ?", (deck_id,))
        db.executemany("INSERT INTO slides (deck, position, title, link, notes) VALUES (?, ?, ?, ?, ?)",
                       [(deck_id, k, s.title, s.link, s.notes) for k, s in enumerate(slides)])
        return Deck(name=name, slides=tuple(slides))
