"""Transport controls: the buttons every animated figure carries, the script's key map, and the sidebar's
"Reset to preset", "New random start" and "Keep playing after a change" (headless, through AppTest).

The keys and the step buttons working in a browser: tests/browser/test_transport_browser.py.
"""

from __future__ import annotations

import json
import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest
from support.app import chart_payloads, held_figures, open_page
from support.app import figures as drawn
from support.controls import control, press
from support.figures import dashboard_figure

from polarize import Experiment, simulate
from polarize.plots import Panel, token_lines
from polarize.plots.animation import SPEEDS, STEP_BACK, STEP_FORWARD, animation_controls
from polarize.plots.geometry import CONTROLS_MARGIN, SLIDER_TOP, TRANSPORT_TOP
from polarize.plots.multiples import animated_grid
from polarize.web import transport
from polarize.web.pages.explorer import preset_values
from ui import charts

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = (ROOT / "polarize" / "web" / "transport.js").read_text()


@pytest.fixture(scope="module")
def figures():
    result = simulate(Experiment(n=4, d=4, horizon=1e3))
    panels = [Panel(title="scores", lines=token_lines(result.t, result.s))]
    return {"dashboard": dashboard_figure(result, frames=20),
            "grid": go.Figure(animated_grid(panels, cols=1, frames=20))}


@pytest.mark.parametrize("name", ["dashboard", "grid"])
def test_every_animated_figure_has_the_transport_buttons(figures, name):
    fig = figures[name]
    transport, speeds = fig.layout.updatemenus
    buttons = {b.name: b for b in transport.buttons}
    assert list(buttons) == ["play", "pause", "reset", STEP_BACK, STEP_FORWARD]
    first = fig.frames[0].name
    assert buttons["reset"].method == "animate" and list(buttons["reset"].args[0]) == [first]
    assert list(buttons["pause"].args[0]) == [None] and buttons["play"].args[0] is None
    assert buttons["play"].args[1]["fromcurrent"] is True
    # Plotly cannot step from the current frame: the step buttons do nothing by themselves
    # and are handled by the script, by these names.
    assert buttons[STEP_BACK].method == buttons[STEP_FORWARD].method == "skip"
    assert [b.args[1]["frame"]["duration"] for b in speeds.buttons] == list(SPEEDS.values())
    assert speeds.showactive and speeds.active == 1
    (slider,) = fig.layout.sliders
    assert [s.args[0][0] for s in slider.steps] == [f.name for f in fig.frames]
    assert slider.currentvalue.font.size > fig.layout.font.size  # the counter is the largest type
    assert transport.font.size > fig.layout.font.size
    assert fig.layout.margin.b >= CONTROLS_MARGIN


@pytest.mark.parametrize("plot_height", [300, 516, 900])
def test_the_controls_keep_their_pixel_bands_below_any_plot(plot_height):
    controls = animation_controls(["0", "1"], ["1", "2"], plot_height=plot_height)
    transport, speeds = controls["updatemenus"]
    (slider,) = controls["sliders"]
    px = [-round(item["y"] * plot_height) for item in (transport, speeds, slider)]
    assert px == [TRANSPORT_TOP, SLIDER_TOP, SLIDER_TOP]
    # Counter on the left, speeds on the right of the same band; the buttons alone above them.
    assert slider["currentvalue"]["xanchor"] == "left" and speeds["xanchor"] == "right"
    assert TRANSPORT_TOP + 40 <= SLIDER_TOP < CONTROLS_MARGIN - 50


def _maps(script: str) -> tuple[dict, dict]:
    """The key map and the button map of a script's text."""
    keys = json.loads(re.search(r"const KEYS = (\{.*\});", script).group(1))
    buttons = json.loads(re.search(r"const BUTTONS = (\{.*\});", script).group(1))
    return keys, buttons


def test_the_script_maps_the_keys_and_the_step_buttons():
    assert transport.script() == SCRIPT  # the package's copy is the file (the one script)
    keys, buttons = _maps(SCRIPT)
    assert keys == {"Space": "toggle", "ArrowLeft": "back", "ArrowRight": "forward", "Home": "reset"}
    assert buttons == {STEP_BACK: "back", STEP_FORWARD: "forward"}
    actions = re.search(r"const ACTIONS = \{(.*?)\n  \};", SCRIPT, re.S).group(1)
    assert set(re.findall(r"^\s+(\w+):", actions, re.M)) == set(keys.values())


