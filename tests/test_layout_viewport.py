"""The viewport component's value plumbing (ui/viewport.py), headless under AppTest.

AppTest runs no JavaScript: the page's post is played by setting the component's widget
value, as the browser would. The browser half (a 390 px window is narrow) is in
test_layout_browser.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.viewport import HEIGHT_STEP, KEY, NARROW_BELOW, Viewport

UNMEASURED = {"narrow": False, "height": None, "dark": False, "dark_chosen": False, "top": None,
              "width": None}
"""What Python assumes of a window that has reported nothing (or whose height it did not ask)."""

def _script() -> None:
    import streamlit as st

    from ui.viewport import viewport

    seen = viewport(measure_height=st.session_state.get("measure", False))
    st.text(f"narrow={seen.narrow} height={seen.height}")


def _run(posted=None, measure: bool = False) -> AppTest:
    at = AppTest.from_function(_script, default_timeout=30)
    at.session_state["measure"] = measure
    if posted is not None:
        at.session_state[KEY] = posted
    return at.run()


def _args(at: AppTest) -> dict:
    (component,) = at.get("component_instance")
    return json.loads(component.proto.json_args)


def test_a_desktop_visitor_is_assumed_wide_and_no_height_is_asked():
    at = _run()
    assert not at.exception
    assert at.text[0].value == "narrow=False height=None"
    args = _args(at)
    assert args["assumed"] == UNMEASURED
    assert args["measure_height"] is False
    assert args["narrow_below"] == NARROW_BELOW and args["step"] == HEIGHT_STEP


def test_a_posted_narrow_window_becomes_python_s_assumption():
    at = _run({"narrow": True, "height": None})
    assert at.text[0].value == "narrow=True height=None"
    # The page is told what Python now assumes, so it posts nothing more until the truth changes.
    assert _args(at)["assumed"] == UNMEASURED | {"narrow": True}


def test_height_is_reported_only_when_measured():
    posted = {"narrow": False, "height": 680}
    measured = _run(posted, measure=True)
    assert measured.text[0].value == "narrow=False height=680"
    assert _args(measured)["assumed"]["height"] == 680 and _args(measured)["measure_height"] is True
    unmeasured = _run(posted, measure=False)
    assert unmeasured.text[0].value == "narrow=False height=None"
    assert _args(unmeasured)["assumed"] == UNMEASURED


def test_the_main_figure_s_place_is_read_with_the_height_only():
    posted = {"narrow": False, "height": 680, "top": 240, "width": 760}
    seen = Viewport.from_browser(posted)
    assert (seen.top, seen.width) == (240, 760)
    assert _args(_run(posted, measure=True))["assumed"]["top"] == 240
    unmeasured = _run(posted, measure=False)
    assert _args(unmeasured)["assumed"]["top"] is None and _args(unmeasured)["assumed"]["width"] is None
    # Without a height (or with a place that is not a length) no place is read either.
    assert Viewport.from_browser({"top": 240, "width": 760}).top is None
    assert Viewport.from_browser({"height": 680, "top": "240", "width": -1}) == Viewport(height=680)


@pytest.mark.parametrize("posted", ["narrow", 3, ["x"], {"narrow": "yes", "height": "680"},
                                    {"narrow": 1, "height": -40}, {"height": True}, {"height": 10**9}])
def test_whatever_a_page_posts_reads_as_a_valid_size_class(posted):
    seen = Viewport.from_browser(posted)
    assert seen.narrow is False and seen.height is None
    at = _run(posted, measure=True)
    assert not at.exception and at.text[0].value == "narrow=False height=None"


def _dashboard_columns(at: AppTest) -> set[tuple[float, float]]:
    """The x domains the Explorer's dashboard lays its panels out in."""
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    return {tuple(v["domain"]) for k, v in spec["layout"].items() if k.startswith("xaxis")}


def test_the_renderer_builds_a_phone_s_view_with_its_panels_stacked():
    """A phone's dashboard: the simplex across the figure, the other panels in two columns."""
    app = str(Path(__file__).resolve().parent.parent / "app.py")
    wide = AppTest.from_file(app, default_timeout=60).run()
    wide_columns = _dashboard_columns(wide)
    assert not wide.exception and len(wide_columns) == 3 and (0, 1) not in wide_columns
    phone = AppTest.from_file(app, default_timeout=60)
    phone.session_state[KEY] = {"narrow": True, "height": None}  # as the page posts it
    phone.run()
    columns = _dashboard_columns(phone)
    assert not phone.exception and (0, 1) in columns and len(columns - {(0, 1)}) == 2
