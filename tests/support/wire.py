"""What the server sent a browser tab, counted on its websocket (used by test_fragments_browser.py and
benchmarks/browser.py); and what a Dash server sent one, counted on its callbacks' answers (``DashWire``,
for the benchmark's peer, ``benchmarks/apps/dash_app.py``).

Each frame the server sends on ``/_stcore/stream`` is one Streamlit ``ForwardMsg``, read here with
Streamlit's own protobuf classes: a ``new_session`` message starts each run (a fragment run names its
fragments, a run of the page's script none), and a figure arrives as a chart element of the app's
(``ui.charts``; ``st.plotly_chart`` for Streamlit alone: ``figure_element``) or, when the browser holds
that message already, as a reference to it (``ref_hash``). A figure held for a press (``ui.charts.hold``:
the Explorer's next "New random start", sent ahead) is none of the figures a page shows: it is counted apart.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from ui.blocks import DRAFT
from ui.charts import HELD

__all__ = ["DashWire", "Journal", "Wire", "drawn_figure", "figure_element", "frame_kind", "held_element",
           "journal", "listen", "listen_dash", "sent_message"]

CHART = "polarize_chart"
"""The app's chart element's component name (``ui.charts.NAME``)."""
VIEWPORT_KEY = "_viewport"
"""The end of the viewport element's widget id: its key (``ui.viewport.KEY``)."""


@dataclass
class Wire:
    """Counts of what the server sent one tab, message by message (``frame``).

    Attributes
    ----------
    full_runs, fragment_runs : int
        Runs of the page's script, and runs of fragments alone.
    ended : int
        Runs (of either kind) the server said had ended (``script_finished``): what a run sent
        came before.
    sent, referenced : int
        Figures sent whole, and figures sent as a reference to one the tab holds (not drafts).
    drafts : int
        Drafts' figures sent (a comparison's panels drawn as their runs come back: ``ui.blocks.draw_draft``),
        which the whole view's figure then replaces.
    held, held_bytes : int
        Figures sent whole to be held for a press (``ui.charts.hold``), and their messages' size.
    bytes : int
        The figures' messages' size, sent whole (not the held ones).
    running : tuple of str
        The fragments the current run runs (none: the page's script).
    strays : list of str
        Deltas a fragment run sent for another fragment (one drawn inside it), by place and fragment.
    measures : list of str
        The measures the page posted (``ui.viewport``'s element state, JSON), each asking for a
        run of the view's fragment, in order (``asked``: the tab's frames to the server).
    """

    full_runs: int = 0
    fragment_runs: int = 0
    ended: int = 0
    sent: int = 0
    referenced: int = 0
    drafts: int = 0
    held: int = 0
    held_bytes: int = 0
    bytes: int = 0
    hashes: set[str] = field(default_factory=set)
    running: tuple[str, ...] = ()
    strays: list[str] = field(default_factory=list)
    measures: list[str] = field(default_factory=list)

    def frame(self, payload: Any) -> None:
        """Count one frame the server sent (text frames are not Streamlit's messages)."""
        msg = sent_message(payload)
        if msg is None:
            return
        kind, drawn = msg.WhichOneof("type"), drawn_figure(msg)
        if kind == "new_session":
            self.running = tuple(msg.metadata.run.fragment_ids)
            if self.running:
                self.fragment_runs += 1
            else:
                self.full_runs += 1
        elif kind == "script_finished":
            self.ended += 1
        elif kind == "delta" and self.running and msg.delta.fragment_id not in self.running:
            self.strays.append(f"{list(msg.metadata.delta_path)} of fragment {msg.delta.fragment_id or None}")
        elif drawn == "draft":
            self.drafts += 1
        elif drawn == "held":
            self.held += 1
            self.held_bytes += len(payload)
        elif drawn == "figure":
            self.sent += 1
            self.bytes += len(payload)
            self.hashes.add(msg.hash)
        elif kind == "ref_hash" and msg.ref_hash in self.hashes:
            self.referenced += 1

    def asked(self, payload: Any) -> None:
        """Read one frame the tab sent: a rerun asked for a fragment with a measure posted."""
        if isinstance(payload, str):
            return
        msg = BackMsg.FromString(payload)
        if msg.WhichOneof("type") != "rerun_script" or not msg.rerun_script.fragment_id:
            return
        for widget in msg.rerun_script.widget_states.widgets:
            if widget.id.endswith(VIEWPORT_KEY) and widget.WhichOneof("value") == "json_value":
                if not self.measures or self.measures[-1] != widget.json_value:
                    self.measures.append(widget.json_value)

    def counts(self) -> tuple[int, int, int, int, int]:
        """``(full_runs, fragment_runs, sent, referenced, bytes)`` so far."""
        return self.full_runs, self.fragment_runs, self.sent, self.referenced, self.bytes


