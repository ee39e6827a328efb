"""The sidebar's controls element (``ui.controls``) in Chromium: each kind of input changes the page,
the page's rules reach the inputs, and a keyboard user keeps their place across the rerun."""

from __future__ import annotations

import pytest
from support.browser import BROWSER, slider_value, wait_for_figure, wait_until_settled

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture
def page(tabs):
    """A new visitor's tab at 1280 x 720 (``support.browser.Tabs``)."""
    return tabs.fresh(width=1280, height=720)


def _console_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    return errors


def test_the_keyboard_changes_a_slider_twice_and_keeps_its_place(server, page):
    errors = _console_errors(page)
    page.goto(server.url + "/")
    before = wait_for_figure(page)
    tokens = page.get_by_role("slider", name="Tokens n")
    tokens.focus()
    tokens.press("ArrowRight")
    page.wait_for_url("**n=9&**")
    wait_for_figure(page, different_from=before)
    wait_until_settled(page)
    assert page.evaluate("() => document.activeElement.getAttribute('aria-label')") == "Tokens n"
    page.keyboard.press("ArrowRight")  # the same input, still focused after the rerun
    page.wait_for_url("**n=10&**")
    wait_until_settled(page)
    assert slider_value(page, "Tokens n") == "10" and not errors


def test_a_radio_turns_on_what_it_applies_to_and_a_select_slider_says_its_option(server, page):
    page.goto(server.url + "/")
    wait_for_figure(page)
    rate = page.get_by_role("spinbutton", name="Learning rate")
    assert rate.is_disabled()  # the exact flow has no step size
    page.get_by_role("radio", name="gradient descent").check()
    page.wait_for_url("**method=gd&**")
    wait_until_settled(page)
    assert rate.is_enabled()
    horizon = page.get_by_role("slider", name="Horizon (final time)")
    assert slider_value(page, "Horizon (final time)") == "1e5"
    horizon.focus()
    horizon.press("ArrowLeft")
    page.wait_for_url("**horizon=50000&**")  # the option before 1e5
    wait_until_settled(page)
    assert slider_value(page, "Horizon (final time)") == "5e4"


def test_a_multiselect_takes_at_most_its_most(server, page):
    page.goto(server.url + "/tied")
    wait_until_settled(page)
    group = page.get_by_role("group", name="Sizes D")
    boxes = group.get_by_role("checkbox")
    chosen = [boxes.nth(i).is_checked() for i in range(boxes.count())]
    free = [i for i, on in enumerate(chosen) if not on]
    for i in free[:5 - sum(chosen)]:
        before = page.url
        boxes.nth(i).check()
        page.wait_for_function("(before) => window.location.href !== before", arg=before)
        wait_until_settled(page)
    states = [(boxes.nth(i).is_checked(), boxes.nth(i).is_disabled()) for i in range(boxes.count())]
    assert sum(on for on, _ in states) == 5
    assert all(off for on, off in states if not on)  # a sixth cannot be chosen
