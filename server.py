"""polarize's server: ``streamlit run server.py`` serves the app (``app.py``) as ``./run app`` and the
image do.

An ``st.App`` (Streamlit's documented ASGI app) running ``app.py``, with one route of its own: plotly.js
gzipped once (``ui.plotly_js.route``), where Streamlit would compress its 4.8 MB anew for every new
browser. ``streamlit run app.py`` serves the same app, paying that compression.
"""

import streamlit as st

from ui import plotly_js

app = st.App("app.py", routes=[plotly_js.route()])
