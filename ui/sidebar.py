"""The sidebar: one widget per control of a page, its kind chosen by the control."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from polarize.web.controls import Control
from polarize.web.page import PageSpec
from ui import starts, theme
from ui.state import changed, current_values, load_preset, settle, widget_key

__all__ = ["sidebar"]


def sidebar(spec: PageSpec, *, presenting: bool = False) -> dict[str, Any]:
    """Draw the page's guided first visit (``_tour``) and its controls (derived values set, rules
    applied; in presentation mode without the tour, their help and captions); their values."""
    values = settle(spec, current_values(spec))
    state, group, row = st.session_state, "", []
    if spec.tour and not presenting:
        _tour(spec)
    with st.sidebar, st.container(key="controls"):  # its multiselects' tags: ``ui.theme``
        for control in spec.controls:
            key = widget_key(spec, control.key)
            if state.get(key) != values[control.key] and control.derive:
                state[key] = values[control.key]
            if control.group and control.group != group:
                st.subheader(control.group)
                group = control.group
            if control.half:
                row = row or list(st.columns(2))
                where = row.pop(0)
            else:
                row, where = [], st
            _widget(spec, control, where, values, presenting)
            starts.buttons(spec, control.key, load_preset, widget_key)
    return values


def _tour(spec: PageSpec) -> None:
    """The guided first visit, folded, first in the sidebar under the pages' menu: under the figure
    it started at 1250 px of a 1280 x 720 window, out of a newcomer's view."""
    with st.sidebar.expander("First visit? What to watch for", icon=":material/tour:",
                             key=f"tour_{spec.name}"):
        st.markdown("\n".join(f"{i}. {step}" for i, step in enumerate(spec.tour, 1)))


def _widget(spec: PageSpec, control: Control, where: Any, values: dict[str, Any], presenting: bool) -> None:
    """Draw one control, its widget chosen by its kind.

    The widget's value lives in the session (``ui.state``); it is also given as the widget's own
    default. A widget whose first draw reaches the browser only after the next run has begun (a
    busy machine, a tab in the background, the window's first measure rerunning the page) takes
    that run's default, without the session's value, and sends it back as if chosen: with
    Streamlit's default it came up empty or at its minimum ("choose at least one").
    """
    key = widget_key(spec, control.key)
    enabled = control.enabled(values)
    help_text = control.help + ("" if enabled else control.off_help)
    common = {"key": key, "disabled": not enabled, "help": None if presenting else help_text,
              "on_change": changed, "args": (spec, control.key)}
    c, now = control, st.session_state[key]
    if c.kind in ("slider", "number"):
        number = where.slider if c.kind == "slider" else where.number_input
        if c.integer:
            number(c.label, int(c.low), int(c.high), int(now), step=int(c.step or 1), **common)
        else:
            number(c.label, float(c.low), float(c.high), float(now), step=c.step, format="%g", **common)
    else:
        index = list(c.options).index(now) if c.kind in ("select", "radio") else None
        draw: dict[str, Callable[..., Any]] = {
            "select": lambda: where.selectbox(c.label, c.options, index, format_func=c.name, **common),
            "radio": lambda: where.radio(c.label, c.options, index, format_func=c.name, horizontal=True,
                                         **common),
            "select_slider": lambda: where.select_slider(c.label, c.options, now, format_func=c.name,
                                                         **common),
            "multiselect": lambda: where.multiselect(c.label, c.options, list(now), format_func=c.name,
                                                     max_selections=c.most, **common),
        }
        draw[c.kind]()
    if c.caption and not presenting:
        theme.caption(c.caption(st.session_state[key]), where)
