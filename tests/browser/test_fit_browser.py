"""The chart element's fit (``ui/chart_frontend/fit.js``) in headless Chromium, held to Python's.

A small script serves one page's main figure, fitted by the server for a display it guesses (a
1280 x 720 projector, or a 390 x 844 phone), in the chart element; the element fits it again to the
room below its top. The browser's layout (plotly's ``_fullLayout``) must give, within a pixel, the
height, margins, rows of panels and controls that Python's ``presented`` gives from the same
description at that room; and the room must be the window below the figure's top (or under the
header: ``polarize.web.fit.room``). What crowding chooses for the plot's height (``crowding.uncrowded``:
the y axes' ticks thinned, their titles shortened, the notes of short panels hidden, their traces'
inner legends and text off) must be Python's at that room too, not the server's at its guess.
Skipped, with the reason, when Debian's /usr/bin/chromium (or Playwright) is missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.browser import BROWSER, AppServer
from support.figures import page_figure

from polarize.plots import crowding
from polarize.plots.crowding import TICK_KEYS
from polarize.plots.display import Display
from polarize.plots.geometry import LEAST_ROW
from polarize.plots.present_figure import BANDS, presented
from polarize.plots.style import PRESENT_LEAST, PRESENT_SCALE

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

SCRIPT = '''
import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, "tests")
from support.figures import page_figure

from polarize.plots.display import Display
from polarize.web.fit import fit
from polarize.web.view import Plot, View
from ui.charts import chart
from ui.plotly_js import publish

publish(Path(__file__).parent / "static")
phone, present = st.query_params.get("phone") == "1", st.query_params.get("present") == "1"
guess = Display(width=390 if phone else 1280, height=844 if phone else 720, presenting=present)
figure = page_figure(st.query_params.get("page", "explorer"), phone=phone)
st.title("A figure fitted in the browser")
st.container(key="above").caption("Above the figure (a test makes it taller with no rerun).")
chart(fit(View(blocks=(Plot("p", figure),)), guess).blocks[0].figure, key="fitted")
'''

CASES = [(1280, 720, "explorer", False), (1280, 720, "explorer", True), (1280, 720, "normalizers", False),
         (1280, 720, "losses", True), (1280, 720, "sinks", False),
         (1920, 1080, "explorer", False), (1920, 1080, "normalizers", True), (1920, 1080, "losses", False),
         (390, 844, "explorer", False), (390, 844, "normalizers", False), (390, 844, "sinks", False),
         (1280, 560, "explorer", False), (1280, 560, "explorer", True), (1280, 560, "normalizers", True),
         (1280, 560, "losses", False), (1280, 560, "sinks", True)]
"""Each page's figure normal and presented, at the server's guess (1280 x 720, 390 x 844), taller, and in
a window shorter than the guess (where the server's crowding would have left crowded panels)."""

_FITTED = """() => {
  const gd = document.querySelector('.polarize-plot');
  if (!gd || !gd.dataset.room || !gd._fullLayout || gd._fullLayout.height !== gd.layout.height) return null;
  const full = gd._fullLayout;
  const axes = Object.keys(full).filter((key) => /^yaxis\\d*$/.test(key));
  return {room: Number(gd.dataset.room), top: gd.getBoundingClientRect().top, window: window.innerHeight,
          height: full.height, t: full.margin.t, b: full.margin.b,
          domains: Object.fromEntries(axes.map((key) => [key, full[key].domain])),
          updatemenus: full.updatemenus.map((item) => item.y), sliders: full.sliders.map((item) => item.y),
          legend: gd.layout.legend && gd.layout.legend.y !== undefined && full.legend ? full.legend.y : null,
          title: gd.layout.title && gd.layout.title.y !== undefined ? full.title.y : null,
          ticks: Object.fromEntries(axes.map((key) => [key, Object.fromEntries(TICKS.map((name) =>
            [name, gd.layout[key] && gd.layout[key][name] !== undefined ? gd.layout[key][name] : null]))])),
          titles: Object.fromEntries(axes.map((key) => [key, gd.layout[key] && gd.layout[key].title
                                                               ? gd.layout[key].title.text : null])),
          notes: (gd.layout.annotations || []).map((note) => [note.text, note.visible !== false]),
          traces: gd.data.map((trace) => [trace.showlegend === undefined ? null : trace.showlegend,
                                          trace.visible === undefined ? null : trace.visible])};
}""".replace("TICKS", str(list(TICK_KEYS)))

# JavaScript: the block above the figure made ``px`` taller, with no rerun (a block of that height put in it).
GROW_ABOVE_JS = """(px) => {
  const block = document.createElement('div');
  block.style.height = `${px}px`;
  document.querySelector('.st-key-above').appendChild(block);
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    script = tmp_path_factory.mktemp("fit") / "fit_app.py"
    script.write_text(SCRIPT)
    with AppServer(script=script) as running:
        yield running


@pytest.mark.parametrize(("width", "height", "name", "present"), CASES)
def test_the_browsers_fit_is_pythons_from_the_same_description(tabs, server, width, height, name, present):
    """In the module's kept tab for the window (``support.browser.Tabs``, a new visitor's): a new context
    a case cost Chromium a new renderer and plotly.js compiled again, seconds each, for nothing the fit
    reads."""
    page = tabs.fresh(width=width, height=height)
    errors, listener = _listened(page)
    try:
        page.goto(_address(server, name, phone=width < 640, present=present))
        _same_as_pythons(page, name, phone=width < 640, present=present)
        assert errors == []
    finally:  # the tab is kept for the module's next case
        page.remove_listener("console", listener)


def test_a_window_made_shorter_fits_the_figure_again_in_place(browser, server):
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        page, errors = _opened(context, server, "normalizers", phone=False, present=False)
        tall = _same_as_pythons(page, "normalizers", phone=False, present=False)
        page.set_viewport_size({"width": 1280, "height": 720})
        plot = "document.querySelector('.polarize-plot')"
        page.wait_for_function(f"() => Number({plot}.dataset.room) < {tall}")
        assert _same_as_pythons(page, "normalizers", phone=False, present=False) < tall
        draws = page.evaluate(f"() => {plot}.dataset.draws")
        assert draws == "1" and errors == []  # relaid out, not drawn again
    finally:
        context.close()


def test_what_grows_above_a_figure_fits_it_again_in_place(browser, server):
    """A block above the figure grows with no rerun, neither the window nor the figure's box changing (as
    when a figure above is drawn after this one, or a comparison's panel comes in above it): the figure
    is fitted again to the room now below its top, in place. It had kept its first room, and the Loss
    page's legend came down over its panels' titles."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page, errors = _opened(context, server, "losses", phone=False, present=True)
        room = _same_as_pythons(page, "losses", phone=False, present=True)
        page.evaluate(GROW_ABOVE_JS, 60)
        plot = "document.querySelector('.polarize-plot')"
        page.wait_for_function(f"() => Number({plot}.dataset.room) !== {room}", timeout=30_000)
        assert _same_as_pythons(page, "losses", phone=False, present=True) < room - 60
        assert page.evaluate(f"() => {plot}.dataset.draws") == "1" and errors == []
    finally:
        context.close()


