"""polarize: the Streamlit entry point (``streamlit run app.py``).

Every page is a spec in ``polarize.web.pages`` drawn by ``ui.render``; the
Explorer is the default page, at the app's root URL.
"""

import ui

ui.run_app()
