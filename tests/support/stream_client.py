"""A minimal Streamlit client over the app's websocket (used by test_deploy.py and benchmarks/load.py).

It speaks the protocol a browser tab speaks (protobuf ``BackMsg`` up, ``ForwardMsg`` down on
``/_stcore/stream``) but draws nothing, so that many sessions measure the server rather than
the browsers. ``open_page`` opens one page by its address, as a new tab opening a link would,
and reports when its figures arrived. ``held_session`` keeps a session open and ``upload`` puts a
file into it as the file uploader does (``PUT /_stcore/upload_file/SESSION/FILE``), under any id.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from support.wire import figure_element

__all__ = ["PageLoad", "held_session", "open_page", "student_address", "upload"]


@dataclass
class PageLoad:
    """What one session received.

    Attributes
    ----------
    link : str
        Path and query that was opened (``/rates?n=4``).
    figures : int
        Figures received (``support.wire.figure_element``).
    first_figure : float or None
        Seconds from connecting until the first chart arrived.
    finished : float or None
        Seconds until the run that drew a figure finished (or an error was shown).
    errors : list of str
        Error boxes and exceptions the page showed.
    texts : list of str
        Every Markdown body received (titles, captions, warnings, notices).
    downloads : list of str
        The download buttons' addresses (``/media/...``, served by the session's own server).
    metrics : dict
        Each metric's label -> its value as shown (the Explorer's "Winning token", "Final entropy").
    """

    link: str
    figures: int = 0
    first_figure: float | None = None
    finished: float | None = None
    errors: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    downloads: list[str] = field(default_factory=list)
    metrics: dict[str, str] = field(default_factory=dict)


def _rerun(link: str) -> bytes:
    parts = urlsplit(link)
    message = BackMsg()
    message.rerun_script.query_string = parts.query
    message.rerun_script.page_name = parts.path.strip("/")
    return message.SerializeToString()


def _note(load: PageLoad, message: ForwardMsg, start: float) -> bool:
    """Record one message; whether the page is done (a finished run after a figure or an error)."""
    kind = message.WhichOneof("type")
    if kind == "delta" and message.delta.WhichOneof("type") == "new_element":
        element = message.delta.new_element
        what = element.WhichOneof("type")
        if figure_element(element):
            load.figures += 1
            if load.first_figure is None:
                load.first_figure = time.perf_counter() - start
        elif what == "exception":
            load.errors.append(f"{element.exception.type}: {element.exception.message}")
        elif what == "alert":
            load.texts.append(element.alert.body)
            if element.alert.format == element.alert.ERROR:
                load.errors.append(element.alert.body)
        elif what == "markdown":
            load.texts.append(element.markdown.body)
        elif what == "download_button":
            load.downloads.append(element.download_button.url)
        elif what == "metric":
            load.metrics[element.metric.label] = element.metric.body
    elif kind == "script_finished" and (load.figures or load.errors):
        load.finished = time.perf_counter() - start
        return True
    return False


def student_address(number: int) -> str:
    """A loopback address of its own for client ``number`` (0 to 64,000): as the students of a hall
    reach a proxy from addresses of their own (its limit is per client address)."""
    return f"127.0.{1 + number // 250}.{2 + number % 250}"


async def open_page(base: str, link: str, timeout: float = 120.0,
                    headers: dict[str, str] | None = None, source: str | None = None) -> PageLoad:
    """Open ``link`` (path and query) on the server at ``base`` (``http://127.0.0.1:8501``).

    Returns when the page's run has drawn a figure (or an error) and finished, or after
    ``timeout`` seconds (``finished`` is then None). ``headers`` go with the websocket's request
    (a proxy's affinity cookie, as a browser sends it); ``source``, a local address, is the one it
    connects from (``student_address``).
    """
    load = PageLoad(link)
    url = base.replace("http", "ws", 1) + "/_stcore/stream"
    start = time.perf_counter()
    try:
        # No keep-alive pings: a browser sends none, and on a saturated host the client's own
        # ping deadline would end sessions the server is still serving.
        async with websockets.connect(url, subprotocols=["streamlit"], max_size=None,
                                      open_timeout=timeout, ping_interval=None, additional_headers=headers,
                                      **({"local_addr": (source, 0)} if source else {})) as socket:
            await socket.send(_rerun(link))
            async with asyncio.timeout(timeout):
                async for raw in socket:
                    message = ForwardMsg()
                    message.ParseFromString(raw)
                    if _note(load, message, start):
                        break
    except (TimeoutError, OSError, websockets.WebSocketException) as exc:
        load.errors.append(f"{type(exc).__name__}: {exc}")
    return load


@contextlib.contextmanager
def held_session(base: str, link: str = "/", timeout: float = 120.0) -> Iterator[str]:
    """A session of the server at ``base``, its first run of ``link`` finished, kept open: its id."""
    from websockets.sync.client import connect

    url = base.replace("http", "ws", 1) + "/_stcore/stream"
    with connect(url, subprotocols=["streamlit"], max_size=None, open_timeout=timeout) as socket:
        socket.send(_rerun(link))
        deadline, session_id = time.monotonic() + timeout, None
        while True:
            message = ForwardMsg()
            message.ParseFromString(socket.recv(timeout=max(deadline - time.monotonic(), 0.1)))
            kind = message.WhichOneof("type")
            if kind == "new_session":
                session_id = message.new_session.initialize.session_id
            elif kind == "script_finished" and session_id is not None:
                break
        yield session_id


def upload(base: str, session_id: str, data: bytes, file_id: str | None = None, cookie: str = "") -> int:
    """PUT ``data`` as a file of session ``session_id`` (under ``file_id``, made up when None), with
    the cross-site token a browser sends (and ``cookie``, ``name=value``, if given); the HTTP status."""
    with urllib.request.urlopen(base + "/_stcore/health", timeout=30) as reply:  # sets the token's cookie
        cookies = reply.headers.get_all("Set-Cookie") or []
    (xsrf,) = [c.split(";")[0].split("=", 1)[1] for c in cookies if c.startswith("_streamlit_xsrf=")]
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"deck.json\"\r\n"
            f"Content-Type: application/json\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(
        f"{base}/_stcore/upload_file/{session_id}/{file_id or uuid.uuid4()}", data=body, method="PUT",
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}", "X-Xsrftoken": xsrf,
                 "Cookie": "; ".join(filter(None, [f"_streamlit_xsrf={xsrf}", cookie]))})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status
    except urllib.error.HTTPError as error:
        return error.code
