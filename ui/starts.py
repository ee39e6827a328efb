"""The sidebar's "Reset to preset" and "New random start" buttons, drawn under their controls.

A page with a ``preset`` control gets "Reset to preset" (every control back to the chosen
preset's values); a page with a ``seed`` control gets "New random start" (a new seed, so new
random draws of everything the seed draws). Both act in a button callback, before the rerun
draws the widgets, which is when Streamlit lets their values change.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import streamlit as st

from polarize.web.page import PageSpec

__all__ = ["SEEDS", "buttons", "new_seed"]

SEEDS = 100_000
"""New seeds are drawn below this (when the control allows): short enough to read out and type."""

_RANDOM = random.SystemRandom()


def new_seed(low: int, high: int, now: int | None) -> int:
    """A random seed in ``[low, min(high, low + SEEDS - 1)]``, other than ``now`` when there is a choice."""
    top = max(low, min(high, low + SEEDS - 1))
    while True:
        seed = _RANDOM.randint(low, top)
        if seed != now or top == low:
            return seed


def buttons(spec: PageSpec, control: str, reset: Callable[[PageSpec], None],
            key: Callable[[PageSpec, str], str]) -> None:
    """Draw the button that goes with the page's control ``control``, under it (in the sidebar's
    controls): "Reset to preset" under the preset, "New random start" under the seed.

    Under their controls, not above every control: there the two buttons and the preset came before
    the tokens, loss, normalizer and seed a newcomer changes first (the seed at 1533 px of a
    1280 x 720 window).

    Parameters
    ----------
    control : str
        The key of the control just drawn.
    reset : callable
        ``reset(spec)`` loads the chosen preset's values into every control (the preset's own callback).
    key : callable
        ``key(spec, control_key)``: the control's widget key.
    """
    if control == "preset":
        st.button("Reset to preset", key=f"{spec.name}__reset", icon=":material/restart_alt:",
                  on_click=reset, args=(spec,), width="stretch",
                  help="Every control back to the chosen preset's values.")
    if control == "seed":
        st.button("New random start", key=f"{spec.name}__reseed", icon=":material/casino:",
                  on_click=_reseed, args=(spec, key(spec, "seed")), width="stretch",
                  help="A new seed: new random draws of the start (and of whatever else the seed "
                       "draws), the other settings kept.")


def _reseed(spec: PageSpec, widget: str) -> None:
    control = spec.control("seed")
    st.session_state[widget] = new_seed(int(control.low), int(control.high), st.session_state.get(widget))
