"""The viewport component in headless Chromium: a phone's window reads as a phone, a projector's not.

A small script serves the component alone and shows what Python got and how often it ran: a
window the server assumes (1280 px wide, light) posts nothing, another posts its measure once, and
a resize costs one rerun only when the width changes by a step (the height is the chart element's).
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
st.text(f"mode={seen.mode.value} width={seen.width} runs={st.session_state['runs']}")
'''


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    script = tmp_path_factory.mktemp("viewport") / "viewport_app.py"
    script.write_text(SCRIPT)
    with AppServer(script=script) as running:
        yield running




def _open(browser, server, width: int, height: int, query: str = ""):
    context = browser.new_context(viewport={"width": width, "height": height})
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
        # The frame takes no room on the page: it sized itself 0 px tall, and the app's style hides it.
        frame = page.locator("iframe[title*='viewport']")
        assert frame.get_attribute("height") == "0" and frame.bounding_box() is None
    finally:
        context.close()


def _measured(page) -> None:
    """Wait until the frame has measured the page and has nothing (more) to post."""
    page.wait_for_function("""() => {
      const frame = document.querySelector("iframe[title*='viewport']");
      const body = frame && frame.contentDocument && frame.contentDocument.body;
      return !!body && body.dataset.measured !== undefined && body.dataset.posted === ''
        && body.dataset.pending === undefined;
    }""")


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
