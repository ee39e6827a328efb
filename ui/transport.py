"""The transport controls' browser side: step buttons and keys for animated figures, and "keep playing".

The buttons themselves are in each figure (``polarize.plots.animation``); what plotly cannot do
alone (step from the current frame; space, the arrows and Home) is done by the transport script
(``polarize.web.transport``, which the offline HTML carries too), loaded here once per page that
shows an animated figure, in an empty iframe of the same origin that drives the page's charts.
The sidebar's "Keep playing after a change" is one setting for every animated page: with it on,
the script starts the (new) figure playing after each rerun.
"""

from __future__ import annotations

import streamlit as st
import streamlit.components.v1 as components

from polarize.web import transport
from polarize.web.view import View

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
    """The toggle and the script: a fragment (``st.fragment``), so that turning the toggle reloads the
    script alone (and, turned on, starts the figure playing), not the page and its figures."""
    state = st.session_state
    # Widget keys are per page (and dropped when a page does not draw them): the setting lives in its
    # own key, copied into the widget before it is drawn and back by the widget's callback.
    state[_WIDGET] = state.get(KEEP_PLAYING, False)
    keep = st.toggle("Keep playing after a change", key=_WIDGET, on_change=_kept,
                     help="Start the animation again by itself whenever a control changes. Keys "
                          "on the figure: space plays or pauses, \u2190 \u2192 step, Home resets.")
    state[_RUN] = state.get(_RUN, 0) + 1 if keep else 0
    # A new ``run`` on every rerun while keep is on: a new document, so the iframe loads again (and
    # starts the new figure playing) rather than being kept as it was.
    html = transport.script_html(inline=False, autoplay=keep, run=state[_RUN])
    iframe = getattr(st, "iframe", None)  # Streamlit 1.5x onwards; it deprecates components.html
    if iframe is not None:
        iframe(html, height=1)  # its least height; the document draws nothing
    else:
        components.html(html, height=0)


def _kept() -> None:
    st.session_state[KEEP_PLAYING] = st.session_state[_WIDGET]
