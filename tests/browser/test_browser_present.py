"""Presentation mode in headless Chromium at 1280x720 (a projector): every page on one screen.

One server; the pages open one after another with ``?present=true``, each once in a light and
once in a dark window for all the tests that read it (``presented``). On each, once settled: no two
text boxes of a figure overlap and nothing is cut off (``support.layout.layout_problems``, the
overlap check of every size), every figure fits the window with its controls (play, pause, reset,
steps, speeds, slider, counter) inside it, the first figure's controls show without scrolling, and
the sidebar is collapsed; the main figure with its Play button, slider and time inside the window
together, and the grids' panels tall enough (tests/browser/test_layout_browser.py's checks at the
other sizes, made here where these pages are opened anyway); the comparison pages' tables show every
column within their room (``support.tables``), and the Sweeps page's figure is on the first screen
(both read on those pages as opened here: they were opened again for it). The Explorer's page is also
checked in detail (type, captions, title).
Skipped, with the reason, when Debian's /usr/bin/chromium (or Playwright) is missing.
"""

from __future__ import annotations

import pytest
from support.browser import (
    ARTIFACTS,
    BROWSER,
    Views,
    wait_for_figure,
    wait_until_settled,
)
from support.layout import (
    GRIDS,
    MAIN_READS,
    drawn,
    fit_problems,
    grid_problems,
    layout_problems,
    main_figures,
)
from support.tables import TABLE_PAGES, read_tables, table_problems

from polarize.plots.style import FONT_SIZE, PRESENT_LEAST, PRESENT_SCALE
from polarize.web.pages import PAGES

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

WIDTH, HEIGHT = 1280, 720

# Where things are on the page: the first figure (the dashboard), the title, any caption shown,
# and the root font size.
LAYOUT_JS = """() => {
  const box = (e) => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; };
  const figure = document.querySelector('.js-plotly-plot');
  const captions = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
    .filter((e) => e.getClientRects().length > 0);
  return {figure: box(figure), font: figure.layout.font.size, title: box(document.querySelector('h1')),
          buttons: figure.querySelectorAll('.updatemenu-button').length, captions: captions.length,
          root: parseFloat(getComputedStyle(document.documentElement).fontSize)};
}"""


@pytest.fixture
def projector(tabs):
    """A new visitor's tab in a 1280 x 720 window (the module's kept one: ``support.browser.Tabs``)."""
    return tabs.fresh(width=WIDTH, height=HEIGHT)


PAGES_PRESENTED = {spec.name: f"{spec.url_path}?present=true" for spec in PAGES}
SHOTS = ARTIFACTS / "shots"


# JavaScript: the top and bottom of the page's main figure as it opens (null without one).
FIRST_FIGURE_JS = """() => {
  const svg = document.querySelector('.st-key-main_figure .js-plotly-plot .main-svg');
  if (!svg) return null;
  const r = svg.getBoundingClientRect();
  return [r.top, r.bottom];
}"""
DARK_JS = "() => matchMedia('(prefers-color-scheme: dark)').matches"


@pytest.fixture(scope="module")
def presented(shared_server, browser):
    """Pages presented at 1280 x 720, each opened once in a light and once in a dark window for every test
    here (``support.browser.Views``): ``presented(paths, scheme=...)`` -> name -> what it read."""
    reads = {"layout": layout_problems, "figures": drawn, "ticks": lambda tab: tab.evaluate(TYPE_JS),
             "charts": lambda tab: tab.locator(".polarize-chart").count(),
             "alerts": lambda tab: tab.locator("[data-testid='stAlert']").all_inner_texts(),
             "first figure": lambda tab: tab.evaluate(FIRST_FIGURE_JS),
             "tables": lambda tab: None if tab.evaluate(DARK_JS) else read_tables(tab),
             **MAIN_READS,  # each leaves the page at its top
             "fit": fit_problems}  # last: it scrolls each figure to the window's top
    SHOTS.mkdir(parents=True, exist_ok=True)
    views = Views(browser, shared_server.url, reads)
    yield lambda paths, *, scheme="light", shots=None: views((WIDTH, HEIGHT), paths, scheme=scheme,
                                                             shots=shots)
    views.close()


