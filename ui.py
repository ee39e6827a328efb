"""Streamlit glue shared by the pages: the cached engine calls and the Explorer's link state.

Everything numerical lives in ``polarize`` (``polarize.explorer`` above all);
this module only caches its calls and moves control values between the URL,
``st.session_state`` and the widgets.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from polarize import explorer as ex
from polarize.config import Experiment
from polarize.presets import PRESETS
from polarize.runner import prestart

# Start the simulation workers now, so that the first run does not wait for their imports.
prestart()

_SAVED = "_explorer_saved"
"""Session key: the Explorer's control values, kept while another page is shown."""
_LINK = "_explorer_link"
"""Session key: (values read from the opening link, what the link had that was ignored)."""


@st.cache_resource(show_spinner=False, max_entries=32, hash_funcs={Experiment: Experiment.to_json})
def explore(experiment: Experiment) -> ex.Exploration:
    """``polarize.explorer.explore``, cached on the experiment (keyed by its exact JSON, arrays included).

    A resource cache rather than ``st.cache_data``: the result is immutable and
    shared as is, and its figure stays a built ``go.Figure``. ``cache_data`` would
    unpickle it on every rerun, and ``st.plotly_chart`` re-validates any figure
    given as a dict: together a quarter of a second per rerun, a third of the
    budget for a changed control.
    """
    return ex.explore(experiment)


@st.cache_data(show_spinner=False)
def maths_figures() -> dict[str, dict[str, Any]]:
    """``polarize.explorer.maths_figures``, computed once per server."""
    return ex.maths_figures()


def init_controls() -> dict[str, str]:
    """Give every Explorer control a value in ``st.session_state`` before its widget is drawn.

    On the first visit of a session the values come from the URL (a shared
    link); afterwards from what the user last set (also after a visit to
    another page, which drops the widgets' own state).

    Returns
    -------
    dict
        What the opening link had that was ignored (key -> reason), for as long
        as the controls still hold the link's values; empty otherwise.
    """
    state = st.session_state
    if not all(key in state for key in ex.CONTROLS):
        saved = state.get(_SAVED)
        if saved is None:
            parsed = ex.parse_query(st.query_params.to_dict())
            saved = {"preset": parsed.preset, **parsed.values}
            state[_LINK] = (dict(saved), parsed.ignored)
        for key, value in saved.items():
            if key not in state:
                state[key] = value
    link = state.get(_LINK)
    if link is None:
        return {}
    loaded, ignored = link
    if current_values(with_preset=True) != loaded:
        state[_LINK] = None  # the user has moved on from the link: stop reporting it
        return {}
    return ignored


def current_values(*, with_preset: bool = False) -> dict[str, Any]:
    """The controls' values now (``FIELD_KEYS``, and ``preset`` if asked)."""
    keys = ex.CONTROLS if with_preset else ex.FIELD_KEYS
    return {key: st.session_state[key] for key in keys if key in st.session_state}


def apply_preset() -> None:
    """Widget callback: load the chosen preset's values into every control."""
    for key, value in ex.preset_values(st.session_state["preset"]).items():
        st.session_state[key] = value


def save_and_share(preset: str, values: dict[str, Any]) -> None:
    """Remember the controls for this session and write them into the URL (a shareable link)."""
    st.session_state[_SAVED] = {"preset": preset, **values}
    query = ex.to_query(preset, values)
    if st.query_params.to_dict() != query:
        st.query_params.from_dict(query)


def preset_description(name: str) -> str:
    """The preset's one-line description."""
    return PRESETS[name].description
