"""The figures' element: a chart of our own that keeps its ``<div>`` and updates it in place.

``st.plotly_chart`` remounts a chart whose figure changed and draws it twice. This element is a
Streamlit component v2 (``st.components.v2.component``, no iframe; its browser side is
``chart_frontend/chart.js``): its ``<div>`` stays across reruns and a changed figure is one
``Plotly.react`` of it, frames included; a rerun with the same figure does nothing in the browser.

- The figure goes out as bytes: one line of JSON (its ``revision``, the chart's config, whether clicks
  are reported, where plotly.js is), then the figure's JSON. A figure dict of ``polarize.plots`` is
  encoded once (``_encoded``: the shared view cache hands every session the same dict) and never
  validated or changed here.
- plotly.js is the app's own copy (``ui.plotly_js``: served gzipped once by the app's server), loaded
  once per tab by its address and kept by the browser.
  ``preload`` mounts the element with no figure at the top of every page, before the page computes,
  so the browser fetches and parses plotly.js while the server runs the page.
- A click on a point of a chart drawn with ``on_click`` comes back as the element's trigger
  ``click``: the points, each with its ``customdata`` (``polarize.web.page.selected_values``).
- A chart's next figure may be held in the browser ahead of the press that shows it (``hold``: the
  Explorer's next "New random start", made ahead by ``ui.starts``): another instance of the element,
  keyed ``<chart's key>`` + ``HELD``, is given the very bytes the chart will be given, draws nothing,
  and at the press the chart draws them at once; the script's run after the press then gives the
  chart the figure it has drawn (the same revision), and the chart does nothing.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plotly.io.json as plotly_json
import streamlit as st
from streamlit.components.v2 import component

from polarize.web import transport as web_transport
from ui.plotly_js import ADDRESS
from ui.theme import HELD as HELD_PLACE
from ui.theme import LOADER
from ui.theme import TRANSPORT as TRANSPORT_PLACE

__all__ = ["HELD", "MODULE", "NAME", "chart", "hold", "payload", "preload", "revision", "transport"]

NAME = "polarize_chart"
"""The component's name (``BidiComponent.component_name`` of every figure the app draws)."""
HELD = "_next"
"""The end of the key of the element holding a chart's next figure (``hold``); not two underscores, which
Streamlit's component ids may not hold."""
_KEEP = 8
"""Figures whose encoding is kept (the ones being shown: a class looking at the same default run)."""

_FRONTEND = Path(__file__).parent / "chart_frontend"
MODULE = ("plotly_js.js", "fit.js", "crowding.js", "chart.js")
"""The chart element's browser side, a concept a file of ``chart_frontend/``, in the order its one module
joins them (after the transport script: ``_ELEMENT``); ``chart.js`` is the element itself."""
# In the page's own DOM (no shadow root): plotly's style sheet and the transport script reach the chart.
# The module starts with the transport script (``polarize.web.transport``, the offline HTML's too), which
# the element keyed "transport" installs (``transport``).
_ELEMENT = component(NAME, isolate_styles=False, js="\n".join(
    (web_transport.script(), *((_FRONTEND / name).read_text(encoding="utf-8") for name in MODULE))))
_ENCODED: OrderedDict[int, tuple[dict[str, Any], bytes, str]] = OrderedDict()
_LOCK = threading.Lock()


def _encoded(figure: dict[str, Any]) -> tuple[bytes, str]:
    """The figure's JSON (plotly's encoder: numpy arrays too) and its digest, made once per figure dict.

    Kept for the last ``_KEEP`` figures, each with the dict itself (so its ``id`` is not reused while
    kept): every session shown a cached view sends the same bytes without encoding them again.
    """
    key = id(figure)
    with _LOCK:
        kept = _ENCODED.get(key)
        if kept is not None and kept[0] is figure:
            _ENCODED.move_to_end(key)
            return kept[1], kept[2]
    body = plotly_json.to_json_plotly(figure).encode()
    digest = hashlib.blake2b(body, digest_size=12).hexdigest()
    with _LOCK:
        _ENCODED[key] = (figure, body, digest)
        while len(_ENCODED) > _KEEP:
            _ENCODED.popitem(last=False)
    return body, digest


