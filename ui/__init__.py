"""The Streamlit layer: the app, and the one renderer that draws any page spec.

Everything a page knows lives in ``polarize.web``; only this package imports Streamlit.

- ``app``: the page set-up and the navigation; ``navigation``: one ``st.Page`` per script of ``pages/``;
- ``renderer``: ``render(spec)``, a page from its controls to its view;
- ``state``: the controls' values in a session, from a link or as left; the address;
- ``sidebar``: the tour, then ``controls``: the page's controls as one element of native inputs;
  ``starts``: "Reset to preset", "New random start";
- ``blocks``: one drawing function per block of a view; ``charts``: the figures' chart element;
  ``plotly_js``: the app's own plotly.js, its files and the route of ``server.py`` that sends it;
- ``mode``: presentation mode, read from the address; ``theme``: the look (CSS, dark figures);
- ``deck_show``: presenting a deck; ``deckbar``: "Present or add to a deck";
- ``transport``: the animated figures' keys and step buttons; ``viewport``: the window's size;
  ``window_cookie``: the window's width in the viewport's cookie, written by the page's head;
- ``uploads``: what one session's uploaded files may hold in memory; an upload to another replica's session.

Importing it imports nothing else (and does no work): the app's modules are imported by
``run_app``, one session at a time (``load``).
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType

import streamlit as st

__all__ = ["load", "render", "run_app"]

_IMPORTING = threading.Lock()
_RUN = threading.local()
"""``_RUN.routed``: this script run came through ``app.py`` (``run_app``); a page script reads it once."""


def load(name: str) -> ModuleType:
    """Import module ``name`` with no other session importing at the same time.

    Every session runs ``app.py`` in a thread of its own. On a server just started, a hall of
    visitors opening the app at once would import the app's packages side by side, and Python's
    per-module import locks then hand some of them a half-initialized module (an ImportError,
    an AttributeError, a _DeadlockError: most of the first visitors saw an error page). Once
    imported, a module costs one uncontended lock here.
    """
    with _IMPORTING:
        return importlib.import_module(name)


def run_app() -> None:
    """The app (``app.py``): the cap on a session's uploads put on (``ui.uploads``), the ``POLARIZE_*``
    variables checked, then the pages (``ui.app.run_app``).

    A bad variable stops the app with one line naming it, before the pages (which build
    experiments as they are imported) are imported.
    """
    uploads = load("ui.uploads")
    uploads.cap_uploads()  # first: before the app's imports, a session may upload already
    uploads.find_sessions_elsewhere()
    problem = load("polarize.env").environment_problem()
    if problem:
        st.text(f"polarize cannot start: {problem}")  # as text: the value is shown as it was given
        st.stop()
    _RUN.routed = True
    load("ui.app").run_app()


def render(page: str) -> None:
    """Draw the page spec named ``page`` (``PageSpec.name``): the whole of a script in ``pages/``.

    Until some session of a server has called ``st.navigation``, Streamlit treats a ``pages/``
    folder beside ``app.py`` the legacy way and runs a link's page script (``/rates``) alone: no
    page set-up, a menu of file names. A page script run without ``app.py`` runs the app instead,
    which routes back to it (and turns the legacy way off for every later run of the server).
    """
    routed, _RUN.routed = getattr(_RUN, "routed", False), False
    if not routed:
        run_app()
        return
    spec = load("polarize.web.pages").by_name(page)
    load("ui.renderer").render(spec)