def test_a_window_made_taller_shows_again_what_crowding_hid(browser, server):
    """The Explorer's entropy panel is too short for its note and its inner legend in a 560 px window
    (the server, guessing 720, drops them too): at 1080 px the element shows them again, in place."""
    context = browser.new_context(viewport={"width": 1280, "height": 560})
    try:
        page, errors = _opened(context, server, "explorer", phone=False, present=False)
        short = _same_as_pythons(page, "explorer", phone=False, present=False)
        plot = "document.querySelector('.polarize-plot')"
        hidden = f"() => {plot}.layout.annotations.filter((note) => note.visible === false).length"
        legends = f"() => {plot}.data.filter((trace) => trace.showlegend === false).length"
        off = page.evaluate(legends)  # besides the entries the figure keeps out of its legends
        assert page.evaluate(hidden) > 0
        page.set_viewport_size({"width": 1920, "height": 1080})
        page.wait_for_function(f"() => Number({plot}.dataset.room) > {short}")
        _same_as_pythons(page, "explorer", phone=False, present=False)
        assert page.evaluate(hidden) == 0 and page.evaluate(legends) < off
        assert page.evaluate(f"() => {plot}.dataset.draws") == "1" and errors == []
    finally:
        context.close()


def test_the_elements_thinning_and_titles_are_crowdings_on_many_axes(browser):
    """The element's crowding rules (``crowding.js``: ``thin``, ``fitTitle``) run in Chromium on axes drawn
    at random, every kind crowding knows (given values, log decades, a set step, plotly's own ticks,
    reversed and narrow ranges): the same tick settings and titles as ``crowding``'s in Python."""
    source = (Path(__file__).resolve().parents[2] / "ui" / "chart_frontend" / "crowding.js").read_text()
    rules = source[source.index("const TICK_KEYS"):source.index("// The figure as built, before")]
    rng = np.random.default_rng(41)
    axes = [_random_axis(rng) for _ in range(1500)]
    titles = [[text, float(tall)] for text in ("loss (log scale)", "score s<sub>i</sub> (mean)", "entropy",
                                               "a title longer than most panels")
              for tall in rng.uniform(5, 300, 6)]
    constants = {"pitch": crowding.TICK_PITCH, "log": crowding.LOG_TICK_GROWTH, "label": crowding._LABEL_ROOM,
                 "char": crowding._CHAR}
    page = browser.new_page()
    try:
        seen = page.evaluate(f"""([axes, titles, crowd]) => {{ {rules}
          return {{ticks: axes.map(([axis, tall, size]) => {{
                     thin(axis, tall, tickSize(axis, size, crowd) * crowd.pitch, crowd);
                     return Object.fromEntries(TICK_KEYS.map((name) => [name, unset(axis[name])])); }}),
                   titles: titles.map(([text, tall]) => fitTitle(text, tall, 14, crowd))}}; }}""",
                             [axes, titles, constants])
    finally:
        page.close()
    kinds = set()
    for (axis, tall, size), ticks in zip(axes, seen["ticks"], strict=True):
        thinned = dict(axis)
        crowding._thin(thinned, tall, crowding._tick_size(thinned, size) * crowding.TICK_PITCH)
        assert ticks == {name: thinned.get(name) for name in TICK_KEYS}, axis  # the same float arithmetic
        kinds.add(tuple(name for name in TICK_KEYS if thinned.get(name) != axis.get(name)))
    assert len(kinds) >= 5  # every branch of the rule taken
    for (text, tall), title in zip(titles, seen["titles"], strict=True):
        axes_ = {"yaxis": {"domain": [0, 1], "title": {"text": text}}}
        crowding._fit_y_titles(axes_, 14, tall)
        assert title == axes_["yaxis"]["title"]["text"], (text, tall)
    assert set(seen["titles"]) >= {"loss", ""}  # shortened and dropped


