"""The app's pages as Streamlit knows them: one script a page in the top-level ``pages/`` folder.

Each script is one call of the renderer on its page spec (``pages/rates.py`` draws the spec named
``"rates"``); ``st.navigation`` routes them as ``st.Page("pages/rates.py", ...)``, Streamlit's
documented pattern (calling it turns off the older automatic ``pages/`` menu). A shared link to any
page (``/rates?...``) runs ``app.py`` first, so the app's set-up holds on every page.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from polarize.web.page import PageSpec
from polarize.web.pages import by_name

__all__ = ["FOLDER", "script", "st_page", "st_pages", "switch_to"]

FOLDER = "pages"
"""The page scripts' folder, beside ``app.py`` (``st.Page`` paths are relative to the entry point)."""


def script(spec: PageSpec) -> str:
    """The script that draws ``spec``, relative to ``app.py``: ``pages/<name>.py``."""
    return f"{FOLDER}/{spec.name}.py"


def st_page(spec: PageSpec) -> st.Page:
    """``spec`` as a page of ``st.navigation``: its script, known to Streamlit by its ``url_path`` (the
    default page by the app's root)."""
    return st.Page(script(spec), title=spec.nav_title, icon=spec.icon, url_path="" if spec.default else
                   spec.url_path, default=spec.default)


def st_pages(specs: Sequence[PageSpec]) -> list[st.Page]:
    """Every page of ``specs`` for ``st.navigation``, and the default page a second time at its own name.

    Streamlit serves the default page at the root and answers its ``url_path`` (``/explorer``, typed as
    the other pages' addresses are) with a "Page not found" dialog; a hidden page there draws the same
    spec. (Streamlit knows a page by its ``url_path``: the default page's is ``""`` so that the two do
    not collide; and the alias is a function, not the script again, so that a script names one page.)
    """
    return [st_page(spec) for spec in specs] + [_alias(spec) for spec in specs if spec.default]


def _alias(spec: PageSpec) -> st.Page:
    """A hidden page at ``spec``'s ``url_path`` that draws ``spec``."""

    def alias() -> None:
        import ui  # here: ui imports this module

        ui.render(spec.name)

    return st.Page(alias, title=spec.nav_title, icon=spec.icon, url_path=spec.url_path, visibility="hidden")


def switch_to(name: str, query: dict[str, str] | None = None) -> None:
    """Open page ``name`` (a ``PageSpec.name``) with ``query`` as its address's query."""
    st.switch_page(st_page(by_name(name)), query_params=query)
