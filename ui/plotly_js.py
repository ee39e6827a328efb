"""plotly.js, the app's own copy: its address, its files and the route that serves it gzipped once.

plotly.js is the version the ``plotly`` package ships (its version matches the figures' schema), in its
cartesian bundle (``vendor/plotly-cartesian.min.js``, from npm): the trace types of every figure the
app draws (``TRACES``) in a third of the full bundle's code, which a browser's first visit compiles and
runs in about 0.5 s less of its main thread (1.27 against 0.75 s in Chromium here). While the vendored
bundle is not the package's version (after an upgrade of ``plotly``), the package's own full
``plotly.min.js`` is served instead, and the server's log says so (``vendor/README.md``: how to
replace it).

It is served by the app itself: ``publish`` copies it, named by its bundle and version, into the
``static/`` folder beside ``app.py``, which Streamlit serves at ``app/static/``
(``server.enableStaticServing``), and writes it gzipped beside it, once per server (``PACKED``). A tab
loads it once, by its address (``ADDRESS``), and the browser keeps it, V8 its compiled code too: a new
version is a new name.

Streamlit gzips every answer of ``app/static/`` anew for each request: the full bundle's 4.8 MB cost
the server 0.14 CPU-s of every new browser's first visit (as much as the rest of the visit, on the
thread that sends every session's messages). ``route`` answers that address instead, in the app's
server (``server.py``, an ``st.App``): the packed file as it is, with ``Content-Encoding: gzip`` (0.5
MB for the cartesian bundle), or the plain file to a client that takes no gzip. Served by ``streamlit
run app.py``, the address is Streamlit's static file, compressed for each browser.

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

__all__ = ["ADDRESS", "CARTESIAN", "PACKED", "PLOTLY_JS", "SOURCE", "STATIC", "TRACES", "VENDORED", "VERSION",
           "publish", "route", "takes_gzip", "vendored_version"]

VERSION = get_plotlyjs_version()
"""The plotly.js version the ``plotly`` package ships: the figures' schema."""
VENDORED = Path(__file__).resolve().parent / "vendor" / "plotly-cartesian.min.js"
"""plotly.js's cartesian bundle, from npm (``vendor/README.md``)."""
TRACES = frozenset({"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour",
                    "image", "pie", "scatter", "scatterternary", "violin"})
"""The trace types the cartesian bundle draws (``Plotly.PlotSchema``'s, read in Chromium by
tests/browser/test_browser.py): every figure of the app is made of these (tests/test_plotly_js.py)."""
_BANNER = re.compile(rb"plotly\.js \(cartesian - minified\) v(\d+\.\d+\.\d+\S*)")


def vendored_version(path: Path = VENDORED) -> str | None:
    """The version in the banner of a cartesian bundle at ``path``; None if there is none to read."""
    try:
        with path.open("rb") as file:
            found = _BANNER.search(file.read(512))
    except OSError:
        return None
    return found[1].decode() if found else None


CARTESIAN = vendored_version() == VERSION
"""Whether the cartesian bundle is served: its version is the package's (else the full bundle is)."""
SOURCE = VENDORED if CARTESIAN else resources.files("plotly") / "package_data" / "plotly.min.js"
"""The file served: the cartesian bundle, or the ``plotly`` package's full one."""
PLOTLY_JS = f"plotly-cartesian-{VERSION}.min.js" if CARTESIAN else f"plotly-{VERSION}.min.js"
"""plotly.js's name in the app's static folder: its bundle and version in it, so that a cached copy is
never stale."""
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
    """Copy plotly.js (``SOURCE``) into ``folder`` as ``PLOTLY_JS``, and gzipped beside it (``PACKED``),
    unless they are there.

    Done once per server (``ui.app``, ``route``'s first request) and when the image is built (the
    Dockerfile: the app's folder is read-only to its user). A folder that cannot be written is said in
    the server's log; the page's figures then say that plotly.js could not be loaded.

    Returns
    -------
    Path or None
        The file, or None when it could not be written.
    """
    target = folder / PLOTLY_JS
    packed = folder / PACKED
    with resources.as_file(SOURCE) as path:
        fresh = target.is_file() and target.stat().st_size == path.stat().st_size
        try:
            if not fresh:
                if not CARTESIAN:
                    _LOG.warning("polarize: %s is plotly.js %s, the plotly package's is %s: the full "
                                 "plotly.js is served (ui/vendor/README.md)", VENDORED.name,
                                 vendored_version(), VERSION)
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
