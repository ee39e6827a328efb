"""The window's width in the viewport's cookie before the first run (``ui.window_cookie``): the server's
middleware puts the script in every HTML page, Streamlit's own page as Streamlit serves it (a file,
gzipped on a page's address), and passes everything else as it is.

Called here as Starlette calls it (an ASGI scope), around Starlette's own file responses and gzip
middleware; tests/browser/test_window_cookie_browser.py runs the script in Chromium against the real
server, and tests/browser/test_fragments_browser.py counts the runs it saves."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import streamlit
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import FileResponse, HTMLResponse, Response, StreamingResponse
from starlette.routing import Route
from support.asgi import ask

from polarize.plots.display import STEP
from ui import window_cookie
from ui.viewport import COOKIE, KEPT

INDEX = Path(streamlit.__file__).parent / "static" / "index.html"
"""Streamlit's own page, the one every address of the app answers with."""
PAGE = INDEX.read_bytes()
TAG = window_cookie.tag()


def _app(*, gzipped: bool = False) -> Starlette:
    """Streamlit's page at ``/`` and a page's address (a file, as Streamlit's static files send it), and
    what else a server sends, behind the middleware (and Starlette's gzip when ``gzipped``)."""
    big = b"<html><head></head><body>" + b"x" * (2 << 20) + b"</body></html>"
    routes = [
        Route("/", lambda request: FileResponse(INDEX)),
        Route("/normalizers", lambda request: FileResponse(INDEX)),
        Route("/bundle.js", lambda request: FileResponse(INDEX, media_type="text/javascript")),
        Route("/missing", lambda request: HTMLResponse(PAGE.decode(), status_code=404)),
        Route("/headless", lambda request: HTMLResponse("<p>no head</p>" * 100)),
        Route("/big", lambda request: StreamingResponse(iter([big[:1 << 20], big[1 << 20:]]),
                                                        media_type="text/html")),
        Route("/unchanged", lambda request: Response(status_code=304, headers={"etag": '"x"'})),
    ]
    middleware = [Middleware(window_cookie.WindowCookie)]
    if gzipped:
        middleware.append(Middleware(GZipMiddleware, minimum_size=500))
    return Starlette(routes=routes, middleware=middleware)


@pytest.mark.parametrize(("gzipped", "path"), [(False, "/"), (True, "/normalizers")])
def test_a_page_gets_the_script_after_its_viewport_tag_before_its_bundle(gzipped, path):
    """Streamlit's page, plain or gzipped as Streamlit sends a page's address: sent plain with the script
    once, after the viewport's meta tag (a phone's window is its width only after it) and before the
    bundle's script (which opens the session); the rest byte for byte. The file's validators go (they
    are not this page's)."""
    status, headers, body = ask(_app(gzipped=gzipped), path, {"accept-encoding": "gzip"})
    assert status == 200 and "content-encoding" not in headers
    assert int(headers["content-length"]) == len(body) == len(PAGE) + len(TAG)
    assert "etag" not in headers and "last-modified" not in headers
    assert body.count(TAG) == 1 and body.replace(TAG, b"") == PAGE
    where = body.index(TAG)
    assert body.index(b'name="viewport"') < where < body.index(b"</head>")
    assert where > body.index(b'<script type="module"')  # a module runs after the page is read: later


def test_what_is_not_a_whole_html_page_passes_as_it_is():
    """A script, an error page, an answer without a body, a page without a head or larger than 1 MiB:
    as the app sent it."""
    app = _app()
    status, headers, body = ask(app, "/bundle.js")
    assert (status, body) == (200, PAGE) and "etag" in headers
    status, _, body = ask(app, "/missing")
    assert (status, body) == (404, PAGE)
    assert ask(app, "/unchanged")[:2] == (304, {"etag": '"x"'})
    assert ask(app, "/headless")[2] == b"<p>no head</p>" * 100
    status, headers, body = ask(app, "/big")
    assert status == 200 and TAG not in body and len(body) == (2 << 20) + 39


def test_a_head_request_is_told_no_length():
    """HEAD: the page's length with the script is not known without its body, so none is said."""
    status, headers, body = ask(_app(), "/", method="HEAD")
    assert (status, body) == (200, b"")
    assert not {"content-length", "etag", "last-modified"} & set(headers)


def test_the_script_is_told_the_viewport_s_cookie_and_step():
    """The script's arguments are the viewport element's (``ui.viewport``): the cookie it reads and how it
    is kept, widths rounded down to the same step. Its comments are not sent (they are whole lines), and
    nothing in it ends the tag."""
    text = TAG.decode()
    args = json.loads(re.search(r"\}\)\((\{.*?\})\);</script>$", text)[1])
    assert args == {"cookie": COOKIE, "kept": KEPT, "step": STEP}
    assert "//" not in text.replace("://", "") and text.count("</script") == 1
    assert window_cookie.with_tag(b"<p>no head</p>") is None
    assert window_cookie.with_tag(b"<HEAD></HEAD >", b"<s>") == b"<HEAD><s></HEAD >"
