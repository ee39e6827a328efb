"""The Streamlit layer: the app, and the one renderer that draws any page spec.

Everything a page knows lives in ``polarize.web``; only this package imports Streamlit.

- ``app``: ``run_app``, the page set-up and the navigation (one ``st.Page`` per spec);
- ``renderer``: ``render(spec)``, a page from its controls to its view;
- ``state``: the controls' values in a session, from a link or as left; the address;
- ``sidebar``: one widget per control; ``starts``: "Reset to preset", "New random start";
- ``blocks``: one drawing function per block of a view; ``charts``: figures handed to Streamlit;
- ``present_mode``: presentation mode and presenting a deck; ``deckbar``: "Present or add to a deck";
- ``transport``: the animated figures' keys and step buttons; ``viewport``: the window's size.

Importing it does no work: the simulation workers start with the app (``run_app``).
"""

from ui.app import run_app
from ui.renderer import render

__all__ = ["render", "run_app"]
