"""The transport controls' browser side: step buttons and keys for animated figures, and "keep playing".

The buttons themselves are in each figure (``polarize.plots.animation``); what plotly cannot do
alone (step from the current frame; space, the arrows and Home) is done by the transport script
(``polarize.web.transport``, which the offline HTML carries too), installed on each page that
shows an animated figure by an element of the chart's component (``ui.charts.transport``), in the
page's own DOM: no iframe, no document of its own to load. The sidebar's "Keep playing after a
change" is one setting for every animated page: with it on, the script starts the (new) figure
playing after each rerun.
"""

from __future__ import annotations

import streamlit as st

from polarize.web.view import View
from ui import charts

__all__ = ["KEEP_PLAYING", "animated", "controls"]

KEEP_PLAYING = "_transport_keep_playing"
"""Session state: whether to keep playing after a change (kept while pages without the toggle run)."""
_WIDGET = "transport_keep_playing"
_RUN = "_transport_run"


def animated(view: View) -> bool:
    """Whether the view has a figure with frames."""
    return any(plot.figure["frames"] for plot in view.plots())


def controls(view: View) -> None:
    """For a view with an animated figure: the sidebar's "keep playing" toggle and the script."""
    if not animated(view):
        return
    with st.sidebar:
        _controls()


@st.fragment
def _controls() -> None:
    """The toggle and the script's element: a fragment (``st.fragment``), so that turning the toggle
    calls the element alone (and, turned on, starts the figure playing), not the page and its figures."""
    state = st.session_state
    # Widget keys are per page (and dropped when a page does not draw them): the setting lives in its
    # own key, copied into the widget before it is drawn and back by the widget's callback.
    state[_WIDGET] = state.get(KEEP_PLAYING, False)
    keep = st.toggle("Keep playing after a change", key=_WIDGET, on_change=_kept,
                     help="Start the animation again by itself whenever a control changes. Keys "
                          "on the figure: space plays or pauses, \u2190 \u2192 step, Home resets.")
    # A new ``run`` on every rerun while keep is on: the element is called again and plays the new figure.
    state[_RUN] = state.get(_RUN, 0) + 1 if keep else 0
    charts.transport(autoplay=keep, run=state[_RUN])


def _kept() -> None:
    st.session_state[KEEP_PLAYING] = st.session_state[_WIDGET]
