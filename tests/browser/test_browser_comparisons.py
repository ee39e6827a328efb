"""End to end: each comparison page in headless Chromium, its Play button clicked; a deep link on a
fresh server.

Skipped, with the reason, when Debian's /usr/bin/chromium (or Playwright) is missing.
Screenshots (1920 x 1080, the projector) go to test-artifacts/.
"""

from __future__ import annotations

import json

import pytest
from support.browser import ARTIFACTS, BROWSER, fresh_server_fixture, set_number, wait_until_settled

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

PAGES = ("normalizers", "losses", "tied", "descent", "rates")

# The first animated comparison figure on the page: its number of panels and frames, or null.
GRID_JS = """() => {
  for (const g of document.querySelectorAll('.js-plotly-plot')) {
    const meta = g.layout && g.layout.meta;
    if (meta && meta.panels !== undefined && g._transitionData && g._transitionData._frames
        && g._transitionData._frames.length) {
      return {panels: meta.panels, frames: g._transitionData._frames.length};
    }
  }
  return null;
}"""

SLIDER_MOVED_JS = """() => {
  for (const g of document.querySelectorAll('.js-plotly-plot')) {
    if ((g._fullLayout?.sliders?.[0]?.active ?? 0) > 3) {
      return true;
    }
  }
  return false;
}"""


# Its own server for the first test, which needs one that nobody has opened yet; the others play on the
# session's (``shared_server``), whose pages other modules may have computed already.
server = fresh_server_fixture()


def test_a_link_to_a_page_opens_inside_the_app_on_a_fresh_server(server, browser):
    """The first request this server sees is a deep link to a page (a shared link).

    Pages are the scripts of ``pages/``, routed by ``app.py``'s ``st.navigation`` (which turns off
    Streamlit's legacy menu of that folder's file names), so the first request goes through the app
    like any other.
    """
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    try:
        page.goto(f"{server.url}/rates?n=4")
        nav = page.locator("[data-testid='stSidebarNav']")
        nav.get_by_text("Massive activations").wait_for()
        entries = {line for line in nav.inner_text().split("\n") if line}
        assert {"Explorer", "Rates", "About the maths"} <= entries
        assert not entries & {"app", "rates", "maths"}  # the legacy menu lists file names
        page.get_by_text("Rates: how slow is polarization?").wait_for()
        assert not page.get_by_text("Page not found").count()
    finally:
        context.close()


@pytest.mark.parametrize("name", PAGES)
def test_each_comparison_page_plays(shared_server, tabs, name):
    page = tabs.open(f"{shared_server.url}/{name}", width=1920, height=1080)
    page.wait_for_function(f"() => ({GRID_JS})() !== null", polling=50)
    wait_until_settled(page)  # fitted to the window: its one rerun redraws the figure, Play too
    grid = page.evaluate(GRID_JS)
    assert grid["frames"] >= 20, grid
    if name == "normalizers":
        assert grid["panels"] == 8
    assert not page.get_by_text("Traceback").count()
    assert page.get_by_text("About the maths").count()  # the app's navigation, not a bare page
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"compare-{name}.png"))
    play = page.locator(".js-plotly-plot .updatemenu-button").first
    assert "Play" in play.text_content()
    play.click()
    page.wait_for_function(SLIDER_MOVED_JS)
    page.screenshot(path=str(ARTIFACTS / f"compare-{name}-full.png"), full_page=True)


# A draft of the comparison (``ui.blocks.draw_draft``) on the page: its figure's panels and its words,
# or null while none is drawn.
DRAFT_JS = """() => {
  const draft = document.querySelector('[class*="st-key-draft_"]');
  const g = draft && draft.querySelector('.js-plotly-plot');
  if (!g || !g.layout || !g.layout.meta || !g.querySelector('.main-svg')) return null;
  return {panels: g.layout.meta.panels, text: draft.innerText};
}"""


