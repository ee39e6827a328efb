"""What one client can take of a hosted server (issue 43), with real processes: the app
(``streamlit run server.py``) and nginx from the shipped template in front of it (``support.proxy``).

A session's uploads are held to ``ui.uploads.PER_SESSION`` bytes of the replica's memory, however
many it makes up (1,900 uploads of 1 MB took a replica from 252 MB to 2.2 GB); one client address
holds at most the proxy's ``CONNECTIONS_PER_CLIENT`` connections, while another address still gets
in (479 idle websockets from one address filled nginx's 1,024 connections).
"""

from __future__ import annotations

import asyncio
import time
import urllib.request

import pytest
import websockets
from support.browser import AppServer
from support.proxy import NginxProxy, proxy_env
from support.stream_client import held_session, upload

from ui.uploads import PER_SESSION


@pytest.fixture(scope="module")
def proxied():
    """The app behind the proxy: (the replica, the proxy)."""
    with AppServer() as server, NginxProxy([f"127.0.0.1:{server.port}"]) as proxy:
        yield server, proxy


def _held_uploads(base: str) -> float:
    """Bytes of uploaded files the server at ``base`` holds (Streamlit's own metric)."""
    with urllib.request.urlopen(base + "/_stcore/metrics", timeout=30) as reply:
        text = reply.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if "UploadedFileManager" in line)


def test_one_sessions_uploads_hold_at_most_the_cap(proxied):
    server, proxy = proxied
    assert _held_uploads(server.url) == 0
    with held_session(proxy.url) as session:
        # Made-up file ids, each taken (204): the session's oldest files are dropped, not its new one.
        assert {upload(proxy.url, session, bytes(1_000_000)) for _ in range(12)} == {204}
        deadline = time.monotonic() + 60
        while (held := _held_uploads(server.url)) == 0:  # the metric is cached for a few seconds
            assert time.monotonic() < deadline, "the uploads never showed in the server's metric"
            time.sleep(0.5)
    assert 1_000_000 <= held <= PER_SESSION


def _stream(proxy: NginxProxy) -> str:
    return proxy.url.replace("http", "ws", 1) + "/_stcore/stream"


async def _connect(proxy: NginxProxy, source: str):
    return await websockets.connect(_stream(proxy), subprotocols=["streamlit"], ping_interval=None,
                                    open_timeout=60, local_addr=(source, 0))


def test_one_address_past_its_limit_is_refused_while_another_gets_in(proxied):
    _, proxy = proxied
    limit = int(proxy_env()["CONNECTIONS_PER_CLIENT"])

    async def probe() -> tuple[int | None, bool]:
        held = [await _connect(proxy, "127.0.0.2") for _ in range(limit)]  # idle websockets
        try:
            try:
                extra = await _connect(proxy, "127.0.0.2")
            except websockets.InvalidStatus as refused:
                status = refused.response.status_code
            else:
                status = None
                await extra.close()
            other = await _connect(proxy, "127.0.0.3")
            await other.close()
            return status, True
        finally:
            for socket in held:
                await socket.close()

    status, other_in = asyncio.run(probe())
    assert status == 429 and other_in


def test_the_cap_keeps_a_sessions_newest_file():
    """The drop order, on Streamlit's own in-memory store (the real processes above check the bytes)."""
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.uploaded_file_manager import UploadedFileRec

    from ui.uploads import put_on

    manager = MemoryUploadedFileManager("/_stcore/upload_file")
    manager.add_file("early", UploadedFileRec("before", "a", "x", bytes(3)))
    cap = put_on(manager, limit=10)
    for number in range(5):
        manager.add_file("one", UploadedFileRec(f"f{number}", "deck.json", "application/json", bytes(4)))
    manager.add_file("early", UploadedFileRec("big", "b", "x", bytes(9)))
    kept = [rec.file_id for rec in manager.get_files("one", [f"f{n}" for n in range(5)])]
    assert kept == ["f3", "f4"]  # 8 bytes of 10: the three oldest dropped
    assert [rec.file_id for rec in manager.get_files("early", ["before", "big"])] == ["big"]
    manager.add_file("alone", UploadedFileRec("huge", "c", "x", bytes(50)))  # past the limit alone: kept
    assert len(manager.get_files("alone", ["huge"])) == 1
    manager.remove_session_files("one")
    assert manager.get_files("one", ["f4"]) == [] and "one" not in cap.sizes