def payload(figure: dict[str, Any], *, config: dict[str, Any] | None = None, clicks: bool = False,
            key: str | None = None) -> bytes:
    """What the element keyed ``key`` is given for ``figure``: its head (one line of JSON: the key too,
    by which the browser finds the chart a figure held for it goes to, ``hold``) and the figure's JSON."""
    body, digest = _encoded(figure)
    head = {"plotly": ADDRESS, "config": config or {}, "clicks": clicks}
    if key is not None:
        head["key"] = key
    said = json.dumps(head, sort_keys=True, separators=(",", ":"))
    head["revision"] = hashlib.blake2b(f"{digest}{said}".encode(), digest_size=12).hexdigest()
    return json.dumps(head, separators=(",", ":")).encode() + b"\n" + body


def revision(data: bytes) -> str:
    """The revision a payload (``payload``) says its figure is: what the browser knows it by."""
    return json.loads(data.split(b"\n", 1)[0])["revision"]


def chart(figure: dict[str, Any], *, key: str, config: dict[str, Any] | None = None,
          on_click: Callable[[], None] | None = None) -> Any:
    """Draw ``figure`` in the chart element keyed ``key`` (the same key: the same ``<div>``, updated).

    Parameters
    ----------
    figure : dict
        A finished figure of ``polarize.plots`` (``data``, ``layout``, ``frames``); it is read, never
        changed, so a cached view may share it.
    key : str
        The element's key: its ``<div>`` is kept while the page draws this key.
    config : dict, optional
        plotly.js's config for the chart.
    on_click : callable, optional
        Called (before the rerun) after a click on a point; ``st.session_state[key]["click"]`` holds
        the points then, each a dict with its ``customdata``, ``x``, ``y``, ``curve_number`` and
        ``point_index``.

    Returns
    -------
    streamlit.components.v2.bidi_component.ComponentResult
    """
    callbacks = {"on_click_change": on_click} if on_click is not None else {}
    return _ELEMENT(key=key, data=payload(figure, config=config, clicks=on_click is not None, key=key),
                    **callbacks)


def hold(data: bytes, *, key: str, after: str, button: str) -> None:
    """Hold in the browser the figure the chart keyed ``key`` is given next, for the press of ``button``.

    An element keyed ``key + HELD``, drawn nowhere, is given ``data`` (the chart's next ``payload``,
    byte for byte) under a head of its own. At a click on the button (its ``st-key-`` class) the
    browser draws ``data``'s figure in the chart at once, if the chart still shows the figure whose
    revision is ``after`` (else the figure was held for a page that has changed since: it is dropped,
    and the press is left to the server). The run the press starts then gives the chart ``data``
    itself, which it has drawn already: the server stays the truth, and a figure it sends otherwise
    (another setting, a figure not made ahead) is drawn as ever.

    Parameters
    ----------
    data : bytes
        ``payload(figure, config=..., clicks=..., key=key)``, as the press's run will give it.
    key : str
        The chart's key.
    after : str
        The revision of the figure the chart shows now (``revision``).
    button : str
        The key of the button whose press shows the figure.
    """
    head = json.dumps({"next": key, "after": after, "button": button}, separators=(",", ":"))
    with st.container(key=HELD_PLACE):  # out of sight (``ui.theme``): it takes no room
        _ELEMENT(key=f"{key}{HELD}", data=head.encode() + b"\n" + data)


def transport(*, autoplay: bool, run: int) -> None:
    """The element installing the transport script in the page, out of sight (``ui.theme.TRANSPORT``):
    keys and step buttons for the page's animated figures, and, with ``autoplay``, the (new) figure
    played once it has settled, again whenever ``run`` changes (the element is called again)."""
    with st.container(key=TRANSPORT_PLACE):
        head = {"transport": {"autoplay": autoplay, "run": run}}
        _ELEMENT(key="transport", data=json.dumps(head).encode())


def preload() -> None:
    """The element with no figure, out of sight (``ui.theme.LOADER``): the tab loads plotly.js now."""
    with st.container(key=LOADER):
        head = {"load": True, "plotly": ADDRESS}
        _ELEMENT(key="plotly_js", data=json.dumps(head).encode())
