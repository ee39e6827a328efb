"""polarize: the Streamlit entry point (``streamlit run app.py``).

Every page is a spec in ``polarize.web.pages`` drawn by its script in ``pages/``
(``ui.render(name)``), routed by ``st.navigation``; the Explorer is the default page, at the
app's root URL. ``ui.run_app`` checks the
``POLARIZE_*`` environment variables first (a bad one stops the app with one line
naming it) and imports the app one session at a time (``ui.load``).
"""

import ui

ui.run_app()