def test_presentation_mode_fits_a_projector(server, projector):
    page = projector
    page.goto(f"{server.url}/?present=true&n=5")
    wait_for_figure(page)
    wait_until_settled(page)
    seen = page.evaluate(LAYOUT_JS)
    assert seen["captions"] == 0
    assert seen["root"] == pytest.approx(1.5 * 16)  # the page's type, 1.5 times the browser's
    assert seen["font"] == pytest.approx(FONT_SIZE * PRESENT_SCALE, abs=0.1)
    assert 0 <= seen["title"]["top"] and seen["title"]["bottom"] <= seen["figure"]["top"] + 1
    assert seen["buttons"] >= 8  # play, pause, reset, two steps, three speeds
    assert fit_problems(page, scroll=False) == []  # at the top: nothing to scroll
    assert "present=true" in page.url  # the address keeps the mode for the next rerun


def test_every_page_presented_on_one_screen(presented):
    found = {}
    shots = lambda name: SHOTS / f"present-{WIDTH}-{name}.png"  # noqa: E731
    for name, seen in presented(PAGES_PRESENTED, shots=shots).items():
        found[name] = seen["layout"] + seen["fit"]
        if name != "deck" and not seen["charts"]:
            found[name].append(f"no figure drawn ({' / '.join(seen['alerts']) or 'nothing said'})")
    report = [f"{name}: {line}" for name, lines in found.items() for line in lines]
    assert not report, f"{len(report)} problems presenting at {WIDTH} x {HEIGHT}:\n" + "\n".join(report)


def test_every_presented_page_s_main_figure_and_its_play_are_in_the_window_together(presented):
    """test_layout_browser.py's check of each size, presented at 1280 x 720: the main figure (its first)
    and its Play button, slider and time inside the window together, the Explorer's as the page opens,
    the others scrolled to at most (``support.layout.main_figures``)."""
    found: dict[str, list[str]] = {}
    played = main_figures(presented(PAGES_PRESENTED), found, phone=False, present=True)
    assert "explorer" in played  # the check is made: the Explorer's main figure plays
    report = [f"{name}: {line}" for name, lines in found.items() for line in lines]
    assert not report, f"{len(report)} problems presenting at {WIDTH} x {HEIGHT}:\n" + "\n".join(report)


def test_presented_grids_of_panels_are_tall_enough_and_say_their_rows_and_colours(presented):
    """Issue 45, item 5, presented at 1280 x 720 (test_layout_browser.py's check normal, and on a phone):
    every panel of the grids (``support.layout.GRIDS``) at least ``LEAST_PANEL`` px tall as the page opens,
    with the figure and its Play on the first screen (the Explorer's were 41 px, Loss and conditioning's
    69), their legends and rows saying what ``ROWS_AND_KEYS`` names."""
    found = grid_problems(presented({name: PAGES_PRESENTED[name] for name in GRIDS}), phone=False)
    assert not found, "\n".join(found)


# The heights of the repulsion panel's bars (its replicator mode) drawn now.
BARS_JS = """() => document.querySelector('.js-plotly-plot').data
  .filter((trace) => trace.type === 'bar').map((trace) => Array.from(trace.y))"""


def test_the_replicator_bars_move_when_play_is_pressed(server, projector):
    page = projector
    page.goto(f"{server.url}/?present=true&repulsion=replicator")
    wait_until_settled(page, timeout=120)
    # Kept in the page as its JSON: compared there (Python's JSON writes some numbers otherwise: 1e-07).
    first = page.evaluate(f"() => {{ const bars = ({BARS_JS})(); window.__bars = JSON.stringify(bars); "
                          "return bars; }")
    assert first and first[0]
    page.locator(".js-plotly-plot").first.locator(".updatemenu-button").filter(has_text="Play").click()
    # The bars are redrawn as the frames play: the first bars drawn otherwise, as they are then.
    later = page.wait_for_function(
        f"() => {{ const bars = ({BARS_JS})(); return JSON.stringify(bars) !== window.__bars && bars; }}"
    ).json_value()
    assert len(later) == len(first) and later != first
    assert fit_problems(page, scroll=False) == [] and layout_problems(page) == []


