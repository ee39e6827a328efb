"""polarize: the Streamlit entry point (``streamlit run app.py``).

Every page is a spec in ``polarize.web.pages`` drawn by ``ui.render``; the
Explorer is the default page, at the app's root URL.
"""

import streamlit as st

import ui

st.set_page_config(page_title="polarize", page_icon=":material/scatter_plot:", layout="wide",
                   initial_sidebar_state="expanded")

# Less blank space above the title, so that the dashboard fits a projector's 1080 lines.
st.html("<style>[data-testid='stMainBlockContainer'] {padding-top: 2.2rem;}</style>")

ui.navigation().run()
