"""The viewport component's value plumbing (ui/viewport.py), headless under AppTest.

AppTest runs no JavaScript: the page's post is played by setting the component's widget
value, as the browser would. The browser half (a 390 px window is narrow) is in
tests/browser/test_layout_viewport_browser.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from support.app import figures

from polarize.plots.display import NARROW_BELOW, Display, Mode
from ui.viewport import KEY, STEP, read, remembered


def _script() -> None:
    import streamlit as st

    from ui.viewport import held, last, measure

    seen = last(presenting=False, deck=False)
    measure("here")
    st.text(f"held={held('here')}")
    st.text(f"mode={seen.mode.value} width={seen.width} height={seen.height} top={seen.top}")


def _run(posted=None) -> AppTest:
    at = AppTest.from_function(_script, default_timeout=30)
    if posted is not None:
        at.session_state[KEY] = posted
    return at.run()


def _args(at: AppTest) -> dict:
    (component,) = at.get("component_instance")
    return json.loads(component.proto.json_args)


def test_until_the_page_posts_the_display_is_a_projector():
    at = _run()
    assert not at.exception
    assert at.text[1].value == "mode=normal width=1280 height=720 top=None"
    args = _args(at)
    assert args["assumed"] is None  # nothing assumed: the page posts what it measures
    assert args["narrow_below"] == NARROW_BELOW and args["step"] == STEP and args["place"] == "here"
    assert at.text[0].value == "held=False"  # a headless client measures nothing: shown the figure at once


def test_a_posted_window_becomes_python_s_assumption():
    posted = {"window": 360, "height": 840, "dark": False, "dark_chosen": False, "top": 200, "width": 320}
    at = _run(posted)
    assert at.text[1].value == "mode=phone width=360 height=840 top=200"
    # The page is told what Python now assumes, so it posts nothing more until the truth changes.
    assert _args(at)["assumed"] == posted | {"place": None}


def test_the_main_figure_s_place_and_the_column_are_read():
    seen = read({"window": 1280, "height": 680, "top": 240, "width": 760})
    assert (seen.top, seen.column, seen.column_width, seen.mode) == (240, 760, 760, Mode.NORMAL)
    assert read({"height": 680, "top": "240", "width": -1}) == Display(height=680)


@pytest.mark.parametrize("posted", ["narrow", 3, ["x"], {"window": "yes", "height": "680"},
                                    {"window": 1, "height": -40}, {"height": True}, {"height": 10**9},
                                    {"top": 0}, {"width": 2.5}])
def test_whatever_a_page_posts_reads_as_a_valid_display(posted):
    seen = read(posted)
    assert seen.height == 720 and seen.top is None and seen.column is None
    at = _run(posted)
    assert not at.exception and at.text[1].value.startswith("mode=")


def _dashboard_columns(at: AppTest) -> set[tuple[float, float]]:
    """The x domains the Explorer's dashboard lays its panels out in."""
    spec = figures(at)[0]
    return {tuple(v["domain"]) for k, v in spec["layout"].items() if k.startswith("xaxis")}


def test_the_renderer_builds_a_phone_s_view_with_its_panels_stacked():
    """A phone's dashboard: the simplex across the figure, the other panels in two columns."""
    app = str(Path(__file__).resolve().parents[2] / "app.py")
    wide = AppTest.from_file(app, default_timeout=60)
    wide.session_state[KEY] = {"window": 1280, "height": 720}  # as the page posts it
    wide.run()
    wide_columns = _dashboard_columns(wide)
    assert not wide.exception and len(wide_columns) == 3 and (0, 1) not in wide_columns
    phone = AppTest.from_file(app, default_timeout=60)
    phone.session_state[KEY] = {"window": 360, "height": 840}
    phone.run()
    columns = _dashboard_columns(phone)
    assert not phone.exception and (0, 1) in columns and len(columns - {(0, 1)}) == 2


def _cookie(value) -> str:
    from urllib.parse import quote

    return quote(json.dumps(value))


def test_a_cookie_remembers_the_window_and_the_figure_s_place_it_measured():
    saved = {"window": 1920, "height": 1080, "dark": True, "dark_chosen": False,
             "places": {"elsewhere": [300, 900], "here": [200, 1400]}}
    assert remembered(_cookie(saved), "here") == {"window": 1920, "height": 1080, "dark": True,
                                                  "dark_chosen": False, "top": 200, "width": 1400,
                                                  "place": "here"}
    # Not measured at this place: the window and the theme only, the place not (the figure waits).
    assert remembered(_cookie(saved), "new") == {"window": 1920, "height": 1080, "dark": True,
                                                 "dark_chosen": False, "top": None, "width": None,
                                                 "place": None}


@pytest.mark.parametrize("text", [None, "", "%7B", "not json", _cookie([1, 2]), _cookie("x"), "x" * 5000,
                                  _cookie({"places": {"here": "top"}}), _cookie({"places": [1]}),
                                  _cookie({"window": "wide", "places": {"here": [None, 3]}})])
def test_whatever_a_cookie_holds_reads_as_a_valid_display_or_none(text):
    seen = remembered(text, "here")
    assert seen is None or (seen["place"] is None and read(seen).top is None)


DEEP_COOKIES = ["[" * 4000, "%5B" * 1350, '{"places": ' * 300 + "1" + "}" * 300,
                _cookie({"window": 1920, "places": {"here": [[[[200]]], 1400]}})]
"""Cookies of 4 kB or less whose JSON nests deeper than a viewport's (issue 43: a RecursionError)."""


@pytest.mark.parametrize("text", DEEP_COOKIES)
def test_a_cookie_nested_too_deep_counts_as_none(text):
    assert len(text) <= 4096
    assert remembered(text, "here") is None
