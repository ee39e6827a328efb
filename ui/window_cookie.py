"""The window's width in the viewport's cookie before the first run: a script in the head of every page
the app's server sends (``WindowCookie``, a middleware of ``server.py``).

A session's first run reads the viewport's cookie (``ui.viewport.COOKIE``, ``st.context.cookies``, sent
when the page opens its session) to fit its figures to the window; before this, a browser's first
visit had none, and a window other than the one the server assumes (a phone, a wide screen) posted its
measure and reran the view's fragment. The script (``viewport_frontend/window_cookie.js``) runs while
the page's head is read, after its viewport meta tag and before Streamlit's bundle, and writes the
window's width into that cookie (keeping one the viewport element wrote in a window as wide): the first
run is fitted to the window, and the page has nothing to post.

Served by ``streamlit run app.py`` (no middleware), or where cookies cannot be written, the page is
measured and posts as before (``ui.viewport``).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from polarize.plots.display import STEP
from ui.viewport import COOKIE, KEPT

__all__ = ["SCRIPT", "WindowCookie", "tag", "with_tag"]

SCRIPT = Path(__file__).parent / "viewport_frontend" / "window_cookie.js"
"""The script's source: what it does, in its comments (not sent)."""

_HEAD_END = re.compile(rb"</head\s*>", re.IGNORECASE)
_LARGEST = 1 << 20
"""A page longer than this (bytes) is sent as it is (Streamlit's is 8 kB)."""
_VALIDATORS = ("etag", "last-modified")


def tag(cookie: str = COOKIE, kept: str = KEPT, step: int = STEP) -> bytes:
    """The ``<script>`` put in a page's head: the script's function without its comment lines, called with
    the cookie's name, how the browser keeps it and the step widths are rounded down to (nothing left in
    the page's globals)."""
    lines = [line for line in SCRIPT.read_text(encoding="utf-8").splitlines()
             if not line.lstrip().startswith("//")]
    source = "\n".join(lines).strip()
    args = json.dumps({"cookie": cookie, "kept": kept, "step": step})
    return f"<script>({source})({args});</script>".encode()


_TAG = tag()


def with_tag(page: bytes, script: bytes = _TAG) -> bytes | None:
    """``page`` (HTML) with ``script`` just before its head's end (after the viewport meta tag, which sets
    the window's width on a phone); None if it has no head's end."""
    end = _HEAD_END.search(page)
    if end is None:
        return None
    return page[:end.start()] + script + page[end.start():]


class WindowCookie:
    """ASGI middleware: every HTML page the app sends (GET, status 200) gets the script (``with_tag``),
    uncompressed; everything else passes as it is.

    The page's validators (``ETag``, ``Last-Modified``) go: they are Streamlit's file's, not this page's,
    and the page is no-cache (8 kB) anyway. A page compressed otherwise than with gzip, without a head's
    end or longer than 1 MiB is sent as it is.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, _Tagging(send, head=scope["method"] == "HEAD"))


class _Tagging:
    """The ``send`` of one request: an HTML page's start held until its body is whole, then both sent
    with the script in."""

    def __init__(self, send: Send, *, head: bool) -> None:
        self.send = send
        self.head = head
        self.start: Message | None = None
        self.body: list[bytes] = []
        self.size = 0

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = Headers(raw=message["headers"])
            if message["status"] == 200 and headers.get("content-type", "").startswith("text/html") \
                    and headers.get("content-encoding", "identity") in ("gzip", "identity"):
                self.start = message
                return
        elif self.start is not None and message["type"] == "http.response.body":
            self.body.append(message.get("body", b""))
            self.size += len(self.body[-1])
            if message.get("more_body", False) and self.size <= _LARGEST:
                return
            await self._flush(more=message.get("more_body", False))
            return
        elif self.start is not None:  # another kind of answer (a file sent by path): as it is
            start, self.start = self.start, None
            await self.send(start)
        await self.send(message)

    async def _flush(self, *, more: bool) -> None:
        start, body = self.start, b"".join(self.body)
        self.start, self.body = None, []
        assert start is not None
        headers = MutableHeaders(raw=list(start["headers"]))
        page = None if more or self.head else _page(body, headers)
        if self.head:  # no body to put the script in: the length is not known
            for name in ("content-length", *_VALIDATORS):
                del headers[name]
        elif page is not None:
            body = page
            for name in ("content-encoding", *_VALIDATORS):
                del headers[name]
            headers["content-length"] = str(len(body))
        await self.send({**start, "headers": headers.raw})
        await self.send({"type": "http.response.body", "body": body, "more_body": more})


def _page(body: bytes, headers: MutableHeaders) -> bytes | None:
    """The page with the script in (uncompressed), or None to send it as it is."""
    try:
        page = gzip.decompress(body) if headers.get("content-encoding") == "gzip" else body
    except (OSError, EOFError):
        return None
    return with_tag(page) if len(page) <= _LARGEST else None
