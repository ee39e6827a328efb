"""Every page in headless Chromium for a newcomer: no dead end, formulas that fit, figures in its theme.

WCAG 2.1 AA (axe-core) on every page as it opens, light and dark, is checked in
tests/browser/test_layout_browser.py, on the pages it opens at 1280 x 720 anyway (here they were opened
again for it). Skipped, with the reason, when Chromium or Playwright is missing.
"""

from __future__ import annotations

import json

import pytest
from support.browser import (
    BROWSER,
    PLAYING_JS,
    figure_signature,
    next_frames,
    selectbox_value,
    wait_for_figure,
    wait_until_settled,
)

from polarize.normalizers import NORMALIZERS
from polarize.plots import style
from polarize.web.pages import PAGES

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

# JavaScript: every formula (or other box) on the page whose content is wider than its box: cut
# off, or behind a scroll bar.
OVERFLOWING_JS = """() => [...document.querySelectorAll(
    '[data-testid="stMain"] :is(.katex-display, .stMarkdown)')]
  .filter((e) => e.checkVisibility() && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
  .map((e) => `${e.textContent.trim().slice(0, 40)}: ${e.scrollWidth} px in ${e.clientWidth}`)"""


def address(spec, query: str = "") -> str:
    return f"/{'' if spec.default else spec.url_path}{query}"


def opened(tabs, server, spec, *, width=1280, height=720, scheme="light", query=""):
    """``spec``'s page for a new visitor, in the module's kept tab for that view, settled."""
    page = tabs.open(server.url + address(spec, query), width=width, height=height, scheme=scheme)
    wait_until_settled(page)
    return page


# JavaScript: the background of every figure on the page.
BACKGROUNDS_JS = ("() => [...document.querySelectorAll('.js-plotly-plot')]"
                  ".map((g) => g._fullLayout.paper_bgcolor)")


@pytest.mark.parametrize(("scheme", "query", "dark"),
                         [("light", "", False), ("dark", "", True), ("dark", "?present=true", True)])
def test_figures_follow_the_page_s_theme_presented_too(server, tabs, scheme, query, dark):
    """A presented page on a dark system theme is dark, and its figures with it: they were drawn light,
    a white card on a black page in a dark hall (issue 45)."""
    explorer = next(p for p in PAGES if p.default)
    page = opened(tabs, server, explorer, scheme=scheme, query=query)
    page.wait_for_function(f"() => ({BACKGROUNDS_JS})().length > 0")
    expected = style.DARK.background if dark else style.palette().background
    assert set(page.evaluate(BACKGROUNDS_JS)) == {expected}
    # The app menu's switch: the figures are drawn again for the other theme.
    page.get_by_test_id("stMainMenu").click()
    page.get_by_test_id(f"stMainMenuItem-theme-{'Light' if dark else 'Dark'}").click()
    other = style.palette().background if dark else style.DARK.background
    page.wait_for_function(f"() => ({BACKGROUNDS_JS})().every((c) => c === {other!r})")


@pytest.mark.parametrize("width", [390, 1280, 1920])
def test_long_formulas_wrap_at_every_width(server, tabs, width):
    maths = next(p for p in PAGES if p.name == "maths")
    page = opened(tabs, server, maths, width=width, height=844 if width == 390 else 720)
    assert page.locator(".katex-display").count() >= 6
    assert page.evaluate(OVERFLOWING_JS) == []


def test_every_normalizer_from_the_default_preset_draws_a_dashboard(server, tabs):
    explorer = next(p for p in PAGES if p.default)
    page = opened(tabs, server, explorer)
    label = "Normalizer \u03c3"
    wait_for_figure(page)
    for name in [n for n in NORMALIZERS if n != "softmax"]:
        page.get_by_role("button", name="Reset to preset").click()  # each from the default preset
        page.wait_for_url("**normalizer=softmax&**a_init=zeros&**")
        wait_until_settled(page)
        page.get_by_role("combobox", name=label).select_option(label=NORMALIZERS.labels[name])
        page.wait_for_url(f"**normalizer={name}&**")  # relu, l1 and sum agree on positive logits:
        wait_until_settled(page)  # their dashboards are the same, so wait for the address instead
        assert figure_signature(page) is not None
        assert selectbox_value(page, label) == NORMALIZERS.labels[name]
        assert page.locator('[data-testid="stAlertContentError"]').count() == 0, name
        moved = name in ("l2", "l1", "sum", "relu")
        assert ("a_init=shifted" in page.url) == moved, name
        assert page.get_by_text("so the logits now start at").count() == int(moved), name


# JavaScript: whether the chart's toolbar shows once the pointer rests on the figure's top right.
TOOLBAR_SHOWN_JS = """() => [...document.querySelectorAll('.js-plotly-plot .modebar-container .modebar')]
  .some((m) => m.checkVisibility({opacityProperty: true}) && m.getBoundingClientRect().width > 0)"""


@pytest.mark.parametrize(("width", "height", "query"),
                         [(1280, 720, ""), (390, 844, ""), (1280, 720, "?present=true")])
def test_no_chart_toolbar_shows_over_the_legend(server, tabs, width, height, query):
    """The toolbar showed on hover at the figure's top right, over the legend there: on desktops,
    phones and slides."""
    explorer = next(p for p in PAGES if p.default)
    page = opened(tabs, server, explorer, width=width, height=height, query=query)
    chart = page.locator('.polarize-chart').first
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    page.mouse.move(box["x"] + box["width"] - 30, box["y"] + max(box["height"] / 2, 10))
    next_frames(page)  # a toolbar shown on hover is drawn by now
    assert page.evaluate(TOOLBAR_SHOWN_JS) is False


@pytest.mark.parametrize("name", ["explorer", "descent"])
def test_playing_pausing_and_stepping_log_no_error(server, tabs, name):
    """Every Pause, Space or Step during play used to log "Uncaught (in promise) undefined": plotly's
    way of saying an animation was interrupted."""
    spec = next(p for p in PAGES if p.name == name)
    page = opened(tabs, server, spec)
    errors = []

    def page_error(error):
        errors.append(str(error))

    def console(message):  # resources (the page icon, Streamlit's probes) are not the transport's
        if message.type == "error" and "Failed to load" not in message.text:
            errors.append(message.text)

    page.on("pageerror", page_error)
    page.on("console", console)
    try:
        def pressed(playing):  # each press's state reached: an interrupted animation's promise settled
            page.wait_for_function(f"() => ({PLAYING_JS})() === {json.dumps(playing)}")
            next_frames(page)

        for label, playing in (("Play", True), ("Pause", False), ("Play", True), ("Step \u25b6", False)):
            page.locator(".updatemenu-button").filter(has_text=label).first.click()
            pressed(playing)
        page.locator('.polarize-chart').first.hover()
        for key, playing in (("Space", True), ("Space", False), ("ArrowRight", False), ("ArrowLeft", False),
                             ("Home", False)):
            page.keyboard.press(key)
            pressed(playing)
        assert errors == []
    finally:  # the tab is kept for the module's next test
        page.remove_listener("pageerror", page_error)
        page.remove_listener("console", console)
