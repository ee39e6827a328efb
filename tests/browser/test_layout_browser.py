"""No overlaps at any size: every page at a projector's 1280 x 720, at 1920 x 1080 and on a 390 x 844 phone.

Every page of the app is opened, one after another in one tab (``support.browser.Views``; all at
once in tabs of their own took as long), once per window size, normal and presented, for every test here
(``views``), and once settled its figures' text boxes (titles, tick labels, notes, legend entries,
the slider's label, the buttons) are checked pairwise by their bounding boxes in Chromium, along with
text cut off by a figure's edge or a Streamlit box, a legend entry under the chart's toolbar, and a
page wider than the window.

The same pages then show whether each page's main figure (its first) and its Play button, slider and
time are inside the window together, in normal mode and, opened again with ``?present=true``, in
presentation mode: the whole figure (on a desktop the Explorer's as it opens, the others scrolled to
at most). A figure may say it is taller than the window (``layout.meta.taller``: a phone's figure
with more rows of panels than its window holds legibly, as chosen settings may ask), but no page
as it opens. Presented at 1280 x 720 the same is checked by tests/browser/test_browser_present.py,
which opens every page presented there anyway (here it cost seven more pages' loads).

On the phone, normal and presented, the comparison pages' tables show every column within their room
(``support.tables``), read on those pages as opened here (they were opened again for it). At 1280 x 720,
light and dark, axe-core finds no WCAG 2.1 AA violation on any page as it opens (``support.axe``), read
on those pages as opened here (tests/browser/test_browser_a11y.py opened every page again for it).
Skipped, with the reason, when Debian's /usr/bin/chromium (or Playwright) is missing.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from support.axe import axe_violations
from support.browser import ARTIFACTS, BROWSER, Views
from support.layout import GRIDS, MAIN_READS, drawn, grid_problems, layout_problems, main_figures
from support.tables import TABLE_PAGES, read_tables, table_problems

from polarize.web.pages import PAGES

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

SIZES = {"projector": (1280, 720), "full-hd": (1920, 1080), "phone": (390, 844)}
PHONE, PROJECTOR = ({"width": w, "height": h} for w, h in (SIZES["phone"], SIZES["projector"]))
STATES = {"explorer-replicator": ("?repulsion=replicator", ".barlayer .trace.bars")}
"""Page states besides each page as it opens: name -> (address, what shows the state is drawn)."""


ADDRESSES = {**{spec.name: spec.url_path for spec in PAGES},
             **{name: path for name, (path, _) in STATES.items()}}
"""Each page as it opens, and each state: name -> its path and query."""


@pytest.fixture(scope="module")
def views(shared_server, browser):
    """Every page and state opened once per window size, normal and presented, for every test here that
    reads it (``support.browser.Views``): ``views(size, names, present=...)`` -> name -> what it read."""
    reads = {"layout": layout_problems, "figures": drawn,
             "charts": lambda tab: tab.locator(".polarize-chart").count(),
             "alerts": lambda tab: tab.locator("[data-testid='stAlert']").all_inner_texts(),
             "states": lambda tab: {name: tab.locator(shown).count() for name, (_, shown) in STATES.items()},
             "tables": lambda tab: read_tables(tab) if tab.viewport_size == PHONE else None,
             "axe": _axe,
             **MAIN_READS}
    opened = Views(browser, shared_server.url, reads)

    def look(size, names, *, present=False, scheme="light"):
        mode = ("-presented" if present else "") + ("-dark" if scheme == "dark" else "")
        paths = {name: ADDRESSES[name] + ("?present=true" if present else "") for name in names}
        return opened(SIZES[size], paths, scheme=scheme,
                      shots=lambda name: ARTIFACTS / f"layout-{size}-{name}{mode}.png")

    yield look
    opened.close()


def _axe(tab) -> list[str] | None:
    """What axe-core finds on a page as it opens at 1280 x 720 (``support.axe.axe_violations``); None for
    another window or a page presented (axe costs seconds a page). By its address as now, which a page
    may have added its settings to."""
    if tab.viewport_size != PROJECTOR or "present=true" in urlsplit(tab.url).query:
        return None
    return axe_violations(tab)


@pytest.mark.parametrize("size", SIZES)
def test_no_text_overlaps_on_any_page(views, size):
    width, height = SIZES[size]
    found = {}
    for name, seen in views(size, ADDRESSES).items():
        found[name] = list(seen["layout"])
        if name != "deck" and not seen["charts"]:
            found[name].append(f"no figure drawn ({' / '.join(seen['alerts']) or 'nothing said'})")
        if name in STATES and not seen["states"][name]:
            found[name].append(f"not in the state named (nothing matches {STATES[name][1]!r})")
    pages, phone = [spec.name for spec in PAGES], size == "phone"
    played = main_figures(views(size, pages), found, phone=phone, present=False)
    if size != "projector":  # presented at 1280 x 720: test_browser_present.py's
        main_figures(views(size, played, present=True), found, phone=phone, present=True)
    report = [f"{name}: {line}" for name, lines in found.items() for line in lines]
    assert not report, f"{len(report)} layout problems at {width} x {height}:\n" + "\n".join(report)


@pytest.mark.parametrize("size", ["projector", "phone"])
def test_grids_of_panels_are_tall_enough_and_say_their_rows_and_colours(views, size):
    """Issue 45, item 5, read from the drawn figures: at 1280 x 720 every panel of the Explorer's
    dashboard and of the grids of Flow vs descent, Massive activations, Normalizers, Attention sinks (its
    heatmaps) and Loss and conditioning at least ``support.layout.LEAST_PANEL`` px tall as the page opens,
    with the figure and its Play on the first screen (they were 31, 49, 35, 59, 55 and 66 px); Flow vs
    descent's legend names its strokes (flow solid, descent dashed: none before), Massive activations
    labels its rows with their D (at 1280 they had no label) and Attention sinks with their layer, and
    Loss and conditioning's legend keys the tokens' colours and the losses' strokes, on a phone too.
    Presented at 1280 x 720: test_browser_present.py's ``test_presented_grids_...``."""
    found = grid_problems(views(size, GRIDS), phone=size == "phone")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("present", [False, True], ids=["normal", "presented"])
def test_every_column_of_a_table_shows_within_its_room_on_a_phone(views, present):
    """Issue 45, item 6 (``support.tables``): on a 390 x 844 phone, normal and presented, every column of
    every table of the comparison pages within the table's box and the window, with no accessibility rule
    broken (axe-core)."""
    found = [line for name, seen in views("phone", TABLE_PAGES, present=present).items()
             for line in table_problems(name, seen["tables"])]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("spec", PAGES, ids=[p.name for p in PAGES])
def test_axe_finds_no_wcag_21_aa_violation(views, spec, scheme):
    """Every page as it opens at 1280 x 720, light and dark: no WCAG 2.1 A or AA rule broken (axe-core)."""
    assert views("projector", [spec.name], scheme=scheme)[spec.name]["axe"] == []