def _element_id(element: Any) -> str:
    """The id of a figure's element (its key is in it): the app's chart element's, or Streamlit's chart's."""
    kind = element.WhichOneof("type")
    return element.bidi_component.id if kind == "bidi_component" else element.plotly_chart.id


def sent_message(payload: Any) -> Any:
    """The ``ForwardMsg`` of a frame the server sent, None for a text frame (not Streamlit's message)."""
    return None if isinstance(payload, str) else ForwardMsg.FromString(payload)


def drawn_figure(msg: Any) -> str:
    """What a ``ForwardMsg`` draws: ``"draft"`` (a comparison's draft, keyed with ``DRAFT`` by
    ``ui.blocks.draw_draft``), ``"figure"`` (any other figure: ``figure_element``), ``"held"`` (no
    figure drawn, but one held for a press: ``held_element``), else ``""``."""
    if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
        return ""
    element = msg.delta.new_element
    if held_element(element):
        return "held"
    if not figure_element(element):
        return ""
    return "draft" if f"_{DRAFT}" in _element_id(element) else "figure"


def frame_kind(payload: Any) -> str | None:
    """What a frame the server sent is: ``"run"`` or ``"fragment"`` (a script run starts), ``"draft"``,
    ``"held"`` or ``"figure"`` (``drawn_figure``), ``"finished"`` (a run ended), ``""`` (anything else);
    None for a text frame."""
    msg = sent_message(payload)
    if msg is None:
        return None
    kind = msg.WhichOneof("type")
    if kind == "new_session":
        return "fragment" if msg.metadata.run.fragment_ids else "run"
    return drawn_figure(msg) or ("finished" if kind == "script_finished" else "")


def figure_element(element: Any) -> bool:
    """Whether a ``new_element`` (an ``Element`` message) draws a figure: the app's chart element with a
    figure in it (not the one that only loads plotly.js, nor one holding a figure out of sight,
    ``held_element``), or Streamlit's own chart."""
    kind = element.WhichOneof("type")
    if kind == "bidi_component":
        chart = element.bidi_component
        return (chart.component_name == CHART and chart.WhichOneof("data") == "bytes" and b"\n" in chart.bytes
                and not held_element(element))
    return kind == "plotly_chart"


def held_element(element: Any) -> bool:
    """Whether a ``new_element`` is the app's chart element holding a chart's next figure for a press,
    out of sight (``ui.charts.hold``: keyed ``<chart>`` + ``HELD``): it draws nothing."""
    return (element.WhichOneof("type") == "bidi_component" and element.bidi_component.component_name == CHART
            and element.bidi_component.id.endswith(HELD))


def listen(page: Any) -> Wire:
    """A ``Wire`` counting what the server sends ``page`` (a Playwright page, before it opens the app)."""
    wire = Wire()
    def watch(socket: Any) -> None:
        socket.on("framereceived", wire.frame)
        socket.on("framesent", wire.asked)

    page.on("websocket", watch)
    return wire


