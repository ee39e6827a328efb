"""End to end: each comparison page in headless Chromium (one server for all), its Play button clicked.

Skipped, with the reason, when Debian's /usr/bin/chromium (or Playwright) is missing.
Screenshots (1920 x 1080, the projector) go to test-artifacts/.
"""

from __future__ import annotations

import os

import pytest

try:
    from browser_support import ARTIFACTS, CHROMIUM, module_fixtures
except ImportError:  # tests/ imported as a package
    from tests.browser_support import ARTIFACTS, CHROMIUM, module_fixtures

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                       reason=f"{CHROMIUM} is missing (apt-get install chromium)"),
]
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
    if (g._fullLayout.sliders && g._fullLayout.sliders.length && g._fullLayout.sliders[0].active > 3) {
      return true;
    }
  }
  return false;
}"""


server, browser = module_fixtures(sync_api)


@pytest.fixture(scope="module")
def app(server, browser):
    """The server once its main script has run.

    Streamlit runs a deep link (``/normalizers``) as a file of the ``pages/``
    directory, without ``app.py`` and its navigation, until some session has run
    ``app.py`` (which calls ``st.navigation``); the root page does that.
    """
    context = browser.new_context()
    page = context.new_page()
    page.goto(server.url + "/")
    page.get_by_text("Normalizers side by side").first.wait_for(timeout=30_000)
    context.close()
    return server


@pytest.mark.parametrize("name", PAGES)
def test_each_comparison_page_plays(app, browser, name):
    server = app
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    try:
        page.goto(f"{server.url}/{name}")
        page.wait_for_function(f"() => ({GRID_JS})() !== null", timeout=30_000, polling=50)
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
        page.wait_for_function(SLIDER_MOVED_JS, timeout=10_000)
        page.screenshot(path=str(ARTIFACTS / f"compare-{name}-full.png"), full_page=True)
    finally:
        context.close()