# ---- the sidebar, through the app -------------------------------------------------------------------


@pytest.fixture
def app(monkeypatch):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _script_settings(at: AppTest) -> dict:
    """The settings the page's transport element (``ui.charts.transport``) installs the script with."""
    (element,) = [e for e in at.sidebar.get("bidi_component") if e.proto.id.endswith("transport")]
    assert element.proto.component_name == charts.NAME  # the chart's component, whose module starts with it
    assert at.get("iframe") == [] and at.sidebar.get("iframe") == []  # no document of its own (issue 41)
    return json.loads(element.proto.bytes)["transport"]


def test_the_chart_element_s_module_starts_with_the_one_transport_script(app):
    """The app's figures and the offline HTML play with one script: the chart element's module (as the
    page is given it) is that script, then the chart's own code, which installs it when called so."""
    (element,) = [e for e in app.sidebar.get("bidi_component") if e.proto.id.endswith("transport")]
    module = element.proto.js_content
    assert module.startswith(SCRIPT)
    assert "installTransport(head.transport)" in module[len(SCRIPT):]


def test_reset_to_preset_and_a_new_random_start(app):
    at = app
    default = preset_values()
    control(at, key="explorer_n").set_value(5).run()
    control(at, key="explorer_seed").set_value(7).run()
    assert control(at, key="explorer_n").value == 5 and control(at, key="explorer_seed").value == 7
    press(at, "explorer__reset")
    assert not at.exception
    assert control(at, key="explorer_n").value == default["n"]
    assert control(at, key="explorer_seed").value == default["seed"]
    before = drawn(at)[0]["data"]
    press(at, "explorer__reseed")
    seed = control(at, key="explorer_seed").value
    assert seed != default["seed"] and 0 <= seed < 100_000
    assert control(at, key="explorer_n").value == default["n"]  # the rest kept
    assert at.query_params["seed"] == str(seed)  # and in the link
    after = drawn(at)[0]["data"]
    assert len(after) == len(before) and after != before  # new draws, a new run


def test_a_first_visit_makes_nothing_ahead_and_its_next_run_does(app):
    """A first visit's run neither makes the next start ahead nor holds its figure in the browser (most
    first visits never press it: it cost the server about 0.1 CPU-s of each); the page's next run does
    both (``ui.starts.SHOWN``, issue 41)."""
    from ui import starts

    at = app
    starts.made_ahead(timeout=120)
    assert starts.NEXT.format(page="explorer") not in at.session_state
    assert held_figures(at) == {}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert starts.NEXT.format(page="explorer") in at.session_state
    assert list(held_figures(at)) == ["explorer_dashboard"]


def test_a_new_random_start_is_made_before_the_press(app, monkeypatch):
    """The next start's seed is drawn when the page shows (from its second run) and its view made while
    the reader looks: the press's script run shows it without running or building anything (issue 41)."""
    import threading

    from polarize.web.page import PageSpec
    from polarize.web.pages import by_name
    from ui import renderer, starts

    at, spec = app.run(), by_name("explorer")  # a first visit's run makes nothing ahead
    starts.made_ahead(timeout=120)
    upcoming = at.session_state[starts.NEXT.format(page="explorer")]
    values = {key: at.session_state[f"explorer_{key}"] for key in spec.keys}
    assert upcoming != values["seed"]
    job = spec.make_job(spec.settle({**values, "seed": upcoming}))
    assert renderer.VIEWS.peek(("explorer", job, False)) is not None

    made, show = [], PageSpec.show
    monkeypatch.setattr(PageSpec, "show", lambda self, *args: (made.append(threading.current_thread().name),
                                                             show(self, *args))[1])
    press(at, "explorer__reseed")
    assert not at.exception
    assert control(at, key="explorer_seed").value == upcoming
    assert at.query_params["seed"] == str(upcoming)  # in the link
    assert [name for name in made if not name.startswith("polarize-ahead")] == []  # the press made nothing
    # ...and the start after it is drawn anew, other than this one.
    assert at.session_state[starts.NEXT.format(page="explorer")] != upcoming


