"""Opening the app's pages headlessly (``streamlit.testing.v1.AppTest``).

Every page is a script of ``pages/`` (one call of ``ui.render``) routed by ``app.py``:
``page(name)`` opens the app at that page's address, as a visitor's first request to it would;
``open_page(at, name)`` switches an app already running to another page, as its menu entry does;
``open_deck_box(at)`` opens the sidebar's "Present or add to a deck" box (drawn only while open);
``figures(at)`` reads the figures a page drew (``ui.charts``' elements) as plotly JSON.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

from polarize.web import pages
from ui import charts, deckbar

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")

WHOLE_PAGE_SECONDS = "600"
"""POLARIZE_APP_TIMEOUT for tests of what a page shows: under load the 20 s limit would cut parts of it
(the basin map, panels), failing a test of the picture rather than of the time (test_study_overtime
cuts on purpose)."""


def script(name: str) -> str:
    """Page ``name``'s script, relative to ``app.py`` (a typo fails here, not as an empty page)."""
    return f"pages/{pages.by_name(name).name}.py"


def page(name: str, *, timeout: float = 120) -> AppTest:
    """An ``AppTest`` of the app opened at page ``name`` (not yet run).

    Before the first run ``AppTest`` knows a page by its file's name, which is its spec's
    ``url_path`` too (``tests/test_navigation.py`` holds that).
    """
    return AppTest.from_file(APP, default_timeout=timeout).switch_page(script(name))


def open_page(at: AppTest, name: str) -> AppTest:
    """Switch ``at`` (the app, run at least once) to page ``name``; run it next."""
    return at.switch_page(script(name))


def open_deck_box(at: AppTest) -> AppTest:
    """Open the sidebar's deck box, as a click on it does (``at`` run or not); run it next.

    Its inside (the presentation link, the form) is drawn only while it is open (``ui.deckbar``).
    """
    at.session_state[deckbar.OPEN] = True
    return at


def charts_drawn(at: AppTest) -> list[Any]:
    """The chart elements (``ui.charts``) that hold a figure, in the order ``at``'s page drew them
    (not the one that loads plotly.js, ``ui.charts.preload``, nor one holding a chart's next figure
    out of sight, ``held_figures``)."""
    return [e for e in at.get("bidi_component") if e.proto.component_name == charts.NAME
            and b"\n" in e.proto.bytes and not e.proto.id.endswith(charts.HELD)]


def held_figures(at: AppTest) -> dict[str, tuple[dict[str, Any], bytes]]:
    """The figures ``at``'s page holds for a press (``ui.charts.hold``), by the key of their chart: the
    head of each holder (``next``, ``after``, ``button``) and the bytes it holds (the chart's payload)."""
    held = {}
    for e in at.get("bidi_component"):
        if e.proto.component_name == charts.NAME and e.proto.id.endswith(charts.HELD):
            head, data = e.proto.bytes.split(b"\n", 1)
            held[json.loads(head)["next"]] = (json.loads(head), data)
    return held


def chart_payloads(at: AppTest) -> dict[str, bytes]:
    """What each chart element of ``at``'s page was given (``ui.charts.payload``), by its key."""
    return {json.loads(e.proto.bytes.split(b"\n", 1)[0])["key"]: e.proto.bytes for e in charts_drawn(at)}


def figures(at: AppTest) -> list[dict[str, Any]]:
    """The figures ``at``'s page drew, in order, each as plotly's JSON (``data``, ``layout``, ``frames``).

    A chart element is given one line of JSON (its head: ``ui.charts.payload``), then the figure.
    """
    return [json.loads(e.proto.bytes.split(b"\n", 1)[1]) for e in charts_drawn(at)]


def link_note(at: AppTest) -> str:
    """The line over the page's figure naming the link's values it could not use, and its help (why
    each could not be used), as one text; empty when there is none."""
    notes = [f"{c.value}\n{c.proto.help}" for c in at.caption if "could not be used" in c.value]
    assert len(notes) <= 1, notes
    return notes[0] if notes else ""


def table_column(at: AppTest, column: str) -> list[Any]:
    """The values of ``column`` in the table ``at``'s page drew, as the sortable grid or as plain tables
    (``polarize.web.tables.layout``: one, or parts, the column in one of them; a plain table's as text)."""
    drawn = [{c: list(t.value[c]) for c in t.value.columns} for t in at.dataframe] + plain_tables(at)
    found = [t[column] for t in drawn if column in t]
    assert len(found) == 1, [list(t) for t in drawn]
    return found[0]


def plain_tables(at: AppTest) -> list[dict[str, list[str]]]:
    """The plain tables ``at``'s page drew (HTML, ``polarize.web.tables.html``), each column -> its cells'
    text, read with the standard library's HTML parser."""
    tables = [plain_table_cells(e.proto.body) for e in at.get("html") if "<table" in e.proto.body]
    return [{c: [row[i] for row in rows] for i, c in enumerate(head)} for head, *rows in tables]


def plain_table_cells(body: str) -> list[list[str]]:
    """An HTML table's rows (its head first), each cell's text as a browser shows it (entities read,
    no markup kept), read with the standard library's HTML parser."""
    parser = _Table()
    parser.feed(body)
    return parser.rows


class _Table(HTMLParser):
    """One HTML table's cells' text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("th", "td"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
