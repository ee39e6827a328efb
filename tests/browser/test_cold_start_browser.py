"""A hall opening one link on a server just started: every visitor gets the page, none an error; a
page open while its server restarts runs anew on it, and its downloads work.

Each session runs ``app.py`` in a thread of its own; on a cold server the first visitors used to
import the app's packages side by side, and Python's per-module import locks handed most of them a
half-initialized module (ImportError, AttributeError, _DeadlockError: 6 or 7 error pages in 11
tabs). ``ui.load`` imports one session at a time. Skipped, with the reason, when Debian's
/usr/bin/chromium (or Playwright) is missing.
"""

from __future__ import annotations

import os
import signal
import time

import pytest
from support.browser import BROWSER, SETTLED_JS, fresh_server_fixture
from support.wire import listen

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


def test_a_page_open_while_its_server_restarts_runs_anew_and_downloads(server, browser):
    """Last in the module: it restarts the server on its port. The page reconnects to a server that
    never ran its session: it runs the script there (``ui.app``), so that a download button asks the
    new session for a file it has. Before, it kept the old session's buttons, and a click did nothing
    (the server answered "Invalid session ID for backend operation request")."""
    context = browser.new_context(viewport={"width": 1280, "height": 720}, accept_downloads=True)
    page = context.new_page()
    wire = listen(page)
    try:
        page.goto(f"{server.url}/?n=4&seed=21")
        page.wait_for_function(SETTLED_JS, polling=50)
        runs = wire.full_runs
        os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait()
        assert server._start()
        deadline = time.monotonic() + 120
        while wire.full_runs == runs and time.monotonic() < deadline:
            page.wait_for_timeout(100)  # the page reconnects by itself, then asks for a run
        assert wire.full_runs == runs + 1
        page.wait_for_function(SETTLED_JS, polling=50)
        with page.expect_download() as started:
            page.locator(".st-key-explorer_downloads button").first.click()
        assert os.path.getsize(started.value.path()) > 0
    finally:
        context.close()