@pytest.mark.parametrize("link", [{}, {"normalizer": "sparsemax", "loss": "square", "n": "5"}],
                         ids=["default", "sparsemax-square"])
def test_the_figure_held_for_the_next_start_is_the_one_its_press_sends(link):
    """The browser draws the next start's figure at the press, from the bytes the page held for it
    (``ui.charts.hold``): they are the very bytes (the same revision) the press's run then gives the
    chart, which so draws nothing more; held after the figure shown, for the button's press (issue 41)."""
    from ui import charts, starts

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    for key, value in link.items():
        at.query_params[key] = value
    at.run().run()  # a first visit's run holds nothing (ui.starts.SHOWN): the page's next run does
    assert not at.exception, [e.value for e in at.exception]
    ((key, (head, data)),) = held_figures(at).items()  # the main figure's, only
    shown = chart_payloads(at)
    assert head == {"next": key, "after": charts.revision(shown[key]), "button": "explorer__reseed"}
    assert data != shown[key]
    upcoming = at.session_state[starts.NEXT.format(page="explorer")]
    press(at, "explorer__reseed")
    assert not at.exception, [e.value for e in at.exception]
    assert control(at, key="explorer_seed").value == upcoming
    assert {k: str(at.session_state[f"explorer_{k}"]) for k in link} == link  # the setting kept
    assert chart_payloads(at)[key] == data  # byte for byte
    # ...and the start after it held in turn, after the figure now shown.
    assert held_figures(at)[key][0]["after"] == charts.revision(data)


def test_keep_playing_tells_the_script_to_play_after_each_rerun(app):
    at = app
    assert _script_settings(at)["autoplay"] is False
    at.toggle(key="transport_keep_playing").set_value(True).run()
    first = _script_settings(at)
    control(at, key="explorer_n").set_value(5).run()
    second = _script_settings(at)
    assert first["autoplay"] and second["autoplay"]
    assert second["run"] != first["run"]  # the element is called again and plays the new figure
    # One setting for every animated page: the Rates page (no toggle drawn by itself yet) keeps it.
    open_page(at, "rates").run()
    assert not at.exception and at.toggle(key="transport_keep_playing").value is True


def test_the_offline_page_keeps_the_step_buttons_and_carries_the_script_once(figures):
    from polarize.web.export import dashboard_html

    page = dashboard_html(figures["dashboard"])
    assert page.count(SCRIPT) == 1  # the app's own script, once, whole
    assert page.count('id="transport-config"') == 1
    settings = json.loads(re.search(r'id="transport-config" type="application/json">(.*?)</script>',
                                    page).group(1))
    assert settings == {"autoplay": False}  # not playing
    # After the figure's own script (which draws the chart), before the end of the body.
    assert page.index("Plotly.newPlot") < page.index(SCRIPT) < page.rindex("</body>")
    # The step buttons are kept, with the names the script's button map reads.
    keys, buttons = _maps(page[page.index(SCRIPT):])
    assert keys == _maps(SCRIPT)[0] and set(buttons) == {STEP_BACK, STEP_FORWARD}
    names = [b["name"] for b in _layout(page)["updatemenus"][0]["buttons"]]
    assert names == ["play", "pause", "reset", STEP_BACK, STEP_FORWARD]


def test_the_wheel_carries_the_script():
    # The app and the offline page read it from the installed package (the Docker image installs
    # the wheel and keeps no source folder of polarize).
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert any(fnmatch("transport.js", pattern) for pattern in data["polarize.web"])


def _layout(page: str) -> dict:
    """The layout the offline page hands to plotly (the JSON object after the traces)."""
    decoder = json.JSONDecoder()
    text = page[page.index("Plotly.newPlot("):]
    _, end = decoder.raw_decode(text, text.index("["))
    return decoder.raw_decode(text, text.index("{", end))[0]


def test_the_spinner_says_which_run_is_made():
    from polarize.web.pages import by_name
    from polarize.web.pages.explorer import EXPLORER

    values = preset_values() | {"method": "gd", "n": 5, "horizon": 1e6, "loss": "kl"}
    assert EXPLORER.running(values) == ("Simulating gradient descent of 5 tokens to t = 1e6 "
                                        "(cross-entropy (KL) loss, softmax)...")
    assert by_name("rates").running({}) == by_name("rates").spinner  # a page's plain words stay as they are
