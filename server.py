"""polarize's server: ``streamlit run server.py`` serves the app (``app.py``) as ``./run app`` and the
image do.

An ``st.App`` (Streamlit's documented ASGI app) running ``app.py``, with a route and a middleware of its
own: plotly.js gzipped once (``ui.plotly_js.route``), where Streamlit would compress its 4.8 MB anew for
every new browser; the window's width written into the viewport's cookie by each page's head
(``ui.window_cookie``), so that a session's first run is fitted to any window, where it would rerun
the view once its page had measured a window other than the one assumed. ``streamlit run app.py``
serves the same app, paying both.
"""

import streamlit as st
from starlette.middleware import Middleware

from ui import plotly_js, window_cookie

app = st.App("app.py", routes=[plotly_js.route()], middleware=[Middleware(window_cookie.WindowCookie)])
