"""The sidebar's "Reset to preset" and "New random start" buttons, drawn under their controls.

A page with a ``preset`` control gets "Reset to preset" (every control back to the chosen
preset's values); a page with a ``seed`` control gets "New random start" (a new seed, so new
random draws of everything the seed draws). Both are drawn by the controls' element (``ui.controls``,
``button``) and act in its callback (``press``), before the rerun draws the controls.

On a page that asks for it (``PageSpec.ahead``), the next "New random start" is known before the
press: its seed is drawn when the page is shown (kept in the session, ``NEXT``) and its view made
in the background while the workers are idle (``ahead``), so the press finds it made; from the page's
second run in a session on (``SHOWN``): a first visit makes nothing ahead, for a press most first visits
never make (it cost the server about 0.1 CPU-s of each, a quarter of a first visit's). A press is
then a script run that draws what is made already, no run, no figure built, fitted or encoded.
The script's run waits for that view (``made``, at most ``HOLD_SECONDS``) and hands its main figure to
the browser (``ui.charts.hold``), which draws it at the press itself: the press's rerun of the page then
brings the figure the browser has drawn, and the rest of the page (the seed, the numbers).
"""

from __future__ import annotations

import concurrent.futures
import logging
import random
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

import streamlit as st

from polarize.serve.runner import idle
from polarize.web.page import PageSpec, Problem

__all__ = ["HOLD_SECONDS", "MOST_AHEAD", "NEXT", "RESEED", "RESET", "SEEDS", "SHOWN", "ahead", "button",
           "made", "made_ahead", "new_seed", "press", "upcoming"]

SEEDS = 100_000
"""New seeds are drawn below this (when the control allows): short enough to read out and type."""

NEXT = "_{page}_next_seed"
"""Session key (``NEXT.format(page=...)``): the seed the page's next "New random start" gives."""
SHOWN = "_{page}_shown"
"""Session key (``SHOWN.format(page=...)``): the page has run in this session (its first run makes nothing
ahead: ``ahead``)."""
RESEED = "{page}__reseed"
"""The key of the page's "New random start" button (``RESEED.format(page=...)``)."""
HOLD_SECONDS = 3.0
"""The longest a script run waits for the next start's view to be made (``made``), to hand it to the
browser: a view made later is left for the press (which finds it made)."""
MOST_AHEAD = 4
"""Views waiting to be made ahead, for the whole server: past these, a page's next start is not made
ahead (its press runs it, as any change)."""

_SLICE = 0.05
"""Seconds of a slice of ``made``'s wait."""
_RANDOM = random.SystemRandom()
_LOG = logging.getLogger(__name__)
# One view made ahead at a time, in a thread of its own: never two beside a visitor's run.
_MAKER = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="polarize-ahead")
_WANTED: dict[Hashable, concurrent.futures.Future] = {}  # (page, job) waiting or being made
_WANTED_LOCK = threading.Lock()


def new_seed(low: int, high: int, now: int | None) -> int:
    """A random seed in ``[low, min(high, low + SEEDS - 1)]``, other than ``now`` when there is a choice."""
    top = max(low, min(high, low + SEEDS - 1))
    while True:
        seed = _RANDOM.randint(low, top)
        if seed != now or top == low:
            return seed


RESET = "{page}__reset"
"""The key of the page's "Reset to preset" button (``RESET.format(page=...)``)."""
_BUTTONS = {
    "preset": (RESET, "Reset to preset", "Every control back to the chosen preset's values."),
    "seed": (RESEED, "New random start", "A new seed: new random draws of the start (and of whatever else "
                                         "the seed draws), the other settings kept."),
}


def button(spec: PageSpec, control: str) -> dict[str, str] | None:
    """The button that goes under the page's control ``control`` (its key, label and help), or None:
    "Reset to preset" under the preset, "New random start" under the seed.

    Under their controls, not above every control: there the two buttons and the preset came before
    the tokens, loss, normalizer and seed a newcomer changes first (the seed at 1533 px of a
    1280 x 720 window).
    """
    if control not in _BUTTONS or control not in spec.keys:
        return None
    key, label, help_text = _BUTTONS[control]
    return {"key": key.format(page=spec.name), "label": label, "help": help_text}


def press(spec: PageSpec, pressed: Any, reset: Callable[[PageSpec], None],
          key: Callable[[PageSpec, str], str]) -> None:
    """A press of the button keyed ``pressed`` (``button``) on the page: its action, as a callback
    before the rerun draws the controls. A key of no button of the page does nothing.

    Parameters
    ----------
    pressed : str
        The key of the button pressed (as the browser said it).
    reset : callable
        ``reset(spec)`` loads the chosen preset's values into every control (the preset's own callback).
    key : callable
        ``key(spec, control_key)``: the control's session key.
    """
    if pressed == RESET.format(page=spec.name) and "preset" in spec.keys:
        reset(spec)
    elif pressed == RESEED.format(page=spec.name) and "seed" in spec.keys:
        _reseed(spec, key(spec, "seed"))


