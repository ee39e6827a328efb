"""The viewport element in headless Chromium: a phone's window reads as a phone, a projector's not.

A small script serves the element alone and shows what Python got and how often it ran: a
window the server assumes (1280 px wide, light) posts nothing, another posts its measure once, and
a resize costs one rerun only when the width changes by a step (the height is the chart element's);
a dark theme, the system's or the app menu's, is posted; a later tab of the same browser is fitted from
the cookie. The element is no iframe: it lives in the page's own DOM and takes no room.
Skipped, with the reason, when Debian's /usr/bin/chromium (or Playwright) is missing.
"""

from __future__ import annotations

import re

import pytest
from support.browser import BROWSER, AppServer

from ui.viewport import COOKIE, STEP

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

SCRIPT = '''
import streamlit as st
from ui import theme
from ui.viewport import last, measure

theme.style()  # as the app writes it on every run: the page measures once it is in effect
st.session_state["runs"] = st.session_state.get("runs", 0) + 1
seen = last(presenting=False, deck=False)
measure(seen)
st.text(f"mode={seen.mode.value} width={seen.width} dark={seen.dark} runs={st.session_state['runs']}")
'''


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    script = tmp_path_factory.mktemp("viewport") / "viewport_app.py"
    script.write_text(SCRIPT)
    with AppServer(script=script) as running:
        yield running




def _open(browser, server, width: int, height: int, query: str = "", scheme: str = "light"):
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    page = context.new_page()
    page.goto(server.url + "/" + query)
    return context, page


def _wait_for(page, pattern: str) -> dict[str, str]:
    """Wait until the script's line matches ``pattern`` (a regex); its fields."""
    line = page.get_by_text(re.compile(pattern))
    line.wait_for()
    return dict(part.split("=") for part in line.text_content().split())


def test_a_phone_window_is_a_phone_after_one_rerun(browser, server):
    context, page = _open(browser, server, 390, 844)
    try:
        seen = _wait_for(page, "mode=phone")
        assert seen["width"] == str(390 // STEP * STEP) and seen["runs"] == "2"
        # The element takes no room on the page: the app's style hides it.
        assert page.locator(".polarize-viewport").bounding_box() is None
    finally:
        context.close()


def _measured(page) -> None:
    """Wait until the element has measured the page and has nothing (more) to post."""
    page.wait_for_function("""() => {
      const box = document.querySelector('.polarize-viewport');
      return !!box && box.dataset.measured !== undefined && box.dataset.posted === ''
        && box.dataset.pending === undefined;
    }""")


def test_the_element_is_in_the_page_s_own_dom_not_an_iframe(browser, server):
    """Issue 41: the measure was an iframe (a components v1 frame, loaded late) that read Streamlit's
    ``data-testid``s and local storage through its parent window. It is an element of the page itself."""
    context, page = _open(browser, server, 1280, 720)
    try:
        _wait_for(page, "mode=normal width=1280")  # the measuring element is drawn before this line
        assert page.locator("iframe").count() == 0
        _measured(page)
        assert page.locator(".st-key-viewport .polarize-viewport").count() == 1
    finally:
        context.close()


def test_a_dark_theme_is_posted_and_a_later_tab_is_fitted_from_the_cookie(browser, server):
    """A dark system theme reads dark (the server may know it from the first request, else the page posts
    it); the app menu's Light is posted in its turn. A later tab of the same browser is fitted from
    the cookie the last post wrote: its first run is the only one."""
    context, page = _open(browser, server, 1920, 1080, scheme="dark")
    try:
        _wait_for(page, "mode=normal width=1920 dark=True")
        _measured(page)
        page.get_by_test_id("stMainMenu").click()
        page.get_by_test_id("stMainMenuItem-theme-Light").click()
        _wait_for(page, "width=1920 dark=False")
        _measured(page)
        later = context.new_page()
        later.goto(server.url + "/")
        assert _wait_for(later, "mode=normal width=1920 dark=False")["runs"] == "1"
        _measured(later)
        assert _wait_for(later, "mode=normal")["runs"] == "1"
    finally:
        context.close()


def test_the_assumed_window_posts_nothing_and_a_resize_only_a_new_width(browser, server):
    context, page = _open(browser, server, 1280, 720)
    try:
        assert _wait_for(page, "mode=normal width=1280")["runs"] == "1"
        _measured(page)  # the server's assumption holds: the page posted nothing
        assert _wait_for(page, "mode=normal")["runs"] == "1"
        page.set_viewport_size({"width": 390, "height": 720})
        assert _wait_for(page, "mode=phone")["runs"] == "2"
        page.set_viewport_size({"width": 390, "height": 500})  # the height: the chart element's, no run
        page.set_viewport_size({"width": 1920, "height": 1080})
        assert _wait_for(page, "mode=normal width=1920")["runs"] == "3"
        _measured(page)
        assert _wait_for(page, "mode=normal")["runs"] == "3"
    finally:
        context.close()


def test_a_cookie_that_cannot_be_read_is_counted_as_none(browser, server):
    """Issue 43: 4 kB of nested brackets in the cookie (name and value within a browser's 4,096
    bytes) showed a RecursionError box on every page for as long as the cookie lived. Read as no
    cookie: the page is the assumed window's, and measures as a first visit does."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.add_cookies([{"name": COOKIE, "value": "%5B" * 1350, "url": server.url}])
    page = context.new_page()
    try:
        page.goto(server.url + "/")
        assert _wait_for(page, "mode=normal width=1280")["runs"] == "1"
        _measured(page)
        assert page.locator('[data-testid="stException"]').count() == 0
    finally:
        context.close()
