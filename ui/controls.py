"""The sidebar's controls: one element of native inputs for all of a page's controls.

Each Streamlit widget is a React component of its own, styled at run time: the Explorer's 17 of them
cost a first visit about half a second of the browser's main thread (measured by leaving them out),
where its one figure costs 0.7 s. This element (a Streamlit component v2, no iframe: its browser
side is ``controls_frontend/``) draws the same controls as the browser's own inputs, each under its
label: a slider as a range, a number as a number box, a select as a ``<select>``, radios and a
multiselect as a group of boxes, a select slider as a range over its options; help as a disclosure
beside the label; a control's caption under it; the preset's and the seed's buttons under theirs.

A change comes back as the element's trigger ``set`` (the control's key and its value, an option by
its index) and a button's press as ``press``. Their callbacks run before the rerun, as a widget's
did: the value is checked here against the control (a value no input could give is dropped) and
written into the control's session key (``ui.state.widget_key``), and ``ui.state.changed`` applies the
page's rules, so the rest of the app reads the controls as it always has.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.components.v2 import component

from polarize.web.controls import Control, ControlKind
from polarize.web.page import PageSpec
from ui import starts
from ui.state import changed, current_values, load_preset, settle, widget_key

__all__ = ["NAME", "controls", "describe", "element_key"]

NAME = "polarize_controls"
"""The component's name."""
CONTAINER = "controls"
"""The key of the sidebar's container of the element (its class ``st-key-controls``)."""

_FRONTEND = Path(__file__).parent / "controls_frontend"
# The style sheet travels in the module (a component's ``css`` is not applied outside a shadow root).
_ELEMENT = component(NAME, isolate_styles=False, js="const CSS = {};\n{}".format(
    json.dumps((_FRONTEND / "controls.css").read_text(encoding="utf-8")),
    (_FRONTEND / "controls.js").read_text(encoding="utf-8")))


def element_key(spec: PageSpec) -> str:
    """The key of the page's controls element."""
    return f"controls_{spec.name}"


def controls(spec: PageSpec, values: dict[str, Any], *, presenting: bool = False) -> None:
    """Draw the page's controls in the sidebar, showing the session's values.

    Parameters
    ----------
    values : dict
        The page's values now, settled: what decides which controls are enabled.
    presenting : bool
        Presentation mode: no help and no captions.
    """
    described = [describe(spec, c, values, presenting=presenting) for c in spec.controls]
    data = {"page": spec.name, "controls": described}
    with st.sidebar, st.container(key=CONTAINER):
        _ELEMENT(key=element_key(spec), data=data, on_set_change=functools.partial(_set, spec),
                 on_press_change=functools.partial(_press, spec))


def describe(spec: PageSpec, control: Control, values: dict[str, Any], *,
             presenting: bool = False) -> dict[str, Any]:
    """What the browser is told of one control: its input, its value now (an option by its index), its
    label, help and caption, whether it is enabled, and the button under it."""
    c, now = control, st.session_state[widget_key(spec, control.key)]
    enabled = c.enabled(values)
    out: dict[str, Any] = {"key": c.key, "kind": str(c.kind), "label": c.label, "enabled": enabled,
                           "group": c.group, "half": c.half,
                           "help": "" if presenting else c.help + ("" if enabled else c.off_help),
                           "caption": c.caption(now) if c.caption and not presenting else ""}
    if not c.kind.numeric:
        options = list(c.options)
        out["names"] = [c.name(o) for o in options]
        if c.kind is ControlKind.MULTISELECT:
            out["value"] = [options.index(o) for o in now if o in options]
            out["most"] = c.most
        else:
            out["value"] = options.index(now) if now in options else 0
    else:
        cast: Callable[[Any], Any] = int if c.integer else float
        out.update(low=cast(c.low), high=cast(c.high), value=cast(now),
                   step=int(c.step or 1) if c.integer else c.step)
    button = starts.button(spec, c.key)
    if button is not None:
        out["button"] = button
    return out


def _set(spec: PageSpec) -> None:
    """Callback of the trigger ``set``: the control's new value into its session key, then the page's
    rules (``ui.state.changed``); a value no input of the control could give (a disabled one gives
    none) changes nothing."""
    said = st.session_state[element_key(spec)]["set"]
    if not isinstance(said, dict) or said.get("key") not in spec.keys:
        return
    control = spec.control(said["key"])
    if not control.enabled(settle(spec, current_values(spec))):
        return
    value = _value(control, said.get("value"))
    if value is None:
        return
    st.session_state[widget_key(spec, control.key)] = value
    changed(spec, control.key)


def _value(control: Control, said: Any) -> Any:
    """The value of ``control`` the browser said (an option by its index, a number), or None if none is."""
    if not control.kind.numeric:
        options = list(control.options)
        if control.kind is ControlKind.MULTISELECT:
            chosen = _indices(said, len(options))
            if chosen is None or len(set(chosen)) > control.most:
                return None
            return [options[i] for i in sorted(set(chosen))]
        chosen = _indices([said], len(options))
        return None if chosen is None else options[chosen[0]]
    if isinstance(said, bool) or not isinstance(said, (int, float)):
        return None
    try:
        return control.parse(repr(float(said)))
    except ValueError:
        return None


def _indices(said: Any, count: int) -> list[int] | None:
    """``said`` as indices of ``count`` options, or None unless it is a list of them."""
    if not isinstance(said, Sequence) or isinstance(said, str):
        return None
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < count for i in said):
        return None
    return list(said)


def _press(spec: PageSpec) -> None:
    """Callback of the trigger ``press``: the button's action (``ui.starts.press``)."""
    starts.press(spec, st.session_state[element_key(spec)]["press"], load_preset, widget_key)
