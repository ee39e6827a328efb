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
as it opens. Skipped, with the reason, when Debian's /usr/bin/chromium (or Playwright) is missing.
"""

from __future__ import annotations

import pytest
from support.browser import ARTIFACTS, BROWSER, Views
from support.layout import drawn, layout_problems, main_figure_problems

from polarize.web.pages import PAGES

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

SIZES = {"projector": (1280, 720), "full-hd": (1920, 1080), "phone": (390, 844)}
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
             # measured as the page opens, then scrolled by the least that shows the figure (and back)
             "main at top": lambda tab: main_figure_problems(tab, at_top=True),
             "main": lambda tab: main_figure_problems(tab, at_top=False),
             "taller": lambda tab: tab.evaluate(_TALLER_JS)}
    opened = Views(browser, shared_server.url, reads)

    def look(size, names, *, present=False):
        mode = "-presented" if present else ""
        paths = {name: ADDRESSES[name] + ("?present=true" if present else "") for name in names}
        return opened(SIZES[size], paths, shots=lambda name: ARTIFACTS / f"layout-{size}-{name}{mode}.png")

    yield look
    opened.close()


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
    pages = [spec.name for spec in PAGES]
    played = _main_figures(views(size, pages), found, size, present=False)
    _main_figures(views(size, played, present=True), found, size, present=True)
    report = [f"{name}: {line}" for name, lines in found.items() for line in lines]
    assert not report, f"{len(report)} layout problems at {width} x {height}:\n" + "\n".join(report)


_TALLER_JS = "() => { const g = document.querySelector('.js-plotly-plot'); " \
    "return !!(g && g.layout.meta && g.layout.meta.taller); }"


def _main_figures(seen: dict, found: dict, size: str, *, present: bool) -> list[str]:
    """Each page's main figure and its transport as ``seen`` (``main_figure_problems``) into ``found``;
    the pages whose main figure plays."""
    played, mode, phone = [], "presented" if present else "normal", size == "phone"
    for name, read in seen.items():
        at_top = name == "explorer" and not phone  # a lecturer's first screen: Play without scrolling
        problems = read["main at top" if at_top else "main"]
        if problems is not None and read["taller"]:  # allowed for settings chosen, not defaults
            problems = [*problems, "the figure is fitted taller than the window (layout.meta.taller)"]
        if problems is not None:
            played.append(name)
            found.setdefault(f"{name} ({mode})", []).extend(problems)
    return played


LEAST_PANEL = 80
"""Fewest pixels of a panel's plot area a person reads at 1280 x 720 (issue 45)."""
ROWS_AND_KEYS = {"descent": ("legend", {"flow (solid)", "descent (dashed)"}),
                 "tied": ("rows", {"D = 10", "D = 100"}),
                 "sinks": ("rows", {"layer 0", "layer 1"}),
                 "losses": ("legend", {"token 0", "token 7", "logistic", "square"})}
"""Page -> what its main figure must say, as drawn: the legend's entries or the rows' labels."""


@pytest.mark.parametrize(("size", "present"), [("projector", False), ("projector", True), ("phone", False)])
def test_grids_of_panels_are_tall_enough_and_say_their_rows_and_colours(views, size, present):
    """Issue 45, item 5, read from the drawn figures: at 1280 x 720, normal and presented, every panel
    of the Explorer's dashboard and of the grids of Flow vs descent, Massive activations,
    Normalizers, Attention sinks (its heatmaps) and Loss and conditioning at least ``LEAST_PANEL`` px
    tall as the page opens, with the figure and its Play on the first screen (they were 31 (41
    presented), 49, 35, 59, 55 (69) and 66 px); Flow vs descent's legend names its strokes (flow
    solid, descent dashed: none before), Massive activations labels its rows with their D (at 1280
    they had no label) and Attention sinks with their layer, and Loss and conditioning's legend keys
    the tokens' colours and the losses' strokes, on a phone too."""
    found = []
    grids = ("explorer", "descent", "tied", "normalizers", "sinks", "losses")
    for name, seen in views(size, grids, present=present).items():
        figure = seen["figures"][0]
        if size != "phone":
            if min(figure["panels"]) < LEAST_PANEL - 0.5:
                found.append(f"{name}: panels {sorted(round(h) for h in figure['panels'])} px tall")
            found += [f"{name}: {line}" for line in seen["main at top"] or []]
        if name in ROWS_AND_KEYS:
            part, said = ROWS_AND_KEYS[name]
            if not said <= set(figure[part]):
                found.append(f"{name}: its {part} says {figure[part]}, not all of {sorted(said)}")
    assert not found, "\n".join(found)
