"""The window's width in the viewport's cookie, written by the page's head before the session starts
(``ui.window_cookie``), in headless Chromium against the real server (``server.py``).

The cookie is read as the page's script is parsed (before the session's first run); the counts of that
run are tests/browser/test_fragments_browser.py's. Skipped, with the reason, when Debian's
/usr/bin/chromium (or Playwright) is missing.
"""

from __future__ import annotations

import json
from urllib.parse import quote, unquote

import pytest
from support.browser import BROWSER

from ui.viewport import COOKIE, STEP

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

MEASURED = {"window": 1280, "dark": True, "width": 840, "presenting": False}
"""A cookie the viewport element wrote in a 1280 px window (``ui/viewport_frontend/viewport.js``)."""


def _cookie_after_reading(browser, server, path: str, width: int, cookie: str | None = None) -> dict | None:
    """The viewport's cookie once a new visitor's page at ``path`` in a ``width`` px window (with
    ``cookie`` set before) has been read, its session not waited for."""
    context = browser.new_context(viewport={"width": width, "height": 800})
    try:
        if cookie is not None:
            context.add_cookies([{"name": COOKIE, "value": cookie, "url": server.url}])
        page = context.new_page()
        page.goto(server.url + path, wait_until="domcontentloaded")
        values = [c["value"] for c in context.cookies(server.url) if c["name"] == COOKIE]
        return json.loads(unquote(values[0])) if values else None
    finally:
        context.close()


@pytest.mark.parametrize(("path", "width"),
                         [("/", 390), ("/normalizers", 1920), ("/losses?present=true", 1366)])
def test_a_new_visitor_s_page_writes_its_window_s_width(browser, server, path, width):
    """A page's own address (which Streamlit sends gzipped) as well as the app's: the width, rounded down
    to the element's step, and nothing it does not know yet (the theme, the column's width)."""
    assert _cookie_after_reading(browser, server, path, width) == {"window": width // STEP * STEP}


def test_a_cookie_of_this_window_is_kept_another_s_keeps_only_the_theme(browser, server):
    """The element's cookie from a window as wide is kept whole (the column's width it measured); from
    another window, the new width and the theme it measured; one that cannot be read is replaced."""
    told = quote(json.dumps(MEASURED))
    assert _cookie_after_reading(browser, server, "/", 1280, told) == MEASURED
    assert _cookie_after_reading(browser, server, "/", 1920, told) == {"window": 1920, "dark": True}
    assert _cookie_after_reading(browser, server, "/", 1280, "%5B" * 1350) == {"window": 1280}