# JavaScript: each figure's tick labels' sizes as drawn (px, log and linear axes alike; a colour bar's
# aside) and the lightness (0 to 1) of its background.
TYPE_JS = """() => [...document.querySelectorAll('.st-key-page .js-plotly-plot')].map((g) => {
  const shown = (t) => t.checkVisibility() && t.textContent.trim() && t.getBoundingClientRect().width > 0;
  const ticks = [...g.querySelectorAll('g[class$="tick"] > text')]
    .filter((t) => /^[xy]\\d*tick$/.test(t.parentElement.getAttribute('class').split(' ')[0]) && shown(t));
  const rgb = getComputedStyle(g.querySelector('.main-svg')).backgroundColor.match(/[\\d.]+/g).map(Number);
  return {ticks: [...new Set(ticks.map((t) => parseFloat(getComputedStyle(t).fontSize)))].sort(),
          light: (rgb[0] + rgb[1] + rgb[2]) / 765};
})"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_hall_reads_every_figure_s_type_at_least_20_px(presented, scheme):
    """Presented at 1280 x 720 (issue 45, item 7): no tick label, axis or panel title, note,
    heatmap label or legend's entry of any figure under ``PRESENT_LEAST`` px as drawn (ticks were
    17.5 px, the Sinks heatmaps' labels 16, the Phase portrait's colour bar 15, legends 16.2 to 17.5),
    on every page with figures, and nothing overlapping or cut off by its figure's edge at that size."""
    found = []
    with_figures = {name: path for name, path in PAGES_PRESENTED.items() if name != "deck"}
    for name, seen in presented(with_figures, scheme=scheme).items():
        figures = seen["figures"]
        assert figures, name
        for k, figure in enumerate(figures):
            for part in ("smallest", "legend_smallest"):
                if figure[part][0] < PRESENT_LEAST - 0.05:
                    px, text = figure[part]
                    found.append(f"{name} figure {k}: {text!r} at {px} px")
        found += [f"{name}: {line}" for line in seen["layout"]]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_hall_reads_log_and_linear_ticks_alike_in_the_page_s_colours(presented, scheme):
    """Presented at 1280 x 720 (issue 45, item 7): a log axis's tick labels as large as a linear one's in
    the same figure (plotly drew them 1.25 times larger, 23.5 px beside 18.8 in the Explorer, and the
    Phase portrait's between-decade labels at 13 px), and on a dark page dark figures (a white card
    before, unless dark was chosen in the app's menu)."""
    found = []
    pages = {name: PAGES_PRESENTED[name] for name in ("explorer", "sinks", "phase", "descent")}
    for name, seen in presented(pages, scheme=scheme).items():
        figures = seen["ticks"]
        assert figures, name
        for k, ticks in enumerate(figures):
            if ticks["ticks"] and ticks["ticks"][-1] - ticks["ticks"][0] > 0.25:  # px, rounding aside
                found.append(f"{name} figure {k}: tick labels at {ticks['ticks']} px")
            if (ticks["light"] > 0.5) != (scheme == "light"):
                found.append(f"{name} figure {k}: lightness {ticks['light']:.2f} on a {scheme} page")
    assert not found, "\n".join(found)


def test_every_column_of_a_table_shows_within_its_room_presented(presented):
    """Issue 45, item 6 (``support.tables``): presented at 1280 x 720, every column of every table of the
    comparison pages within the table's box and the window, with no accessibility rule broken (axe-core)."""
    found = [line for name, seen in presented({name: PAGES_PRESENTED[name] for name in TABLE_PAGES}).items()
             for line in table_problems(name, seen["tables"])]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_presented_sweep_s_figure_is_on_the_first_screen(presented, scheme):
    """The grid's table comes after the figure: above it, it pushed the figure to 471-996 px of 720."""
    (seen,) = presented({"sweeps": PAGES_PRESENTED["sweeps"]}, scheme=scheme).values()
    assert seen["first figure"] is not None, "no main figure on the Sweeps page"
    top, bottom = seen["first figure"]
    assert 0 <= top and bottom <= HEIGHT + 2, (top, bottom)
