"""The app: the page set-up and the navigation, one ``st.Page`` per script in ``pages/``.

``st.navigation`` routes every address: a shared link to any page (``/rates?...``) runs
``app.py`` first, so this set-up holds on every page, then the page's script
(``ui.navigation``).
"""

from __future__ import annotations

import functools
import gc
from pathlib import Path

import streamlit as st

from polarize.plots.static import find_browser, missing_for_images, start_browser
from polarize.serve.runner import prestart
from polarize.web.pages import PAGES
from ui import charts, mode, plotly_js, theme
from ui.navigation import st_pages

__all__ = ["run_app"]

ICON = Path(__file__).with_name("icon.png")
"""The tab's icon, served by the app itself: a ``:material/...:`` icon would make every visitor's
browser fetch it from fonts.gstatic.com (Streamlit's favicon for those), a third-party host."""


@functools.cache
def _start_server() -> None:
    """Once per server, on its first request: the simulation workers, the clips' browser, the GC set aside.

    The workers start now so that the first run does not wait for their imports, and the browser
    that draws a clip's still picture (kept while the server runs) so that the first clip does not
    wait about 4 s for Chromium to start. What is
    imported by now lives as long as the server: frozen out of the garbage collector's
    sight, the full collection Streamlit makes after every rerun scans only what the
    sessions made since (it took about 0.1 CPU-s of each Explorer load).
    """
    prestart()
    plotly_js.publish()  # plotly.js into the folder the app serves, before a page asks for it
    if missing_for_images(find_browser()) is None:  # clips can be made here: their browser is ready
        start_browser(keep=True)
    gc.freeze()


RECONNECTED_RUN_EVERY = "1h"
"""How often the empty fragment of ``_rerun_when_reconnected`` reruns (its timer is not what it is for)."""


@st.fragment(run_every=RECONNECTED_RUN_EVERY)
def _rerun_when_reconnected() -> None:
    """Draws nothing: a fragment on a timer, so that a page that lost its server runs anew on the next.

    A page whose websocket reconnects asks for a script run only if it thinks its session may have
    missed one (Streamlit 1.67's frontend: none yet, a run or a fragment's under way, or a fragment on
    a timer); otherwise it keeps the old session's elements. A replica that died (``deploy/``) or a
    server restarted took the session with it: the new one had never run the script, and the page's
    download buttons asked it for files of the dead session by its id ("Invalid session ID"), a click
    doing nothing. This fragment is the timer that makes the page run the script on reconnecting
    (one run, its view from the cache); its own rerun, once an hour, costs a message. Its cost to a
    changed control, measured side by side (two servers, one without it, the Loss page's changes
    alternated, 34 pairs over three runs at load 5-12): none seen (medians 1.29 and 1.26 s in the
    last); the 0.92 against 0.56 s once read from two runs at different times was not its.
    """


def run_app() -> None:
    """The app (``app.py``): the page set-up, then ``st.navigation`` over the scripts in ``pages/``."""
    _start_server()
    st.set_page_config(page_title="polarize", page_icon=str(ICON), layout="wide",
                       initial_sidebar_state=mode.sidebar_state())
    theme.style()
    charts.preload()  # the tab fetches plotly.js while the page computes
    _rerun_when_reconnected()
    st.navigation(st_pages(PAGES)).run()
