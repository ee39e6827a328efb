"""The sidebar's controls element (``ui.controls``): what the browser is told, and what it may say back.

The browser is told each control's value as the session holds it (an option by its index), whether
it is enabled (the page's rules), its help (with why it is off) and caption; it says back a change
(``set``) or a press (``press``). What it says is checked against the control, so a value no input
could give (out of range, a wrong type, an index past the options, too many items, an unknown
control or button) changes nothing and never fails the page.
"""

from __future__ import annotations

import pytest
from support.app import page
from support.controls import control, press, send

from polarize.web import pages
from polarize.web.controls import ControlKind
from polarize.web.pages import PAGES
from ui.state import widget_key

WITH_CONTROLS = [spec.name for spec in PAGES if spec.controls]


def _told(at, spec) -> dict[str, object]:
    """What the element was told of each control's value, as the control's value (by its options)."""
    out = {}
    for c in spec.controls:
        described = control(at, key=widget_key(spec, c.key)).described
        options = list(c.options)
        if c.kind is ControlKind.MULTISELECT:
            out[c.key] = tuple(sorted(options[i] for i in described["value"]))
        elif c.kind.numeric:
            out[c.key] = described["value"]
        else:
            out[c.key] = options[described["value"]]
    return out


def _session(at, spec) -> dict[str, object]:
    state = {key: at.session_state[widget_key(spec, key)] for key in spec.keys}
    return {k: tuple(sorted(v)) if isinstance(v, list) else v for k, v in state.items()}


@pytest.mark.parametrize("name", WITH_CONTROLS)
def test_the_browser_is_told_each_controls_session_value_rules_and_help(name):
    at = page(name).run()
    assert not at.exception
    spec = pages.by_name(name)
    assert _told(at, spec) == _session(at, spec)
    values = spec.settle(_session(at, spec))
    for c in spec.controls:
        shown = control(at, key=widget_key(spec, c.key))
        assert shown.disabled == (not c.enabled(values)), c.key
        assert shown.help == c.help + ("" if c.enabled(values) else c.off_help), c.key


def test_a_changed_control_and_a_loaded_preset_are_what_the_browser_is_told():
    at = page("explorer").run()
    spec = pages.by_name("explorer")
    control(at, key="explorer_n").set_value(5).run()
    assert at.session_state["explorer_n"] == 5 and _told(at, spec) == _session(at, spec)
    preset = control(at, key="explorer_preset")
    other = next(p for p in spec.control("preset").options if p != preset.value)
    preset.set_value(other).run()
    assert not at.exception and at.session_state["explorer_preset"] == other
    assert _told(at, spec) == _session(at, spec) == dict(spec.defaults(other))
    assert control(at, key="explorer_preset").caption  # the preset's description, under it


@pytest.mark.parametrize("said", [
    {"key": "n", "value": 1000},          # past the slider's end
    {"key": "n", "value": 2.5},           # not a whole number
    {"key": "n", "value": "3"},           # a number as text
    {"key": "n", "value": True},          # a boolean
    {"key": "loss", "value": 99},         # past the options
    {"key": "loss", "value": -1},
    {"key": "loss", "value": "square"},   # an option by name, not index
    {"key": "temperature", "value": float("nan")},
    {"key": "lr", "value": 0.5},          # a disabled control (the exact flow has no step size)
    {"key": "nonesuch", "value": 1},      # no such control
    {"key": "n"},                         # no value
    "n=3",                                # not a change at all
])
def test_what_no_input_could_say_changes_nothing(said):
    at = page("explorer").run()
    spec = pages.by_name("explorer")
    before = _session(at, spec)
    send(at, "set", said)
    assert not at.exception and not at.error
    assert _session(at, spec) == before


def test_a_multiselect_takes_at_most_its_most_and_a_press_only_its_pages_buttons():
    at = page("tied").run()
    spec = pages.by_name("tied")
    before = _session(at, spec)
    send(at, "set", {"key": "sizes", "value": [0, 1, 2, 3, 4, 5]})  # six of seven sizes: one past its most
    assert spec.control("sizes").most == 5 and _session(at, spec) == before
    send(at, "set", {"key": "sizes", "value": [0, 0, 1]})  # the same size twice: taken once
    assert at.session_state["tied_sizes"] == [2, 5]
    at = page("explorer").run()
    spec, seed = pages.by_name("explorer"), at.session_state["explorer_seed"]
    for pressed in ("tied__reseed", "<script>alert(1)</script>", 3):
        send(at, "press", pressed)
        assert not at.exception and at.session_state["explorer_seed"] == seed
    press(at, "explorer__reseed")
    assert at.session_state["explorer_seed"] != seed


def test_presented_the_controls_have_no_help_and_no_captions():
    at = page("explorer")
    at.query_params["present"] = "true"
    at.run()
    spec = pages.by_name("explorer")
    for c in spec.controls:
        shown = control(at, key=widget_key(spec, c.key))
        assert shown.help == "" and shown.caption == "", c.key
