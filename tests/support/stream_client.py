"""A minimal Streamlit client over the app's websocket (used by test_deploy.py and benchmarks/load.py).

It speaks the protocol a browser tab speaks (protobuf ``BackMsg`` up, ``ForwardMsg`` down on
``/_stcore/stream``) but draws nothing, so that many sessions measure the server rather than
the browsers. ``open_page`` opens one page by its address, as a new tab opening a link would,
and reports when its figures arrived.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

__all__ = ["PageLoad", "open_page"]


@dataclass
class PageLoad:
    """What one session received.

    Attributes
    ----------
    link : str
        Path and query that was opened (``/rates?n=4``).
    figures : int
        Plotly charts received.
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
    """

    link: str
    figures: int = 0
    first_figure: float | None = None
    finished: float | None = None
    errors: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    downloads: list[str] = field(default_factory=list)


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
        if what == "plotly_chart":
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
    elif kind == "script_finished" and (load.figures or load.errors):
        load.finished = time.perf_counter() - start
        return True
    return False


async def open_page(base: str, link: str, timeout: float = 120.0,
                    headers: dict[str, str] | None = None) -> PageLoad:
    """Open ``link`` (path and query) on the server at ``base`` (``http://127.0.0.1:8501``).

    Returns when the page's run has drawn a figure (or an error) and finished, or after
    ``timeout`` seconds (``finished`` is then None). ``headers`` go with the websocket's request
    (a proxy's affinity cookie, as a browser sends it).
    """
    load = PageLoad(link)
    url = base.replace("http", "ws", 1) + "/_stcore/stream"
    start = time.perf_counter()
    try:
        # No keep-alive pings: a browser sends none, and on a saturated host the client's own
        # ping deadline would end sessions the server is still serving.
        async with websockets.connect(url, subprotocols=["streamlit"], max_size=None,
                                      open_timeout=timeout, ping_interval=None,
                                      additional_headers=headers) as socket:
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
