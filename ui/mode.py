"""Presentation mode, read from the address once a run (``ui.renderer``) and passed on from there.

``?present=true`` on any page, or Streamlit's ``?embed=true``, turns it on: the sidebar starts
collapsed, captions and help go, the page's type is larger (``ui.theme``), and every figure fits
the window's height at a larger type (``polarize.web.fit``).
"""

from __future__ import annotations

import streamlit as st

from polarize.web import links

__all__ = ["presenting", "sidebar_state"]


def presenting() -> bool:
    """Whether this run is in presentation mode (``?present=true``, or embedded: ``?embed=true``)."""
    return bool(links.presenting(st.query_params.to_dict()) or st.context.is_embedded)


def sidebar_state() -> str:
    """``st.set_page_config``'s ``initial_sidebar_state``: collapsed in presentation mode, else
    Streamlit's "auto" (expanded, but collapsed on a phone, where it would cover the page)."""
    return "collapsed" if presenting() else "auto"
