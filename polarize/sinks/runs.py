"""Run records as JSON files, and the runs shipped with the package (NumPy only).

A record is what ``polarize.sinks.train.train`` returns plus ``size``. The
shipped ones live in ``polarize/sinks/data`` and are read without the extra.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from polarize.fields import ConfigError
from polarize.serialize import finite, strict_dumps
from polarize.sinks.config import SinksConfig
from polarize.sinks.metrics import sink_heads

__all__ = ["RunInfo", "check_run", "read_run", "run_info", "run_json", "shipped_runs", "write_run"]

REQUIRED = ("config", "accuracy", "sink_scores", "bos_norms", "history", "maps", "map_tokens")


@dataclass(frozen=True, kw_only=True)
class RunInfo:
    """One line about a run: where it is and what it shows."""

    name: str
    size: str
    variant: str
    seed: int
    accuracy: float
    top_sink: float
    sinks: int


def run_json(record: Mapping[str, Any]) -> str:
    """A record as compact JSON, its ``config`` a dict or a ``SinksConfig`` (``read_run`` reads it back)."""
    config = record["config"]
    record = {**record, "config": config.to_dict() if isinstance(config, SinksConfig) else config}
    return strict_dumps(finite(record), separators=(",", ":"))


def write_run(record: dict[str, Any], path: Path) -> None:
    """Write a record as compact JSON (``OSError`` if the path cannot be written)."""
    Path(path).write_text(run_json(record))


def read_run(path: Path) -> dict[str, Any]:
    """Read and check a record; a missing key or a bad config is a ``ConfigError``."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError("run", f"cannot read {path}: {exc}") from None
    return check_run(data, str(path))


def check_run(data: Any, where: str = "the run") -> dict[str, Any]:
    """A record (as JSON gives it) checked, its ``config`` made a ``SinksConfig`` (``ConfigError`` if bad)."""
    if not isinstance(data, dict):
        raise ConfigError("run", f"{where} is not a JSON object")
    for key in REQUIRED:
        if key not in data:
            raise ConfigError(key, f"missing from {where}")
    return {**data, "config": SinksConfig.from_dict(data["config"])}


def run_info(name: str, record: dict[str, Any]) -> RunInfo:
    """Summary of a record read by ``read_run``."""
    config: SinksConfig = record["config"]
    scores = np.asarray(record["sink_scores"])
    return RunInfo(name=name, size=str(record.get("size", "custom")), variant=config.variant,
                   seed=config.seed, accuracy=float(record["accuracy"]), top_sink=float(scores.max()),
                   sinks=int(sink_heads(scores, record["accuracy"]).sum()))


def shipped_runs() -> dict[str, Path]:
    """Shipped run files by name (file stem), sorted."""
    folder = resources.files("polarize.sinks") / "data"
    if not folder.is_dir():
        return {}
    return {Path(item.name).stem: Path(str(item)) for item in sorted(folder.iterdir(), key=lambda i: i.name)
            if item.name.endswith(".json")}