def _reseed(spec: PageSpec, widget: str) -> None:
    """Button callback: the seed drawn ahead (``NEXT``), else a new one."""
    control = spec.control("seed")
    low, high, now = int(control.low), int(control.high), st.session_state.get(widget)
    drawn = st.session_state.pop(NEXT.format(page=spec.name), None)
    fits = drawn is not None and low <= drawn <= high and drawn != now
    st.session_state[widget] = drawn if fits else new_seed(low, high, now)


def ahead(spec: PageSpec, values: dict[str, Any],
          make: Callable[[Hashable], Any]) -> concurrent.futures.Future | None:
    """Draw the seed of the page's next "New random start" (kept in the session, ``NEXT``) and have
    ``make(job)`` make its view in the background, if the page asks for it (``PageSpec.ahead``), its
    seed is in use and it has run in this session before (``SHOWN``): a first visit's run makes nothing
    ahead, and its press, if it comes first, runs as any change does.

    ``make`` runs in a thread of its own (no Streamlit call in it: it is no session's), one view at a
    time, and only while the workers are idle (``runner.idle``) when its turn comes: a view made
    ahead never makes a visitor's own run wait. A job that is waiting or being made already is not
    handed over again, and at most ``MOST_AHEAD`` wait.

    Parameters
    ----------
    values : dict
        The page's values now (settled): the job is theirs with the seed drawn ahead.
    make : callable
        ``make(job)``: makes and keeps the view of ``job`` where the next script run finds it.

    Returns
    -------
    concurrent.futures.Future or None
        The making (its result: whether it was made, or left for the press because the workers
        were busy), or None when nothing was handed over.
    """
    if not spec.ahead or "seed" not in values:
        return None
    shown = SHOWN.format(page=spec.name)
    if shown not in st.session_state:
        st.session_state[shown] = True
        return None
    control = spec.control("seed")
    if not control.enabled(values):
        return None
    key, now = NEXT.format(page=spec.name), values["seed"]
    drawn = st.session_state.get(key)
    if drawn is None or drawn == now:
        st.session_state[key] = new_seed(int(control.low), int(control.high), now)
    job = upcoming(spec, values)
    if job is None:
        return None
    wanted = (spec.name, job)
    with _WANTED_LOCK:
        making = _WANTED.get(wanted)
        if making is None and len(_WANTED) < MOST_AHEAD:
            # Under the lock: ``_make`` forgets it (under the lock too) only once it is here.
            making = _WANTED[wanted] = _MAKER.submit(_make, wanted, lambda: make(job))
    return making


def upcoming(spec: PageSpec, values: dict[str, Any]) -> Hashable | None:
    """The job the page's next "New random start" runs, from ``values`` (the page's now) and the seed
    drawn for it (``NEXT``, drawn by ``ahead``); None if none is drawn or the job is a problem."""
    drawn = st.session_state.get(NEXT.format(page=spec.name))
    if drawn is None or drawn == values.get("seed"):
        return None
    job = spec.make_job({**values, "seed": drawn})
    return None if isinstance(job, Problem) else job


def made(making: concurrent.futures.Future | None, timeout: float = HOLD_SECONDS) -> bool:
    """Whether ``making`` (``ahead``'s) made its view, waited for at most ``timeout`` seconds (False:
    not made, left for the press, or still being made then).

    Waited for in slices, reading the session state between them: that is where Streamlit stops a
    script run whose visitor has asked for another (a changed control), so the wait never holds a
    visitor's change up for more than a slice.
    """
    if making is None:
        return False
    deadline = time.monotonic() + timeout
    while True:
        try:
            return bool(making.result(max(0.0, min(_SLICE, deadline - time.monotonic()))))
        except concurrent.futures.TimeoutError:
            if time.monotonic() >= deadline:
                return False
        st.session_state.get(NEXT)  # the read is the point: Streamlit's stop, if asked


def made_ahead(timeout: float | None = None) -> None:
    """Wait until every view handed over so far (``ahead``) is made or left (one at a time, in order).

    Raises
    ------
    TimeoutError
        They were not, within ``timeout`` seconds.
    """
    _MAKER.submit(lambda: None).result(timeout)


def _make(wanted: Hashable, make: Callable[[], Any]) -> bool:
    """``make()`` if the workers are idle now; whether it was made. Never raises (said in the log)."""
    try:
        if not idle():
            return False
        make()
        return True
    except Exception:  # made ahead, for no one yet: the press will make it and say what went wrong
        _LOG.exception("polarize: a view made ahead failed")
        return False
    finally:
        with _WANTED_LOCK:
            _WANTED.pop(wanted, None)
