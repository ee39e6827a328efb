"""A hall opening one link on a server just started: every visitor gets the page, none an error.

Each session runs ``app.py`` in a thread of its own; on a cold server the first visitors used to
import the app's packages side by side, and Python's per-module import locks handed most of them a
half-initialized module (ImportError, AttributeError, _DeadlockError: 6 or 7 error pages in 11
tabs). ``ui.load`` imports one session at a time. Skipped, with the reason, when Debian's
/usr/bin/chromium (or Playwright) is missing.
"""

from __future__ import annotations

import pytest
from support.browser import BROWSER, fresh_server_fixture

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

VISITORS = 10
"""Tabs opened at once, before the server has run the app once."""

server = fresh_server_fixture()

_SHOWN = """() => document.querySelector('h1')
  || document.querySelector('[data-testid="stException"], [data-testid="stAlertContentError"]')"""


def test_visitors_arriving_together_on_a_cold_server_all_get_the_page(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        tabs = [context.new_page() for _ in range(VISITORS)]
        for tab in tabs:  # the maths page: no computation, so the sessions race only on importing
            tab.goto(f"{server.url}/maths", wait_until="commit")
        errors = []
        for i, tab in enumerate(tabs):
            tab.wait_for_function(_SHOWN)
            if not tab.locator("h1").count():
                errors.append(f"tab {i}: " + tab.inner_text("body")[:200])
        assert not errors, "\n".join(errors)
        with open(server.log, encoding="utf-8") as log:
            assert "Traceback" not in log.read()
    finally:
        context.close()