def _random_axis(rng) -> list:
    """A y axis as a builder may make it, the pixels of its panel and the figure's font size."""
    axis: dict = {}
    low = float(rng.uniform(-5, 5))
    high = low + float(rng.choice([0.01, 0.3, 1, 2.5, 7, 40, 300]) * rng.uniform(0.05, 1))
    if rng.random() < 0.2:
        count = int(rng.integers(2, 16))
        axis["tickvals"] = [0.5 * i for i in range(count)]
        if rng.random() < 0.5:
            axis["ticktext"] = [str(i) for i in range(count)]
    else:
        axis["range"] = [low, high] if rng.random() < 0.8 else [high, low]
        if rng.random() < 0.3:
            axis.update(type="log", exponentformat=str(rng.choice(["power", "e"])))
        step = rng.random()
        if step < 0.25:
            axis["dtick"] = float(rng.choice([1, 2, 0.5, 0.1, 5, 25]))
        elif step < 0.3:
            axis["dtick"] = "L2"
        if rng.random() < 0.3:
            axis["nticks"] = int(rng.integers(2, 10))
    if rng.random() < 0.5:
        axis["tickfont"] = {"size": float(rng.choice([10, 12, 18.5, 22]))}
    return [axis, float(rng.uniform(20, 500)), float(rng.choice([12, 16, 20]))]


