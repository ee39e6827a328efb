"""How often the page's script runs, and how often a figure is sent, in headless Chromium (issue 31).

Counted from what the server sends the tab (``support.wire``), never timed: a first visit in any window
is one run of the page's script, which sends the figure once (the page's head told the session the
window's width: ``ui.window_cookie``; the chart element fits the figure to the room below its top); a
window resized by a step posts its measure, and the view's fragment runs once more; a changed control
is one run and one figure; the
parts that change alone (the "Keep playing" toggle, the deck box) rerun alone, sending no figure.
Skipped, with the reason, when Debian's /usr/bin/chromium (or Playwright) is missing.
"""

from __future__ import annotations

import re
import time

import pytest
from support.browser import BROWSER, set_number, wait_for_figure, wait_until_settled
from support.wire import Wire, listen

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


def _charts(page) -> int:
    return page.locator('.polarize-chart').count()


def _until(page, done, timeout: float = 60.0) -> None:
    """Wait until ``done()`` holds, the browser's events (and so the wire's frames) handled meanwhile."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "the state waited for did not come"
        page.wait_for_timeout(50)


def _opened(server, browser, width: int, height: int, *, scheme: str = "light",
            first: tuple[int, int] | None = None):
    """The Explorer opened in a new session, settled; its page and the wire counting from the start. With
    ``first``, the page opens in a window that size, then is resized to the context's."""
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    page = context.new_page()
    wire = listen(page)
    if first is not None:
        page.set_viewport_size({"width": first[0], "height": first[1]})
    page.goto(server.url + "/")
    wait_for_figure(page)
    wait_until_settled(page)
    if first is not None:
        page.set_viewport_size({"width": width, "height": height})
        _until(page, lambda: wire.fragment_runs > 0)
        wait_until_settled(page)
    return context, page, wire


@pytest.fixture
def explorer(server, browser):
    """The Explorer in the window the server assumes (``polarize.plots.display.DEFAULT``)."""
    context, page, wire = _opened(server, browser, 1280, 720)
    yield page, wire
    context.close()


@pytest.fixture
def wide(server, browser):
    """The Explorer opened in the assumed window, then widened to 1920 x 1080: the page posts its
    measure."""
    context, page, wire = _opened(server, browser, 1920, 1080, first=(1280, 720))
    yield page, wire
    context.close()


def _since(wire: Wire, before: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(now - then for now, then in zip(wire.counts(), before, strict=True))[:4]


def test_a_first_visit_is_one_script_run_and_sends_the_figure_once(explorer):
    page, wire = explorer
    assert wire.counts()[:4] == (1, 0, _charts(page), 0)
    assert wire.measures == []  # the server assumed this window: nothing to post, no fragment run


@pytest.mark.parametrize(("width", "height", "scheme"), [(1920, 1080, "light"), (390, 844, "dark")])
def test_a_first_visit_in_another_window_is_one_script_run_too(server, browser, width, height, scheme):
    """Issue 41: a wide screen's or a phone's first visit (here a dark one) posted its measure and reran
    the view's fragment; the page's head now tells the first run the window (``ui.window_cookie``)."""
    context, page, wire = _opened(server, browser, width, height, scheme=scheme)
    try:
        assert wire.counts()[:4] == (1, 0, _charts(page), 0)
        assert wire.measures == []
    finally:
        context.close()


def test_a_resized_window_posts_its_measure_once_and_the_figure_is_drawn_once(wide):
    page, wire = wide
    full, fragments, sent, referenced, _ = wire.counts()
    assert (full, len(wire.measures)) == (1, 1), wire.measures
    # The view's fragment, asked for by the measure: one, but for a page whose layout moved after
    # it was measured (seen on a busy machine), which measures and posts again.
    assert 1 <= fragments <= len(wire.measures), wire.measures
    assert _charts(page) <= sent + referenced <= _charts(page) * (1 + fragments)


MEASURED_JS = """() => {
  const box = document.querySelector('.polarize-viewport');
  return !!box && (box.dataset.measured !== undefined || box.dataset.waiting === 'style');
}"""
"""True once the viewport element has measured the page, or says it waits for the app's style sheet."""


def test_a_first_visit_measures_once_the_apps_style_is_in(server, browser):
    """The app's style sheet comes in an ``st.html`` element, which Streamlit draws from a chunk it loads
    on first use: on a busy first visit it came after the run had ended. The page measured itself
    without it (its component's frame not hidden yet), and posted again once it was in: the view run
    and its figure sent twice. Here that chunk is held until the page has measured, or says it waits
    for the style: in the window the server assumes, nothing is posted, before or after."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    held = []
    page.route("**/static/js/Html.*.js", lambda route: held.append(route))
    wire = listen(page)
    try:
        page.goto(server.url + "/")
        page.wait_for_function(MEASURED_JS, polling=25)
        assert held, "no st.html chunk was asked for: Streamlit draws st.html otherwise now"
        for route in held:
            route.continue_()
        page.unroute("**/static/js/Html.*.js")
        wait_for_figure(page)
        wait_until_settled(page)
        assert wire.measures == []
        assert wire.counts()[:4] == (1, 0, _charts(page), 0)
    finally:
        context.close()


def test_no_fragment_is_drawn_inside_another(wide):
    """A run of the view's fragment sends only its own deltas. A fragment drawn inside it (the
    downloads were one) keeps its messages when a run of the outer one is cut short (Streamlit's
    queue drops the outer one's, not the inner one's), and they then address places the dropped
    ones never made: the frontend threw and left a blank page (seen on first visits under load)."""
    _, wire = wide
    assert wire.fragment_runs >= 1  # the view's, after the resized page posted its measure
    assert wire.strays == []


def test_a_later_session_of_the_same_browser_is_fitted_in_its_first_run(wide):
    """The first session's measure is kept in a cookie (``ui.viewport.COOKIE``): a new tab of the same
    browser (a new session) is one run, the figure fitted, and the page has nothing to post."""
    first, _ = wide
    page = first.context.new_page()
    wire = listen(page)
    page.goto(first.url)
    wait_for_figure(page)
    wait_until_settled(page)
    assert wire.counts()[:4] == (1, 0, _charts(page), 0)
    box = "() => document.querySelector('.st-key-main_figure').getBoundingClientRect().toJSON()"
    assert page.evaluate(box) == first.evaluate(box)  # drawn as the first session drew it


def test_a_changed_control_is_one_run_and_one_figure(explorer):
    page, wire = explorer
    before, shown = wire.counts(), wait_for_figure(page)
    set_number(page, "Seed", 7)
    wait_for_figure(page, different_from=shown)
    wait_until_settled(page)
    assert _since(wire, before) == (1, 0, _charts(page), 0)


def test_keep_playing_and_add_to_deck_rerun_alone(explorer):
    page, wire = explorer
    before = wire.counts()
    page.get_by_text("Keep playing after a change").click()
    _until(page, lambda: wire.fragment_runs > before[1])
    wait_until_settled(page)
    assert _since(wire, before) == (0, 1, 0, 0)

    # Opening the deck box draws its inside (a rerun of the box alone), then adding reruns it again.
    before = wire.counts()
    page.get_by_text("Present or add to a deck").click()
    page.get_by_label("Slide title").fill("Alone")
    page.get_by_role("button", name="Add to deck").click()
    page.get_by_text(re.compile(r"Added slide \d+ to the deck")).wait_for()
    wait_until_settled(page)
    assert _since(wire, before) == (0, 2, 0, 0)
