"""The results folder: one Parquet file per finished task, written atomically, and a manifest.

``task-<key>.parquet`` holds a task's rows; ``traj-<key>.parquet`` its saved
series (written first, so that a task's rows mean its series are there too).
A file is written under a temporary name and renamed, so a stopped sweep
leaves whole files or none; a file that cannot be read (truncated by a dying
disk or a copy) is ignored, and its cells are run again. ``sweep.json``
records the sweep, the package's version and the environment; a folder is resumed
only by the sweep whose digest it records (``write_manifest``).

Anything in a folder may be hostile: only regular files are opened (a FIFO named
``task-x.parquet`` or ``sweep.json`` is passed over, never waited on), a manifest
longer than ``MOST_MANIFEST_BYTES`` or nested too deep is unreadable, and files whose
columns do not fit together are a ``ConfigError`` naming the file.
"""

from __future__ import annotations

import json
import os
import platform
import stat
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

from polarize.fields import ConfigError, shown
from polarize.sweeps.spec import Sweep, parse_sweep
from polarize.textfile import read_text

__all__ = ["MANIFEST", "finished_hashes", "manifest_sweep", "read_manifest", "result_files", "write_manifest",
           "write_task"]

MANIFEST = "sweep.json"
_PREFIX, _TRAJ = "task-", "traj-"
MOST_MANIFEST_BYTES = 16 << 20
"""A manifest is a sweep (its axes at most ``spec.MAX_AXIS`` values) and a few facts: anything longer is
not one."""


def _atomic_write(path: Path, write) -> None:
    """Call ``write(temporary_path)``, then rename it to ``path`` (same folder, so the rename is atomic)."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_task(folder: Path, key: str, rows, trajectories=None) -> Path:
    """Write a task's rows (and series) as Parquet files; returns the rows' file."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    if trajectories is not None:
        _atomic_write(folder / f"{_TRAJ}{key}.parquet", lambda p: pq.write_table(trajectories, p))
    path = folder / f"{_PREFIX}{key}.parquet"
    _atomic_write(path, lambda p: pq.write_table(rows, p))
    return path


def _regular(path: Path) -> bool:
    """Whether ``path`` is a regular file (a FIFO, a device or a folder would block or mislead a read)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _readable(path: Path) -> bool:
    import pyarrow.parquet as pq

    if not _regular(path):
        return False
    try:
        pq.ParquetFile(path).metadata  # noqa: B018 (reading the footer is the check)
    except Exception:  # truncated or not Parquet at all: as if it were not there
        return False
    return True


def result_files(folder: Path, *, series: bool = False) -> list[Path]:
    """The readable result files in ``folder`` (rows, or with ``series`` the saved series), sorted."""
    prefix = _TRAJ if series else _PREFIX
    return [p for p in sorted(Path(folder).glob(f"{prefix}*.parquet")) if _readable(p)]


def finished_hashes(folder: Path) -> set[str]:
    """The ``hash`` of every cell with a row in a readable file."""
    import pyarrow.parquet as pq

    done: set[str] = set()
    for path in result_files(folder):
        try:
            done.update(pq.read_table(path, columns=["hash"]).column("hash").to_pylist())
        except Exception:  # a footer that reads but data that does not: redo its cells
            continue
    return done


def _environment() -> dict:
    versions = {}
    for name in ("polarize", "numpy", "scipy", "pyarrow", "dask", "distributed", "duckdb"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {"python": sys.version.split()[0], "platform": platform.platform(), "machine": platform.node(),
            "cpus": os.cpu_count(), "versions": versions}


def read_manifest(folder: Path) -> dict | None:
    """The manifest of a results folder, or None when there is none (or it cannot be read: not a regular
    file, too long, not JSON, nested too deep)."""
    try:  # bounded, and a FIFO is not waited on
        data = json.loads(read_text(Path(folder) / MANIFEST, field=MANIFEST, most=MOST_MANIFEST_BYTES))
    except (ConfigError, OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _holds_anything(folder: Path) -> bool:
    try:
        return any(True for _ in folder.iterdir())
    except OSError:
        return False


def manifest_sweep(manifest: dict | None) -> Sweep:
    """The sweep a results folder's manifest records, validated as a sweep file is (``parse_sweep``).

    Its owner may have edited it: a wrong value raises ``ConfigError`` naming the field, never
    reaches a figure.
    """
    if manifest is None:
        raise ConfigError(MANIFEST, "is missing or is not a JSON object")
    if "sweep" not in manifest:
        raise ConfigError("sweep", f"is missing from {MANIFEST}")
    return parse_sweep(manifest["sweep"], allow_large=True)


def _same_sweep(manifest: dict, sweep: Sweep) -> bool:
    """Whether ``manifest`` records ``sweep``: by its digest, or (a folder written by an earlier version,
    whose stored form hashed differently) by the sweep it records, read as this version reads it."""
    if manifest.get("digest") == sweep.digest():
        return True
    try:
        return manifest_sweep(manifest).digest() == sweep.digest()
    except ConfigError:
        return False


def write_manifest(folder: Path, sweep: Sweep, **extra) -> None:
    """Create ``folder`` if needed and record the sweep there; refuse a folder holding another sweep."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError("output", f"cannot create {folder}: {exc.strerror or exc}") from None
    old = read_manifest(folder)
    if old is not None and not _same_sweep(old, sweep):
        raise ConfigError("output", f"{folder} holds the results of another sweep ({shown(old.get('name'))}, "
                          "or one whose digest it does not record); give another folder")
    if old is None and _holds_anything(folder):  # a missing or damaged manifest: its owner is unknown
        raise ConfigError("output", f"{folder} is not empty and has no readable {MANIFEST}, so it may hold "
                          "another sweep's results; give an empty or new folder")
    data = {"name": sweep.name, "kind": sweep.kind, "digest": sweep.digest(), "sweep": sweep.to_dict(),
            "cells": sweep.n_cells, "environment": _environment(), "updated": time.strftime(
                "%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **extra}
    if old is not None and "created" in old:
        data["created"] = old["created"]
    data.setdefault("created", data["updated"])
    try:
        text = json.dumps(data, indent=1, default=str)
        _atomic_write(folder / MANIFEST, lambda p: Path(p).write_text(text))
    except OSError as exc:
        raise ConfigError("output", f"cannot write {folder / MANIFEST}: {exc.strerror or exc}") from None
