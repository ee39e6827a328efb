"""plotly.js, the app's own copy: its address, its files and the route that serves it gzipped once.

plotly.js is the one the ``plotly`` package ships (its version matches the figures' schema), served
by the app itself: ``publish`` copies it, named by its version, into the ``static/`` folder beside
``app.py``, which Streamlit serves at ``app/static/`` (``server.enableStaticServing``), and writes it
gzipped beside it, once per server (``PACKED``). A tab loads it once, by its address (``ADDRESS``), and
the browser keeps it, V8 its compiled code too: a new version is a new name.

Streamlit gzips every answer of ``app/static/`` anew for each request: plotly.js's 4.8 MB cost the
server 0.14 CPU-s of every new browser's first visit (as much as the rest of the visit, on the thread
that sends every session's messages). ``route`` answers that address instead, in the app's server
(``server.py``, an ``st.App``): the packed file as it is, with ``Content-Encoding: gzip`` (1.5 MB), or
the plain file to a client that takes no gzip. Served by ``streamlit run app.py``, the address is
Streamlit's static file, compressed for each browser.

No Streamlit here: ``server.py`` imports this before any session runs.
"""

from __future__ import annotations

import gzip
import logging
import os
import re
import shutil
import threading
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from plotly.offline import get_plotlyjs_version
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

__all__ = ["ADDRESS", "PACKED", "PLOTLY_JS", "STATIC", "publish", "route", "takes_gzip"]

PLOTLY_JS = f"plotly-{get_plotlyjs_version()}.min.js"
"""plotly.js's name in the app's static folder: its version in it, so that a cached copy is never stale."""
STATIC = Path(__file__).resolve().parents[1] / "static"
"""The folder Streamlit serves at ``app/static/``: ``static/`` beside the main script, ``app.py``."""
ADDRESS = f"app/static/{PLOTLY_JS}"
"""plotly.js's address, relative to the app's (a page's address is one name under it)."""
PACKED = f"{PLOTLY_JS}.gz"
"""plotly.js gzipped once by ``publish``: its name in ``STATIC``, which ``route`` sends as it is."""

_LOG = logging.getLogger(__name__)
_TYPE = "text/javascript; charset=utf-8"
# A coding a client refuses is listed with q=0 (RFC 9110 12.5.3): "gzip;q=0", "gzip; q=0.000".
_REFUSED = re.compile(r"^\s*q\s*=\s*0(\.0*)?\s*$")


def publish(folder: Path = STATIC) -> Path | None:
    """Copy the ``plotly`` package's ``plotly.min.js`` into ``folder`` as ``PLOTLY_JS``, and gzipped beside
    it (``PACKED``), unless they are there.

    Done once per server (``ui.app``, ``route``'s first request) and when the image is built (the
    Dockerfile: the app's folder is read-only to its user). A folder that cannot be written is said in
    the server's log; the page's figures then say that plotly.js could not be loaded.

    Returns
    -------
    Path or None
        The file, or None when it could not be written.
    """
    source = resources.files("plotly") / "package_data" / "plotly.min.js"
    target = folder / PLOTLY_JS
    packed = folder / PACKED
    with resources.as_file(source) as path:
        fresh = target.is_file() and target.stat().st_size == path.stat().st_size
        try:
            if not fresh:
                folder.mkdir(exist_ok=True)
                _written(target, lambda partial: shutil.copy2(path, partial))
        except OSError as exc:
            _LOG.error("polarize: plotly.js could not be written to %s (%s): figures will not draw",
                       target, exc)
            return None
        try:
            if not fresh or not packed.is_file():
                _written(packed, lambda partial: _pack(path, partial))
        except OSError as exc:  # the route sends the plain file instead, which Streamlit compresses for each
            _LOG.warning("polarize: plotly.js could not be packed into %s (%s)", packed, exc)
    return target


def _pack(source: Path, target: Path) -> None:
    """``source`` gzipped into ``target``, with its times (a browser's heuristic freshness grows with a
    file's age)."""
    target.write_bytes(gzip.compress(source.read_bytes(), 9, mtime=0))
    shutil.copystat(source, target)


def _written(target: Path, write: Callable[[Path], Any]) -> None:
    """``write(partial)`` a file aside, then rename it ``target``: a server reading it meanwhile never
    sees half a file, and two writers (a session's first run and the route, in two threads) never share
    the file aside."""
    partial = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}")
    write(partial)
    os.replace(partial, target)


def takes_gzip(accept_encoding: str) -> bool:
    """Whether a request's ``Accept-Encoding`` takes gzip (named, or ``*``, and not refused with q=0)."""
    for item in accept_encoding.split(","):
        coding, _, weight = item.partition(";")
        if coding.strip().lower() in ("gzip", "x-gzip", "*") and not _REFUSED.match(weight):
            return True
    return False


def route(folder: Path = STATIC) -> Route:
    """The route answering ``/ADDRESS`` (GET and HEAD) in the app's server: the packed file as it is
    (``Content-Encoding: gzip``: Streamlit's compression passes it by) to a client that takes gzip, else
    the plain file; published first if it is not there yet."""

    async def plotly_js(request: Request) -> Response:
        plain, packed = folder / PLOTLY_JS, folder / PACKED
        # Off the event loop, which sends every session's messages: packing takes about a second.
        if not plain.is_file() and await run_in_threadpool(publish, folder) is None:
            return PlainTextResponse("plotly.js could not be written: see the server's log", status_code=503)
        nosniff = {"X-Content-Type-Options": "nosniff"}
        if packed.is_file() and takes_gzip(request.headers.get("accept-encoding", "")):
            return FileResponse(packed, media_type=_TYPE,
                                headers={**nosniff, "Content-Encoding": "gzip", "Vary": "Accept-Encoding"})
        return FileResponse(plain, media_type=_TYPE, headers=nosniff)  # Streamlit's middleware adds Vary

    return Route(f"/{ADDRESS}", plotly_js, methods=["GET", "HEAD"])
