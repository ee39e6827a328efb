"""A page's controls in ``AppTest``: read as the browser is told them, set as the browser sets them.

The sidebar's controls are one element (``ui.controls``); ``AppTest`` runs no browser, so
``control(at, key=...)`` reads one control from what the element was given (its value, options and
whether it is enabled) and ``set_value(...).run()`` / ``press(at, key)`` send what the element sends
after a change or a press (its trigger ``set`` or ``press``), through Streamlit's own widget state:
the element's callbacks run before the rerun, as in a browser.
"""

from __future__ import annotations

import json
from typing import Any

from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

from polarize.web import pages
from polarize.web.controls import ControlKind
from ui import controls as ui_controls

__all__ = ["Control", "control", "press", "send"]

def _element(at: AppTest) -> Any:
    """The page's controls element as ``at`` last drew it."""
    found = [e for e in at.get("bidi_component") if e.proto.component_name == ui_controls.NAME]
    assert len(found) == 1, f"{len(found)} controls elements drawn"
    return found[0]


def _data(at: AppTest) -> dict[str, Any]:
    return json.loads(_element(at).proto.json)


def send(at: AppTest, event: str, value: Any, timeout: float | None = None) -> AppTest:
    """Run ``at`` with the element's trigger ``event`` carrying ``value``, as a browser sends it."""
    element = _element(at)
    states = at._tree.get_widget_states()
    # Streamlit's name of the element's one trigger widget (its "events", which carry every trigger).
    trigger = WidgetState(id=_make_trigger_id(element.proto.id, "events"),
                          json_trigger_value=json.dumps([{"event": event, "value": value}]))
    states.widgets.append(trigger)
    return at._run(states, timeout=timeout)


class Control:
    """One control of the page ``at`` drew, keyed ``key`` as its session key (``<page>_<control>``)."""

    def __init__(self, at: AppTest, key: str) -> None:
        data = _data(at)
        page = data["page"]
        assert key.startswith(f"{page}_"), f"{key!r} is no control of page {page!r}"
        self.at, self.key, self.name = at, key, key[len(page) + 1:]
        self.spec = pages.by_name(page)
        described = [c for c in data["controls"] if c["key"] == self.name]
        assert described, f"page {page!r} draws no control {self.name!r}"
        self.described = described[0]
        self._sent: Any = None

    @property
    def value(self) -> Any:
        """The control's value, as the session holds it (a multiselect's as a list)."""
        return self.at.session_state[self.key]

    @property
    def disabled(self) -> bool:
        return not self.described["enabled"]

    @property
    def options(self) -> list[str]:
        """The names of the control's options, as shown."""
        return list(self.described["names"])

    @property
    def help(self) -> str:
        return self.described["help"]

    @property
    def caption(self) -> str:
        return self.described["caption"]

    def set_value(self, value: Any) -> Control:
        """Choose ``value`` (an option, a number, a list of options), as the browser says it; ``run`` next."""
        assert not self.disabled, f"{self.key} is disabled: a visitor cannot change it"
        control = self.spec.control(self.name)
        options = list(control.options)
        if control.kind is ControlKind.MULTISELECT:
            self._sent = [options.index(v) for v in value]
        elif control.kind.numeric:
            self._sent = value
        else:
            self._sent = options.index(value)
        return self

    def run(self, *, timeout: float | None = None) -> AppTest:
        """Run the app with the value set (``set_value``) sent."""
        return send(self.at, "set", {"key": self.name, "value": self._sent}, timeout)


def control(at: AppTest, *, key: str) -> Control:
    """The control of ``at``'s page whose session key is ``key`` (``ui.state.widget_key``)."""
    return Control(at, key)


def press(at: AppTest, key: str) -> AppTest:
    """Press the controls' button keyed ``key`` (``ui.starts.button``) and run the app."""
    buttons = [c["button"]["key"] for c in _data(at)["controls"] if "button" in c]
    assert key in buttons, f"no button {key!r} among {buttons}"
    return send(at, "press", key)
