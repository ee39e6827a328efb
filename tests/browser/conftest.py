"""The browser tests' fixtures: the app server they share, and headless Chromium.

Every module here drives the real app (``streamlit run server.py``) in headless Chromium or through
real processes, and carries the ``browser`` mark; tests/conftest.py hands these modules out first,
each whole to one process, which starts one server for all the browser tests it runs.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def shared_server():
    """The app (``streamlit run server.py``) on a free port, started once in each process for every browser
    test module that does not need a fresh one (``server``): starting it costs seconds."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from support.browser import SHARED_SERVER_ENV, AppServer
    from support.stream_client import open_page

    with AppServer(env=SHARED_SERVER_ENV) as running, ThreadPoolExecutor(1) as thread:
        # One first page, drawn by nobody: the server's imports and workers start here, once, not
        # inside the first test's 30 s wait for a figure. In a thread of its own: a module's
        # Playwright (sync API) may hold this thread's event loop.
        thread.submit(asyncio.run, open_page(running.url, "/", timeout=180)).result()
        yield running


@pytest.fixture
def server(shared_server):
    """The app a browser test drives: the session's ``shared_server``. A module that needs a server
    nobody has used yet overrides it with ``support.browser.fresh_server_fixture()``."""
    return shared_server


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (``support.browser.launch_browser``), shared by a module's tests.

    Module-scoped, not the session's: Playwright's sync API holds the thread's event loop while it
    runs, which would break any later test that runs one of its own (``asyncio.run``).
    """
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    from support.browser import launch_browser

    with sync_api.sync_playwright() as playwright:
        chromium = launch_browser(playwright)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def tabs(browser):
    """A kept tab per view for the module's tests, each test's page a new visitor's
    (``support.browser.Tabs``)."""
    from support.browser import Tabs

    kept = Tabs(browser)
    yield kept
    kept.close()
