"""Opening the app's pages headlessly (``streamlit.testing.v1.AppTest``).

Pages are callables registered by ``ui.run_app`` (``st.Page(render(spec))``), not files:
``page(name)`` runs one page's renderer alone, as a visitor's first request to its
address would; ``open_page(at, name)`` switches an app already running to another page,
as its menu entry does (Streamlit knows a callable page by the hash of its url path).
"""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from polarize.web import pages

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")

_SCRIPT = """
import ui
from polarize.web.pages import by_name

ui.render(by_name({name!r}))
"""


def page(name: str, *, timeout: float = 120) -> AppTest:
    """An ``AppTest`` of page ``name`` alone (not yet run)."""
    pages.by_name(name)  # a typo fails here, not as an empty page
    return AppTest.from_string(_SCRIPT.format(name=name), default_timeout=timeout)


def open_page(at: AppTest, name: str) -> AppTest:
    """Switch ``at`` (the app, run at least once) to page ``name``; run it next."""
    at._page_hash = calc_hash(pages.by_name(name).url_path)  # AppTest's switch_page takes files only
    return at
