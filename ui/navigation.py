"""The app's pages as Streamlit knows them: one ``st.Page`` per page spec, a callable each."""

from __future__ import annotations

import functools

import streamlit as st

from polarize.web.page import PageSpec
from polarize.web.pages import by_name

__all__ = ["st_page", "switch_to"]


def st_page(spec: PageSpec) -> st.Page:
    """``spec`` as a page of ``st.navigation``: Streamlit knows it by its ``url_path``."""
    from ui.renderer import render  # the renderer draws deck links, which switch pages: import late

    return st.Page(functools.partial(render, spec), title=spec.nav_title, icon=spec.icon,
                   url_path=spec.url_path, default=spec.default)


def switch_to(name: str, query: dict[str, str] | None = None) -> None:
    """Open page ``name`` (a ``PageSpec.name``) with ``query`` as its address's query."""
    st.switch_page(st_page(by_name(name)), query_params=query)
