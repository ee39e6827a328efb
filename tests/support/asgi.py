"""An ASGI app asked one request as a server asks it (a scope, ``receive`` and ``send``), no server and
no HTTP client: ``ask(app, path, headers)`` gives the status, the headers and the body."""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["ask"]


def ask(app: Any, path: str, headers: dict[str, str] | None = None,
        method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """``app`` asked ``method path`` with ``headers``: its status, its headers (names in lower case) and
    its body, the parts joined."""
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "root_path": "",
             "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
             "query_string": b"", "http_version": "1.1", "scheme": "http", "server": ("127.0.0.1", 80),
             "client": ("127.0.0.1", 5000)}
    sent: list[dict] = []
    asked: list[bool] = []

    async def receive() -> dict:  # the request, then nothing (the client waits): no disconnect
        if asked:
            await asyncio.Event().wait()
        asked.append(True)
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], {k.decode().lower(): v.decode() for k, v in start["headers"]}, body
