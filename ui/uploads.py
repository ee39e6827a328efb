"""What one session's uploads may hold in a server's memory: at most ``PER_SESSION`` bytes.

Streamlit keeps every uploaded file in memory (its ``UploadedFileManager``) until the file is
deleted or the session ends, under any file id the session makes up: 1,900 uploads of 1 MB took a
replica from 252 MB to 2.2 GB. Its options cap one file (``server.maxUploadSize``) and nothing
else, so ``cap_uploads`` wraps the server's manager: past ``PER_SESSION``, a session's oldest
files are dropped as a new one comes. A visitor's upload is one file (a deck), the newest: it is
never the one dropped.

Behind the proxy (``deploy/nginx``) a session's upload can reach a replica that does not hold the
session: a browser that returns no affinity cookie (a course page's cross-site iframe), or one whose
replica died and came back while its websocket stayed on the other. Streamlit answers that with 400
("Invalid session_id"), which nginx cannot pass on; ``find_sessions_elsewhere`` makes it 404, on
which the proxy asks the next replica.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

__all__ = ["PER_SESSION", "cap_uploads", "find_sessions_elsewhere", "put_on"]

PER_SESSION = 4 * 2**20
"""Bytes of uploaded files one session may hold (four deck files at Streamlit's 1 MB per file)."""


class _Cap:
    """The sizes of each session's files, oldest first, beside the manager's own store, whose
    ``add_file``, ``remove_file`` and ``remove_session_files`` it takes over."""

    def __init__(self, manager: Any, limit: int) -> None:
        self.manager, self.limit = manager, limit
        self.lock = threading.Lock()
        self.add, self.remove = manager.add_file, manager.remove_file
        self.forget = manager.remove_session_files
        self.sizes: dict[str, OrderedDict[str, int]] = {}

    def adopt(self) -> None:
        """Count the files taken before the cap was put on (Streamlit's in-memory store, ``file_storage``)."""
        held = dict(getattr(self.manager, "file_storage", {}))
        with self.lock:
            for session, files in held.items():
                known = self.sizes.setdefault(session, OrderedDict())
                for file_id, rec in dict(files).items():
                    known.setdefault(file_id, len(rec.data))
        for session in held:
            self._trim(session)

    def _trim(self, session_id: str) -> None:
        """Drop the session's oldest files while it holds more than the limit (never its newest)."""
        with self.lock:
            files = self.sizes.get(session_id, OrderedDict())
            dropped = []
            while len(files) > 1 and sum(files.values()) > self.limit:
                dropped.append(files.popitem(last=False)[0])
        for file_id in dropped:
            self.remove(session_id, file_id)

    def add_file(self, session_id: str, file: Any) -> None:
        self.add(session_id, file)
        with self.lock:
            files = self.sizes.setdefault(session_id, OrderedDict())
            files.pop(file.file_id, None)
            files[file.file_id] = len(file.data)
        self._trim(session_id)

    def remove_file(self, session_id: str, file_id: str) -> None:
        self.remove(session_id, file_id)
        with self.lock:
            self.sizes.get(session_id, OrderedDict()).pop(file_id, None)

    def remove_session_files(self, session_id: str) -> None:
        self.forget(session_id)
        with self.lock:
            self.sizes.pop(session_id, None)


_PUTTING = threading.Lock()


def put_on(manager: Any, limit: int) -> _Cap:
    """Hold each session of ``manager`` (an ``UploadedFileManager``) to ``limit`` bytes: the cap that
    now takes its files, the files it holds already counted."""
    cap = _Cap(manager, limit)
    manager.add_file, manager.remove_file = cap.add_file, cap.remove_file
    manager.remove_session_files = cap.remove_session_files
    manager.polarize_cap = cap
    cap.adopt()
    return cap


def cap_uploads(limit: int = PER_SESSION) -> None:
    """Hold each session of this server to ``limit`` bytes of uploaded files (put on once a server;
    a later call costs an uncontended lock)."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return
    manager = Runtime.instance().uploaded_file_mgr
    with _PUTTING:
        if getattr(manager, "polarize_cap", None) is None:
            put_on(manager, limit)


def find_sessions_elsewhere() -> None:
    """An upload to a session this server does not hold is answered 404 (put on once a server).

    Streamlit's upload route asks ``Runtime.is_active_session`` first, and answers False with 400;
    only that route asks it. A 404 says the session is not here, and the proxy tries the next replica.
    """
    from starlette.exceptions import HTTPException
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return
    runtime = Runtime.instance()
    with _PUTTING:
        if getattr(runtime, "polarize_elsewhere", False):
            return
        held = runtime.is_active_session

        def is_active_session(session_id: str) -> bool:
            if held(session_id):
                return True
            raise HTTPException(status_code=404, detail="No such session on this replica")

        runtime.is_active_session, runtime.polarize_elsewhere = is_active_session, True
