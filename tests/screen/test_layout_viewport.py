"""The viewport element's value plumbing (ui/viewport.py), headless under AppTest.

AppTest runs no JavaScript: the page's post is played by setting the element's state value
(``STATE``), as the browser would. The browser half (a 390 px window is narrow) is in
tests/browser/test_layout_viewport_browser.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from support.app import figures

from polarize.plots.display import NARROW_BELOW, Display
from ui.viewport import COOKIE, KEY, SCRIPT, STATE, STEP, read, remembered


def _script() -> None:
    import streamlit as st

    from ui.viewport import last, measure

    seen = last(presenting=False, deck=False)
    measure(seen)
    st.text(f"mode={seen.mode.value} width={seen.width} column={seen.column_width} dark={seen.dark}")


def _run(posted=None) -> AppTest:
    at = AppTest.from_function(_script, default_timeout=30)
    if posted is not None:
        at.session_state[KEY] = {STATE: posted}
    return at.run()


def _args(at: AppTest) -> dict:
    (element,) = at.get("bidi_component")
    return json.loads(element.proto.json)


def test_until_the_page_posts_the_display_is_a_projector_and_the_page_is_told_so():
    at = _run()
    assert not at.exception
    assert at.text[0].value == "mode=normal width=1280 column=791 dark=False"
    args = _args(at)
    # What the server assumed: the page posts only where the truth differs from it.
    assert args["assumed"] == {"window": 1280, "dark": False, "width": 791, "presenting": False}
    assert args["narrow_below"] == NARROW_BELOW and args["step"] == STEP
    assert (args["state"], args["cookie"]) == (STATE, COOKIE)  # what it posts, and keeps


def test_a_posted_window_becomes_python_s_assumption():
    posted = {"window": 360, "dark": True, "width": 320, "presenting": False}
    at = _run(posted)
    assert at.text[0].value == "mode=phone width=360 column=320 dark=True"
    # The page is told what Python now assumes, so it posts nothing more until the truth changes.
    assert _args(at)["assumed"] == posted


def test_the_column_is_read_only_in_the_mode_it_was_measured_in():
    normal = {"window": 1280, "width": 760, "presenting": False}
    assert read(normal).column_width == 760
    # Presenting closes the sidebar: a normal page's column says nothing of a presented one's.
    assert read(normal, presenting=True).column is None
    assert read({"width": -1}) == Display()


@pytest.mark.parametrize("window,presenting,column", [(1280, False, 791), (1920, False, 1431),
                                                      (1280, True, 1194), (390, False, 356)])
def test_the_estimated_column_is_the_one_chromium_lays_out(window, presenting, column):
    """Chromium's, measured with the app's style sheet (``tests/browser/test_layout_viewport_browser``
    holds the page to it: a first visit in the assumed window posts nothing)."""
    assert abs(Display(width=window, presenting=presenting).column_width - column) < 1


@pytest.mark.parametrize("posted", ["narrow", 3, ["x"], {"window": "yes", "width": "680"},
                                    {"window": 1, "width": -40}, {"dark": 1}, {"window": 10**9},
                                    {"width": 2.5}])
def test_whatever_a_page_posts_reads_as_a_valid_display(posted):
    seen = read(posted)
    assert seen.height == 720 and seen.column is None
    at = _run(posted)
    assert not at.exception and at.text[0].value.startswith("mode=")


def _dashboard_columns(at: AppTest) -> set[tuple[float, float]]:
    """The x domains the Explorer's dashboard lays its panels out in."""
    spec = figures(at)[0]
    return {tuple(v["domain"]) for k, v in spec["layout"].items() if k.startswith("xaxis")}


def test_the_renderer_builds_a_phone_s_view_with_its_panels_stacked():
    """A phone's dashboard: the simplex across the figure, the other panels in two columns."""
    app = str(Path(__file__).resolve().parents[2] / "app.py")
    wide = AppTest.from_file(app, default_timeout=60)
    wide.session_state[KEY] = {STATE: {"window": 1280}}  # as the page posts it
    wide.run()
    wide_columns = _dashboard_columns(wide)
    assert not wide.exception and len(wide_columns) == 3 and (0, 1) not in wide_columns
    phone = AppTest.from_file(app, default_timeout=60)
    phone.session_state[KEY] = {STATE: {"window": 360}}
    phone.run()
    columns = _dashboard_columns(phone)
    assert not phone.exception and (0, 1) in columns and len(columns - {(0, 1)}) == 2


def _cookie(value) -> str:
    from urllib.parse import quote

    return quote(json.dumps(value))


def test_a_cookie_remembers_the_window_it_measured():
    saved = {"window": 1920, "dark": True, "width": 1400, "presenting": False}
    assert remembered(_cookie(saved)) == saved
    # What a post has, no more; an older cookie (its figure's places nested deeper) is not read.
    assert remembered(_cookie({"window": 1920, "height": 1080})) == {
        "window": 1920, "dark": None, "width": None, "presenting": None}
    assert remembered(_cookie({"window": 1920, "places": {"here": [200, 1400]}})) is None


@pytest.mark.parametrize("text", [None, "", "%7B", "not json", _cookie([1, 2]), _cookie("x"), "x" * 5000,
                                  _cookie({"width": "top"}), _cookie({"window": [1]}),
                                  _cookie({"window": "wide", "width": [None, 3]})])
def test_whatever_a_cookie_holds_reads_as_a_valid_display_or_none(text):
    seen = remembered(text)
    assert seen is None or read(seen).column is None


DEEP_COOKIES = ["[" * 4000, "%5B" * 1350, '{"window": ' * 300 + "1" + "}" * 300,
                _cookie({"window": 1920, "width": [[[[200]]], 1400]})]
"""Cookies of 4 kB or less whose JSON nests deeper than a viewport's (issue 43: a RecursionError)."""


@pytest.mark.parametrize("text", DEEP_COOKIES)
def test_a_cookie_nested_too_deep_counts_as_none(text):
    assert len(text) <= 4096
    assert remembered(text) is None


def test_the_element_is_a_component_v2_reading_nothing_streamlit_does_not_document():
    """No iframe (the element is a component v2 in the page's own DOM), and its script reads none of
    Streamlit's ``data-testid``s, none of its local storage, nothing of a parent window: only the window,
    the main figure's container by its key's class and the theme's CSS variables (issue 41)."""
    at = _run()
    assert not at.get("component_instance") and len(at.get("bidi_component")) == 1
    script = SCRIPT.read_text(encoding="utf-8")
    for undocumented in ("data-testid", "data-test-", "localStorage", "sessionStorage", "window.parent",
                         "frameElement", "postMessage", "stApp", "stActiveTheme"):
        assert undocumented not in script, undocumented
    assert "--st-background-color" in script and "ResizeObserver" in script
