"""A sweep is data: a TOML file naming a kind, a base and a grid, read and checked before anything runs.

::

    kind = "runs"              # runs | ensemble | sinks
    [base]
    preset = "default"         # or any Experiment field; for sinks: size and SinksConfig fields
    horizon = 1000
    [grid]
    normalizer = ["softmax", "l2"]
    seed = {from = 0, to = 2}  # whole numbers, both ends included; {from, to, count, log} for floats
    [ensemble]                 # ensemble only
    starts = 1000              # random starts per cell, a(0) = scale * randn(n)
    chunk = 100000             # at most this many starts per task
    rows = "cells"             # one row per task with counts, or "starts": one row per start
    [options]
    cells_per_task = 1         # runs only: cells run one after another in one task
    polarized_below = 0.01     # a run is polarized when 1 - max s ends below this
    trajectories = false       # runs only: also keep the saved series, in traj-*.parquet

Every error is a ``ConfigError`` naming the key (``grid.seed``, ``base.horizon``) and the value.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from polarize.config import Experiment
from polarize.fields import ConfigError, shown
from polarize.presets import get_preset
from polarize.sinks.config import SIZES, VARIANTS, SinksConfig, variant_config
from polarize.textfile import read_text

__all__ = ["KINDS", "MAX_CELLS", "MAX_FILE_BYTES", "Sweep", "parse_sweep", "read_sweep"]

KINDS = ("runs", "ensemble", "sinks")
MAX_CELLS = 100_000
"""Cells a sweep may have without ``allow_large`` (``--allow-large``): grid cells, and result cells
(an ensemble's chunks of starts, each a task of its own)."""
MAX_CELLS_LARGE = 10**7
"""Cells a sweep may have even with ``allow_large`` (the client holds every cell's config)."""
MAX_STARTS = 10**9
"""Random starts a whole ensemble sweep may have without ``allow_large``."""
MAX_FILE_BYTES = 1 << 20
"""A sweep file is a few lines: anything larger is refused unread."""
MAX_AXIS = 10_000
"""Values on one grid axis, even with ``allow_large`` (a range is never materialized beyond it): each
value is checked alone (``_check_values``), so a results folder's manifest validates in about a second."""
_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}")
"""A sweep's name may become a folder's name: no separators, no leading dot."""
_SECTIONS = {"kind", "name", "base", "grid", "ensemble", "options"}
_OPTIONS = {"cells_per_task": 1, "polarized_below": 0.01, "trajectories": False}
_ENSEMBLE = {"starts": 1000, "chunk": 100_000, "rows": "cells", "scale": 1.0, "draw_seed": 0}
_EXPERIMENT_FIELDS = {f.name for f in dataclasses.fields(Experiment)}
_ARRAYS = {"a0", "V0", "target", "X", "y"}
_SINKS_FIELDS = {f.name for f in dataclasses.fields(SinksConfig)} - {"attention", "normalized"}
_SINKS_AXES = {"variant", "seed", "size"} | _SINKS_FIELDS


