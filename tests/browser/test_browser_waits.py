"""The browser tests' wait for a settled page fails in words: what kept the page, and its picture."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import support.browser
import support.decks
from support.browser import BROWSER, AppVanished, wait_until_settled

pytestmark = BROWSER


def test_a_page_that_never_settles_fails_naming_what_kept_it(browser):
    context = browser.new_context()
    page = context.new_page()
    # No Streamlit app: its script state is never "notRunning"; and an error the page did not catch.
    page.set_content("<h1>Not an app</h1><script>throw new Error('the frontend fell over')</script>")
    try:
        kept = r"not settled in 1 s: .*\"script\":null.*the frontend fell over.*Not an app.*picture: "
        with pytest.raises(AssertionError, match=kept) as failed:
            wait_until_settled(page, timeout=1)
    finally:
        context.close()
    picture = Path(re.search(r"picture: (\S+)\)$", str(failed.value))[1])
    assert picture.is_file() and picture.stat().st_size > 0
    picture.unlink()


def test_a_page_without_an_app_is_told_apart_from_a_slow_one(browser, monkeypatch):
    """A loaded document holding no Streamlit app fails at once as such, not after the whole wait."""
    monkeypatch.setattr(support.browser, "APPLESS_POLLS", 5)
    context = browser.new_context()
    page = context.new_page()
    page.set_content("<h1>Not an app</h1>")
    try:
        with pytest.raises(AppVanished, match=r"has no app: .*\"script\":null.*Not an app"):
            wait_until_settled(page, timeout=60, reload_vanished=False)
    finally:
        context.close()


def test_a_page_whose_app_vanished_is_reloaded_once_and_said(server, browser, monkeypatch):
    monkeypatch.setattr(support.browser, "APPLESS_POLLS", 5)
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(server.url + "/")
        wait_until_settled(page)
        page.evaluate("() => document.getElementById('root').replaceChildren()")  # as React unmounting it
        with pytest.warns(UserWarning, match="reloaded a page whose app vanished"):
            wait_until_settled(page)
        assert page.locator('[data-testid="stApp"] h1').count() == 1
    finally:
        context.close()


def test_a_message_that_never_comes_fails_with_what_the_page_showed_and_ran(server, browser, monkeypatch):
    """``support.decks.said`` (the deck tests' wait for what a page says) fails as the settled wait does,
    and with the sidebar's text and what ran on the page: a deck box's message that never came in CI
    said only that a locator had timed out."""
    monkeypatch.setattr(support.decks, "PATIENCE_MS", 1000)
    context, page = support.decks._open(browser, server.url + "/", phone=False)
    try:
        with pytest.raises(AssertionError, match=r"did not say 'Never said' within 1 s: .*\"script\":"
                           r"\"notRunning\".*sidebar: '.*Present or add to a deck.*ran: .*socket opened "
                           r"/_stcore/stream.*run of the page.*run ended.*picture: ") as failed:
            support.decks.said(page, "Never said")
    finally:
        context.close()
    picture = Path(re.search(r"picture: (\S+)\)$", str(failed.value))[1])
    assert picture.is_file() and picture.stat().st_size > 0
    picture.unlink()
