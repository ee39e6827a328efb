"""Presentation mode in headless Chromium at 1280x720 (a projector): everything on one screen.

Skipped, with the reason, when Debian's /usr/bin/chromium (or Playwright) is missing.
"""

from __future__ import annotations

import os

import pytest
from browser_support import CHROMIUM, module_fixtures, wait_for_figure

from polarize.plots.style import FONT_SIZE, PRESENT_SCALE

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                       reason=f"{CHROMIUM} is missing (apt-get install chromium)"),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
server, browser = module_fixtures(sync_api)

# Where things are on the page: the first figure (the dashboard), its play buttons and slider,
# the title, the sidebar, any caption shown, and the root font size.
LAYOUT_JS = """() => {
  const box = (e) => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom,
                                                                   left: r.left, right: r.right}; };
  const figure = document.querySelector('.js-plotly-plot');
  const controls = [...figure.querySelectorAll(
    '.updatemenu-button, .slider-rail-rect, .slider-grip-rect')];
  const captions = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
    .filter((e) => e.getClientRects().length > 0);
  return {figure: box(figure), font: figure.layout.font.size, controls: controls.map(box),
          title: box(document.querySelector('h1')),
          sidebar: box(document.querySelector('[data-testid="stSidebar"]')),
          captions: captions.length,
          root: parseFloat(getComputedStyle(document.documentElement).fontSize)};
}"""


def test_presentation_mode_fits_a_projector(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        page.goto(f"{server.url}/explorer?present=true&n=5")
        wait_for_figure(page, timeout=90)
        page.wait_for_function("() => document.querySelector('.js-plotly-plot .updatemenu-button') !== null")
        seen = page.evaluate(LAYOUT_JS)
        assert seen["sidebar"]["right"] <= 0  # collapsed: off the screen
        assert seen["captions"] == 0
        assert seen["root"] == pytest.approx(1.5 * 16)  # the page's type, 1.5 times the browser's
        assert seen["font"] == pytest.approx(FONT_SIZE * PRESENT_SCALE, abs=0.1)
        assert 0 <= seen["title"]["top"] and seen["title"]["bottom"] <= seen["figure"]["top"] + 1
        assert seen["figure"]["bottom"] <= 720 and seen["figure"]["right"] <= 1280
        assert len(seen["controls"]) >= 7  # play, pause, three speeds; the slider and its grip
        for control in seen["controls"]:
            assert 0 <= control["top"] and control["bottom"] <= 720, control
        assert "present=true" in page.url  # the address keeps the mode for the next rerun
    finally:
        context.close()