@dataclass(frozen=True, kw_only=True)
class Sweep:
    """A validated sweep: the base, the grid's axes in order, and the kind's options.

    Attributes
    ----------
    kind : {"runs", "ensemble", "sinks"}
    name : str
    base : dict
        Fields shared by every cell (``preset`` among them for runs and ensembles).
    grid : tuple of (str, tuple)
        Each axis's key and its values, in the file's order; cells are their product.
    ensemble : dict
        ``starts``, ``chunk``, ``rows``, ``scale``, ``draw_seed`` (ensemble only).
    options : dict
        ``cells_per_task``, ``polarized_below``, ``trajectories``.
    """

    kind: str
    name: str
    base: dict
    grid: tuple
    ensemble: dict
    options: dict

    @property
    def axes(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.grid)

    @property
    def n_cells(self) -> int:
        """Grid cells: the product of the axes' lengths."""
        return math.prod(len(values) for _, values in self.grid)

    @property
    def n_results(self) -> int:
        """Result cells: a grid cell each, for an ensemble one per chunk of starts (``tasks.make_cells``)."""
        if self.kind != "ensemble":
            return self.n_cells
        return self.n_cells * -(-self.ensemble["starts"] // self.ensemble["chunk"])

    @property
    def n_tasks(self) -> int:
        """Tasks of the whole sweep (``tasks.make_tasks``): ``cells_per_task`` cells each for runs."""
        size = self.options["cells_per_task"] if self.kind == "runs" else 1
        return -(-self.n_results // size)

    def cells(self):
        """Each cell's grid values as a dict, in row-major order of the axes."""
        keys = self.axes
        for values in itertools.product(*(v for _, v in self.grid)):
            yield dict(zip(keys, values, strict=True))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: what ``parse_sweep`` reads back (ranges written out)."""
        return {"kind": self.kind, "name": self.name, "base": self.base,
                "grid": {key: list(values) for key, values in self.grid},
                "ensemble": self.ensemble, "options": self.options}

    def digest(self) -> str:
        """A hash of everything that decides the results (not the name)."""
        data = {k: v for k, v in self.to_dict().items() if k != "name"}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def config(self, cell: dict[str, Any]) -> Experiment | SinksConfig:
        """The config of one cell (a ``ConfigError`` if that combination is invalid)."""
        if self.kind == "sinks":
            return _sinks_config(self.base, cell)
        fields = {**{k: v for k, v in self.base.items() if k != "preset"},
                  **{k: v for k, v in cell.items() if k != "scale"}}
        return get_preset(self.base.get("preset", "default")).with_changes(**fields)


def read_sweep(path: Path, *, allow_large: bool = False) -> Sweep:
    """Read and validate a sweep file (``ConfigError`` naming the key and value at fault)."""
    path = Path(path)
    text = read_text(path, field="sweep", most=MAX_FILE_BYTES, larger="; a sweep is a few lines")
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("sweep", f"{path} is not valid TOML: {exc}") from None
    stem = path.stem if _NAME.fullmatch(path.stem) else "sweep"
    return parse_sweep(table, default_name=stem, allow_large=allow_large)


def parse_sweep(table: dict[str, Any], *, default_name: str = "sweep", allow_large: bool = False) -> Sweep:
    """Validate a parsed sweep (a dict as ``tomllib`` gives it) into a ``Sweep``."""
    if not isinstance(table, dict):
        raise ConfigError("sweep", "must be a table of keys")
    unknown = sorted(set(table) - _SECTIONS)
    if unknown:
        raise ConfigError(unknown[0], f"is not a key of a sweep (known: {', '.join(sorted(_SECTIONS))})")
    kind = table.get("kind")
    if kind not in KINDS:
        raise ConfigError("kind", f"must be one of {', '.join(KINDS)}; got {shown(kind)}")
    name = table.get("name", default_name)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError("name", "must be 1-64 letters, digits, '-', '_' or '.', not starting with '.'; "
                          f"got {shown(name)}")
    base = _section(table, "base")
    grid = _grid(kind, _section(table, "grid"), allow_large)
    ensemble = _settings(table, "ensemble", _ENSEMBLE, kind == "ensemble")
    options = _settings(table, "options", _OPTIONS, True)
    sweep = Sweep(kind=kind, name=name, base=_base(kind, base), grid=grid, ensemble=ensemble,
                  options=options)
    _check_settings(sweep, allow_large)
    _check_values(sweep)
    return sweep


def _section(table: dict[str, Any], key: str) -> dict[str, Any]:
    value = table.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(key, f"must be a table ([{key}]); got {shown(value)}")
    return value


def _settings(table: dict[str, Any], key: str, defaults: dict[str, Any], allowed: bool) -> dict[str, Any]:
    given = _section(table, key)
    # A stored sweep (``Sweep.to_dict``, a results folder's sweep.json) lists every section with its
    # defaults: the ensemble's defaults are no setting of a runs sweep.
    if not allowed and any(name not in defaults or value != defaults[name] for name, value in given.items()):
        raise ConfigError(key, f"applies to ensemble sweeps only, not to kind {table['kind']!r}")
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise ConfigError(f"{key}.{unknown[0]}", f"is not a setting (known: {', '.join(defaults)})")
    out = dict(defaults)
    for name, value in given.items():
        want = type(defaults[name])
        ok = isinstance(value, want) or (want is float and isinstance(value, int))
        if not ok or (want is int and isinstance(value, bool)):
            words = {int: "a whole number", float: "a number", str: "text", bool: "true or false"}[want]
            raise ConfigError(f"{key}.{name}", f"must be {words}; got {shown(value)}")
        out[name] = float(value) if want is float else value
    return out


def _base(kind: str, base: dict[str, Any]) -> dict[str, Any]:
    known = _SINKS_FIELDS | {"size", "variant"} if kind == "sinks" else _EXPERIMENT_FIELDS | {"preset"}
    for key, value in base.items():
        if key not in known:
            raise ConfigError(f"base.{key}", f"is not a field of a {kind} cell")
        if key in _ARRAYS:
            raise ConfigError(f"base.{key}", "explicit arrays are not sweep settings; use a preset or seeds")
        _scalar(f"base.{key}", value)
    return dict(base)


def _scalar(key: str, value: Any) -> Any:
    if not isinstance(value, (bool, int, float, str)):
        raise ConfigError(key, f"must be a number, text or true/false; got {shown(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(key, f"must be finite; got {value!r}")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**63 - 1:
        raise ConfigError(key, f"is too large; got {shown(value)}")
    return value


def _grid(kind: str, grid: dict[str, Any], allow_large: bool) -> tuple:
    if not grid:
        raise ConfigError("grid", "is empty: give at least one key with a list of values")
    known = {"runs": _EXPERIMENT_FIELDS - _ARRAYS, "ensemble": (_EXPERIMENT_FIELDS - _ARRAYS) | {"scale"},
             "sinks": _SINKS_AXES}[kind]
    lengths = {}
    for key, values in grid.items():
        if key not in known:
            raise ConfigError(f"grid.{key}", f"is not a field that a {kind} sweep can vary")
        lengths[key] = _axis_length(f"grid.{key}", values)
    cells = math.prod(lengths.values())
    most = MAX_CELLS_LARGE if allow_large else MAX_CELLS
    if cells > most:
        hint = "split it into several sweeps" if allow_large else "pass --allow-large to run it"
        raise ConfigError("grid", f"has {cells:,} cells, more than {most:,}; {hint}")
    return tuple((key, _axis(f"grid.{key}", values)) for key, values in grid.items())


def _axis_length(key: str, values: Any) -> int:
    """How many values an axis has, without building it (a range may be huge)."""
    if isinstance(values, list):
        if not values:
            raise ConfigError(key, "is an empty list: give at least one value")
        length = len(values)
    elif isinstance(values, dict):
        length = _range_length(key, values)
    else:
        raise ConfigError(key, f"must be a list of values or a range {{from, to}}; got {shown(values)}")
    if length > MAX_AXIS:
        raise ConfigError(key, f"has {length:,} values, more than {MAX_AXIS:,} on one axis")
    return length


def _range_length(key: str, spec: dict[str, Any]) -> int:
    unknown = sorted(set(spec) - {"from", "to", "count", "log"})
    if unknown or "from" not in spec or "to" not in spec:
        raise ConfigError(key, "a range is {from = A, to = B} (whole numbers) or {from, to, count, log}")
    low, high = spec["from"], spec["to"]
    for end, value in (("from", low), ("to", high)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigError(f"{key}.{end}", f"must be a finite number; got {shown(value)}")
    if high < low:
        raise ConfigError(key, f"runs backwards: from {low} to {high}")
    if "count" in spec:
        count = spec["count"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ConfigError(f"{key}.count", f"must be a whole number >= 1; got {shown(count)}")
        if spec.get("log", False) not in (True, False) or (spec.get("log") and low <= 0):
            raise ConfigError(f"{key}.log", "must be true or false, and true needs from > 0")
        return count
    if not (isinstance(low, int) and isinstance(high, int)):
        raise ConfigError(key, "a range without count is of whole numbers; give count for floats")
    return high - low + 1


def _axis(key: str, values: Any) -> tuple:
    if isinstance(values, list):
        out = tuple(_scalar(f"{key}[{i}]", v) for i, v in enumerate(values))
        kinds = {type(v) for v in out}
        if kinds == {int, float}:  # one column type in every file: 1 and 2.5 are both floats
            out = tuple(float(v) for v in out)
        elif len(kinds) > 1:
            raise ConfigError(key, f"mixes {' and '.join(sorted(t.__name__ for t in kinds))} values")
        if len(set(map(repr, out))) != len(out):
            raise ConfigError(key, "lists a value twice (its cells would be the same run)")
        return out
    low, high = values["from"], values["to"]
    if "count" not in values:
        return tuple(range(low, high + 1))
    with np.errstate(all="ignore"):
        points = np.geomspace(low, high, values["count"]) if values.get("log") else np.linspace(
            low, high, values["count"])
    if not np.all(np.isfinite(points)):
        raise ConfigError(key, f"a range from {low:g} to {high:g} is too wide: its steps overflow the floats")
    out = tuple(float(f"{p:.12g}") for p in points)
    if len(set(out)) != len(out):
        raise ConfigError(key, f"a range of {len(out)} values from {low:g} to {high:g} gives a value twice "
                          "(its cells would be the same run): widen it or lower its count")
    return out


def _check_settings(sweep: Sweep, allow_large: bool) -> None:
    options, ensemble = sweep.options, sweep.ensemble
    if not 1 <= options["cells_per_task"] <= 10_000:
        raise ConfigError("options.cells_per_task", f"must be in [1, 10000]; got {options['cells_per_task']}")
    if not 0 < options["polarized_below"] < 1:
        raise ConfigError("options.polarized_below", f"must be in (0, 1); got {options['polarized_below']}")
    if sweep.kind != "runs" and options["trajectories"]:
        raise ConfigError("options.trajectories", "applies to runs sweeps only")
    if sweep.kind != "ensemble":
        return
    if ensemble["rows"] not in ("cells", "starts"):
        raise ConfigError("ensemble.rows", f"must be 'cells' or 'starts'; got {shown(ensemble['rows'])}")
    if not 1 <= ensemble["starts"] <= 10**12:
        raise ConfigError("ensemble.starts", f"must be in [1, 1e12]; got {ensemble['starts']}")
    if not 1 <= ensemble["chunk"] <= 100_000:
        raise ConfigError("ensemble.chunk", f"must be in [1, 100000]; got {ensemble['chunk']}")
    if not 0 < ensemble["scale"] <= 1e3:
        raise ConfigError("ensemble.scale", f"must be in (0, 1000]; got {ensemble['scale']}")
    if not 0 <= ensemble["draw_seed"] < 2**32:
        raise ConfigError("ensemble.draw_seed", f"must be in [0, 2^32); got {ensemble['draw_seed']}")
    most = MAX_CELLS_LARGE if allow_large else MAX_CELLS
    if sweep.n_results > most:  # before any cell is built: each chunk of starts is a cell and a task
        hint = "even with --allow-large" if allow_large else "without --allow-large"
        raise ConfigError("ensemble.chunk", f"{sweep.n_cells:,} grid cells of {ensemble['starts']:,} starts "
                          f"in chunks of {ensemble['chunk']:,} make {sweep.n_results:,} result cells "
                          f"(tasks), more than {most:,} {hint}; raise chunk")
    total = ensemble["starts"] * sweep.n_cells
    if total > MAX_STARTS and not allow_large:
        raise ConfigError("ensemble.starts", f"{total:,} starts in all exceed {MAX_STARTS:,}; "
                          "pass --allow-large to run them")


def _check_values(sweep: Sweep) -> None:
    """Each base value and each grid value alone, so that a typo is named before anything runs.

    Combinations that fail (the tied model with d != n, say) are left to their cells, which record
    the error as a row.
    """
    first = next(sweep.cells())
    try:
        sweep.config(first)
    except ConfigError as exc:
        if exc.field not in first:
            where = "preset" if exc.field == "preset" else exc.field
            raise ConfigError(f"base.{where}", str(exc).split(": ", 1)[1]) from None
    for key, values in sweep.grid:
        for value in values:
            if key == "scale" and (isinstance(value, bool) or not isinstance(value, (int, float))
                                   or not 0 < value <= 1e3):
                raise ConfigError("grid.scale", f"must be numbers in (0, 1000]; got {shown(value)}")
            try:
                sweep.config({**first, key: value})
            except ConfigError as exc:
                if exc.field == key or (key in ("variant", "size") and exc.field in ("variant", "size")):
                    raise ConfigError(f"grid.{key}", f"value {shown(value)}: {str(exc).split(': ', 1)[1]}"
                                      ) from None


def _sinks_config(base: dict[str, Any], cell: dict[str, Any]) -> SinksConfig:
    merged = {**base, **cell}
    size = merged.pop("size", "classroom")
    variant = merged.pop("variant", "softmax")
    seed = merged.pop("seed", 0)
    if variant not in VARIANTS:
        raise ConfigError("variant", f"must be one of {', '.join(VARIANTS)}; got {shown(variant)}")
    if size not in SIZES:
        raise ConfigError("size", f"must be one of {', '.join(SIZES)}; got {shown(size)}")
    config = variant_config(size, variant, seed=seed)
    return dataclasses.replace(config, **merged) if merged else config
