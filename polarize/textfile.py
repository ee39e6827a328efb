"""Reading a user's text file (an experiment's JSON, a sweep's TOML): bounded, and refused in words.

A file named on the command line may be anything: a FIFO or a terminal that blocks for ever,
a device or a folder, gigabytes, or bytes that are not text. ``read_text`` reads at most
a cap's worth, and only from a regular file or standard input (``-``); every other case is
a ``ConfigError`` naming the field the file stands for.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from polarize.fields import ConfigError

__all__ = ["read_text"]


def read_text(path: Path | str, *, field: str, most: int, larger: str = "") -> str:
    """The UTF-8 text of ``path`` (``-``: standard input), at most ``most`` bytes of it.

    Parameters
    ----------
    path : path or str
        A regular file, or ``-`` for standard input.
    field : str
        What the file is, named by every error (``"config"``, ``"sweep"``).
    most : int
        The largest file accepted, in bytes.
    larger : str
        Said after "``path`` is larger than ``most`` bytes": why such a file is not expected.

    Raises
    ------
    ConfigError
        Naming ``field``: the file cannot be read, is not a regular file, is too large or is not UTF-8.
    """
    try:
        data = sys.stdin.buffer.read(most + 1) if str(path) == "-" else _read_regular(path, most + 1, field)
    except OSError as exc:
        raise ConfigError(field, f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > most:
        raise ConfigError(field, f"{path} is larger than {most} bytes{larger}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(field, f"{path} is not UTF-8 text (byte {exc.start})") from None


def _read_regular(path: Path | str, most: int, field: str) -> bytes:
    """At most ``most`` bytes of the regular file ``path``; anything else is a ``ConfigError``."""
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, for ever.
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise ConfigError(field, f"{path} is not a regular file (give a file, or - for standard input)")
        return file.read(most)
