"""polarize: the Streamlit entry point (``streamlit run app.py``).

Every page is a spec in ``polarize.web.pages`` drawn by ``ui.render``; the
Explorer is the default page, at the app's root URL. A bad ``POLARIZE_*``
environment variable stops the app with one line naming it (the pages build
experiments as they are imported, so it is checked first).
"""

import streamlit as st

from polarize.env import environment_problem

problem = environment_problem()
if problem:
    st.text(f"polarize cannot start: {problem}")  # as text: the value is shown as it was given
    st.stop()

import ui  # noqa: E402  (after the check above)

ui.run_app()