@dataclass
class Journal:
    """What passed on one tab's websockets, in order, each with its seconds since the journal began, for
    a failed wait to say what ran (``journal``): a socket opened or closed, a rerun the tab asked for
    (of the page, or of a fragment, and the widgets that triggered it), a run that began (the page's,
    or a fragment's), an alert it drew (a ``st.success`` or ``st.error``, its text) and how it ended.
    """

    events: list[str] = field(default_factory=list)
    began: float = field(default_factory=time.monotonic)

    def note(self, what: str) -> None:
        self.events.append(f"{time.monotonic() - self.began:.2f} s {what}")

    def received(self, payload: Any) -> None:
        msg = sent_message(payload)
        kind = msg.WhichOneof("type") if msg is not None else None
        if kind == "new_session":
            fragments = list(msg.metadata.run.fragment_ids)
            self.note(f"run of fragment(s) {fragments}" if fragments else "run of the page")
        elif kind == "script_finished":
            self.note(f"run ended: {ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)}")
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element" \
                and msg.delta.new_element.WhichOneof("type") == "alert":
            body = msg.delta.new_element.alert.body[:80]
            self.note(f"alert in fragment {msg.delta.fragment_id or None}: {body!r}")

    def sent(self, payload: Any) -> None:
        if isinstance(payload, str):
            return
        msg = BackMsg.FromString(payload)
        if msg.WhichOneof("type") != "rerun_script":
            return
        rerun = msg.rerun_script
        triggers = [w.id[-40:] for w in rerun.widget_states.widgets
                    if w.WhichOneof("value") == "trigger_value" and w.trigger_value]
        self.note(f"asked a rerun of {'fragment ' + rerun.fragment_id if rerun.fragment_id else 'the page'}"
                  f" (triggered: {triggers})")

    def last(self, count: int = 40) -> str:
        """The last ``count`` events, in a line."""
        return "; ".join(self.events[-count:])


def journal(page: Any) -> Journal:
    """A ``Journal`` of ``page``'s websockets (a Playwright page, before it opens the app)."""
    kept = Journal()

    def watch(socket: Any) -> None:
        kept.note(f"socket opened {urlsplit(socket.url).path}")
        socket.on("framereceived", kept.received)
        socket.on("framesent", kept.sent)
        socket.on("close", lambda _: kept.note("socket closed"))

    page.on("websocket", watch)
    return kept


@dataclass
class DashWire:
    """What a Dash server sent one tab, counted as ``Wire`` counts a Streamlit tab's: each callback it
    ran (an answer of ``/_dash-update-component``) is a run, each ``figure`` in an answer a figure sent.

    Attributes
    ----------
    answers : list
        The callbacks' answers (Playwright responses), read when counted.
    measures : list
        Always empty: a Dash page posts no measure (``Wire.measures``).
    held, held_bytes : int
        Always 0: a Dash page holds no figure ahead (``Wire.held``).
    ended : int
        The callbacks answered (``Wire.ended``): a callback ends as it answers.
    """

    answers: list[Any] = field(default_factory=list)
    measures: list[str] = field(default_factory=list)
    held: int = 0
    held_bytes: int = 0
    _read: list[tuple[int, int]] = field(default_factory=list)

    @property
    def ended(self) -> int:
        return self.counts()[0]

    def counts(self) -> tuple[int, int, int, int, int]:
        """``(callbacks, 0, figures sent, 0, bytes of the answers that carried one)`` so far."""
        for answer in self.answers[len(self._read):]:
            body = answer.body()
            outputs = json.loads(body).get("response", {}).values()
            figures = sum("figure" in output for output in outputs)
            self._read.append((figures, len(body) if figures else 0))
        return (len(self._read), 0, sum(f for f, _ in self._read), 0, sum(b for _, b in self._read))


def listen_dash(page: Any) -> DashWire:
    """A ``DashWire`` counting what a Dash server sends ``page`` (before it opens the app)."""
    wire = DashWire()

    def answered(response: Any) -> None:
        if urlsplit(response.url).path.endswith("/_dash-update-component") and response.ok:
            wire.answers.append(response)

    page.on("response", answered)
    return wire
