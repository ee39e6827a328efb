"""The viewport component in headless Chromium: a phone's window reads as narrow, a projector's not.

A small script serves the component alone and shows what Python got and how often it ran,
so the test can also check that a desktop window costs no rerun. Skipped, with the reason,
when Debian's /usr/bin/chromium (or Playwright) is missing.
"""

from __future__ import annotations

import re

import pytest
from browser_support import BROWSER, AppServer, browser_fixture

from ui.viewport import HEIGHT_STEP

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

SCRIPT = '''
import streamlit as st
from ui.viewport import viewport

st.session_state["runs"] = st.session_state.get("runs", 0) + 1
seen = viewport(measure_height="measure" in st.query_params)
st.text(f"narrow={seen.narrow} height={seen.height} runs={st.session_state['runs']}")
'''


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    script = tmp_path_factory.mktemp("viewport") / "viewport_app.py"
    script.write_text(SCRIPT)
    with AppServer(script=script) as running:
        yield running


browser = browser_fixture(sync_api)


def _open(browser, server, width: int, height: int, query: str = ""):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(server.url + "/" + query)
    return context, page


def _wait_for(page, pattern: str) -> dict[str, str]:
    """Wait until the script's line matches ``pattern`` (a regex); its fields."""
    line = page.get_by_text(re.compile(pattern))
    line.wait_for(timeout=30_000)
    return dict(part.split("=") for part in line.text_content().split())


def test_a_phone_window_is_narrow_after_one_rerun(browser, server):
    context, page = _open(browser, server, 390, 844)
    try:
        seen = _wait_for(page, "narrow=True")
        assert seen["height"] == "None" and seen["runs"] == "2"
        # The frame takes no room on the page.
        frame = page.locator("iframe[title*='viewport']")
        assert frame.bounding_box()["height"] == 0
    finally:
        context.close()


def test_a_projector_window_costs_no_rerun_until_it_is_made_narrow(browser, server):
    context, page = _open(browser, server, 1280, 720)
    try:
        _wait_for(page, "narrow=False")
        # The frame has measured the window and posted nothing: Python's assumption was right.
        frame = page.frame_locator("iframe[title*='viewport']").locator("body[data-measured]")
        frame.wait_for(state="attached", timeout=30_000)
        assert frame.get_attribute("data-posted") == ""
        assert _wait_for(page, "narrow=False")["runs"] == "1"
        page.set_viewport_size({"width": 390, "height": 720})
        assert _wait_for(page, "narrow=True")["runs"] == "2"
        page.set_viewport_size({"width": 1920, "height": 1080})
        assert _wait_for(page, "narrow=False")["runs"] == "3"
    finally:
        context.close()


def test_the_height_is_reported_in_steps_when_asked(browser, server):
    context, page = _open(browser, server, 1280, 844, "?measure=1")
    try:
        seen = _wait_for(page, "height=[0-9]")
        assert int(seen["height"]) == 844 // HEIGHT_STEP * HEIGHT_STEP and seen["narrow"] == "False"
    finally:
        context.close()
