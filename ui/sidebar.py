"""The sidebar: the page's guided first visit, then its controls (``ui.controls``)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from polarize.web.page import PageSpec
from ui.controls import controls
from ui.state import current_values, settle, widget_key

__all__ = ["sidebar"]


def sidebar(spec: PageSpec, *, presenting: bool = False) -> dict[str, Any]:
    """Draw the page's guided first visit (``_tour``) and its controls (``ui.controls``: derived values
    set, rules applied; in presentation mode without the tour, their help and captions); their values."""
    values = settle(spec, current_values(spec))
    state = st.session_state
    if spec.tour and not presenting:
        _tour(spec)
    for control in spec.controls:
        key = widget_key(spec, control.key)
        if control.derive and state.get(key) != values[control.key]:
            state[key] = values[control.key]
    controls(spec, values, presenting=presenting)
    return values


def _tour(spec: PageSpec) -> None:
    """The guided first visit, folded, first in the sidebar under the pages' menu: under the figure
    it started at 1250 px of a 1280 x 720 window, out of a newcomer's view."""
    with st.sidebar.expander("First visit? What to watch for", icon=":material/tour:",
                             key=f"tour_{spec.name}"):
        st.markdown("\n".join(f"{i}. {step}" for i, step in enumerate(spec.tour, 1)))