def _listened(page) -> tuple[list[str], Any]:
    """The console's errors on ``page`` as they come, and the listener that collects them."""
    errors: list[str] = []

    def listener(message) -> None:
        if message.type == "error":
            errors.append(message.text)

    page.on("console", listener)
    return errors, listener


def _address(server, name: str, *, phone: bool, present: bool) -> str:
    return f"{server.url}/?page={name}&phone={int(phone)}&present={int(present)}"


def _opened(context, server, name: str, *, phone: bool, present: bool):
    """A new tab of the script's page, and the console's errors in it as they come."""
    page = context.new_page()
    errors, _ = _listened(page)
    page.goto(_address(server, name, phone=phone, present=present))
    return page, errors


def _same_as_pythons(page, name: str, *, phone: bool, present: bool) -> float:
    """Check the browser's fitted figure against Python's from the same description at its room; the room."""
    seen = page.wait_for_function(_FITTED, timeout=120_000).json_value()
    # The room: the window below the figure's top less 16 px, or under Streamlit's 60 px header.
    below = seen["window"] - seen["top"] - 16
    assert seen["room"] == pytest.approx(seen["window"] - 76 if phone or below < seen["window"] / 2
                                         else below, abs=0.5)
    guess = Display(width=390 if phone else 1280, height=844 if phone else 720, presenting=present)
    made = presented(page_figure(name, phone=phone), height=seen["room"], width=guess.column_width,
                     scale=PRESENT_SCALE if present else 1.0, least_row=LEAST_ROW if phone else 0,
                     least_font=PRESENT_LEAST if present else 0, even_logs=present)
    python, traces = made["layout"], made["data"]
    assert seen["height"] == pytest.approx(python["height"], abs=1)
    assert (seen["t"], seen["b"]) == pytest.approx((python["margin"]["t"], python["margin"]["b"]), abs=1)
    plot = python["height"] - python["margin"]["t"] - python["margin"]["b"]
    px = lambda ys: [y * plot for y in ys]  # noqa: E731
    assert seen["domains"].keys() == {key for key in python if key.startswith("yaxis")}
    for key, domain in seen["domains"].items():
        assert px(domain) == pytest.approx(px(python[key].get("domain", [0, 1])), abs=1), key
    for key in ("updatemenus", "sliders"):
        assert px(seen[key]) == pytest.approx(px([item["y"] for item in python.get(key, [])]), abs=1), key
    if seen["legend"] is not None:
        assert seen["legend"] * plot == pytest.approx(python["legend"]["y"] * plot, abs=1)
    if seen["title"] is not None:
        tall = python["height"]
        assert seen["title"] * tall == pytest.approx(python["title"]["y"] * tall, abs=1)
    _crowded_as_pythons(seen, python, traces)
    return seen["room"]


def _crowded_as_pythons(seen: dict, python: dict, traces: list[dict]) -> None:
    """What the element's crowding chose at its room is what Python's chose at it: the y axes' tick
    settings and titles, which notes are hidden (Python drops them), the traces' legends and visibility."""
    for key, ticks in seen["ticks"].items():
        assert ticks == {name: python[key].get(name) for name in TICK_KEYS}, key
        assert seen["titles"][key] == (python[key].get("title") or {}).get("text"), key
    dropped = [note["text"] for _, note in python["meta"][BANDS]["crowd"]["notes"]]
    assert [text for text, shown in seen["notes"] if not shown] == dropped
    kept = [note["text"] for note in python["annotations"]]
    assert [text for text, shown in seen["notes"] if shown] == kept
    assert seen["traces"] == [[trace.get("showlegend"), trace.get("visible")] for trace in traces]
