"""Every control's widget carries its value twice: in the session and as the widget's own default.

A widget whose first draw reaches the browser only after the next run has begun (a busy machine, a
tab in the background, the page rerun to fit the window) is drawn from that run's message, which
holds its default and not the session's value; it then sends that default back as if chosen. With
Streamlit's defaults a multiselect came up empty ("Condition numbers: choose at least one") and a
slider at its minimum. The default is the value (``ui.sidebar``), so a late draw shows the truth.
"""

from __future__ import annotations

import pytest
from support.app import page

from polarize.web.pages import PAGES

WITH_CONTROLS = [spec.name for spec in PAGES if spec.controls]


def _defaults(at) -> dict[str, object]:
    """Each sidebar widget's value as its default (in the browser's message) says it, by key."""
    side = at.sidebar
    out = {}
    for w in side.multiselect:
        out[w.key] = sorted(w.proto.options[i] for i in w.proto.default)
    for w in (*side.selectbox, *side.radio):
        out[w.key] = w.proto.options[w.proto.default]
    for w in side.slider:
        out[w.key] = list(w.proto.default)
    for w in side.number_input:
        out[w.key] = w.proto.default
    for w in side.select_slider:
        out[w.key] = [w.proto.options[int(i)] for i in w.proto.default]
    return out


def _values(at) -> dict[str, object]:
    """Each sidebar widget's value now, in the same terms."""
    side = at.sidebar
    out = {}
    for w in side.multiselect:
        out[w.key] = sorted(w.proto.options[i] for i in w.indices)
    for w in (*side.selectbox, *side.radio):
        out[w.key] = w.proto.options[w.index]
    for w in side.slider:
        out[w.key] = [float(w.value)]
    for w in side.number_input:
        out[w.key] = float(w.value)
    for w in side.select_slider:
        out[w.key] = [w.format_func(w.value)]
    return out


@pytest.mark.parametrize("name", WITH_CONTROLS)
def test_each_widget_s_default_is_its_value(name):
    at = page(name)
    at.run()
    assert not at.exception
    values = _values(at)
    assert values, f"{name}: no widget found"
    assert _defaults(at) == values


def test_a_changed_control_and_a_loaded_preset_move_the_defaults_too():
    at = page("explorer")
    at.run()
    at.sidebar.slider(key="explorer_n").set_value(5).run()
    assert _values(at)["explorer_n"] == [5.0] and _defaults(at) == _values(at)
    preset = at.sidebar.selectbox(key="explorer_preset")
    other = next(option for option in preset.options if option != preset.value)
    preset.set_value(other).run()
    assert not at.exception and _defaults(at) == _values(at)