def test_normalizers_draws_its_panels_as_their_runs_return(shared_server, tabs):
    """A changed control: the panels of the runs back are drawn while the others run, then all eight.

    Under gradient descent to t = 10^4 (the eight runs 6.5 s of one core here): a draft is drawn only
    past ``study.DRAFT_AFTER`` (0.5 s), and the default flow's eight runs (1 s of one core) took less
    than that on two warm workers of a quiet machine."""
    page = tabs.open(f"{shared_server.url}/normalizers?method=gd&horizon=10000", width=1920, height=1080)
    page.wait_for_function(f"() => ({GRID_JS})() !== null", polling=50)
    wait_until_settled(page)
    set_number(page, "Seed", 7)
    draft = page.wait_for_function(DRAFT_JS, polling=20).json_value()
    assert 1 <= draft["panels"] < 8 and "still running" in draft["text"], draft
    page.wait_for_function(f"""() => {{ const grid = ({GRID_JS})();
                                       return grid !== null && grid.panels === 8
                                         && !document.querySelector('[class*="st-key-draft_"]'); }}""",
                           polling=50)
    wait_until_settled(page)
    assert not page.get_by_text("Traceback").count()


# The main figure: its revision and the figures its chart has shown (``draws``, ``chart.js``), and the
# ``Plotly.react`` calls on it since ``COUNT_REACTS_JS``; null while none is drawn.
MAIN_JS = """() => {
  const g = document.querySelector('.st-key-main_figure .js-plotly-plot');
  return g && g.dataset.revision ? {revision: g.dataset.revision, draws: Number(g.dataset.draws),
                                    reacts: window.__mainReacts} : null;
}"""
COUNT_REACTS_JS = """() => {
  window.__mainReacts = 0;
  const react = window.Plotly.react;
  window.Plotly.react = function (gd, ...rest) {
    if (gd.closest && gd.closest('.st-key-main_figure')) window.__mainReacts += 1;
    return react.call(this, gd, ...rest);
  };
}"""


def _shown(page, revision: str):
    """Wait until the main figure is ``revision`` and the page has settled; the main figure (``MAIN_JS``)."""
    page.wait_for_function(f"() => ({MAIN_JS})()?.revision === {json.dumps(revision)}", polling=50)
    wait_until_settled(page)
    return page.evaluate(MAIN_JS)


def test_a_setting_seen_before_is_put_back_not_drawn_again(shared_server, tabs):
    """Back to the seed shown before: the chart puts back the figure it drew for it, kept aside (its
    eight panels' ``Plotly.react`` cost twice the Explorer's), and it plays; a figure played is not kept,
    and is drawn again when it comes back."""
    page = tabs.open(f"{shared_server.url}/normalizers?seed=41", width=1280, height=720)
    page.wait_for_function(f"() => ({MAIN_JS})() !== null", polling=50)
    wait_until_settled(page)
    first = page.evaluate(MAIN_JS)
    page.evaluate(COUNT_REACTS_JS)
    set_number(page, "Seed", 42)
    page.wait_for_function(f"() => ({MAIN_JS})().revision !== {json.dumps(first['revision'])}", polling=50)
    wait_until_settled(page)
    second = page.evaluate(MAIN_JS)
    assert second["reacts"] == 1 and second["draws"] == first["draws"] + 1  # a new figure: drawn
    set_number(page, "Seed", 41)
    back = _shown(page, first["revision"])
    assert back["reacts"] == 1 and back["draws"] == second["draws"] + 1  # put back, not drawn
    page.locator(".js-plotly-plot .updatemenu-button").first.click()  # Play
    page.wait_for_function(SLIDER_MOVED_JS)
    set_number(page, "Seed", 42)
    assert _shown(page, second["revision"])["reacts"] == 1  # kept aside untouched: put back
    set_number(page, "Seed", 41)
    assert _shown(page, first["revision"])["reacts"] == 2  # played: drawn again
    assert not page.get_by_text("Traceback").count()
