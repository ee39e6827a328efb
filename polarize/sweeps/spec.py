"""A sweep is data: a TOML file naming a kind, a base and a grid, read and checked before anything runs.

::

    kind = "runs"              # runs | ensemble | sinks (polarize.sweeps.kinds.KINDS)
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

Every error is a ``ConfigError`` naming the key (``grid.seed``, ``base.horizon``) and the value. What
each kind takes (its base, its axes, its settings and their sections) is the kind's
(``polarize.sweeps.kinds``); this module reads the file's shape.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from polarize.fields import ConfigError, shown
from polarize.sweeps.kinds import KINDS, SweepKind
from polarize.textfile import read_text

__all__ = ["MAX_CELLS", "MAX_FILE_BYTES", "Sweep", "parse_sweep", "read_sweep"]

MAX_CELLS = 100_000
"""Cells a sweep may have without ``allow_large`` (``--allow-large``): grid cells, and result cells
(an ensemble's chunks of starts, each a task of its own)."""
MAX_CELLS_LARGE = 10**7
"""Cells a sweep may have even with ``allow_large`` (the client holds every cell's config)."""
MAX_FILE_BYTES = 1 << 20
"""A sweep file is a few lines: anything larger is refused unread."""
MAX_AXIS = 10_000
"""Values on one grid axis, even with ``allow_large`` (a range is never materialized beyond it): each
value is checked alone (``_check_values``), so a results folder's manifest validates in about a second."""
_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}")
"""A sweep's name may become a folder's name: no separators, no leading dot."""
_KEYS = ("kind", "name", "base", "grid")


@dataclass(frozen=True, kw_only=True)
class Sweep:
    """A validated sweep: its kind, the base, the grid's axes in order, and the kind's settings.

    Attributes
    ----------
    kind : str
        A name in ``polarize.sweeps.kinds.KINDS`` (``entry`` is that kind).
    name : str
    base : mapping
        Fields shared by every cell (``preset`` among them for runs and ensembles), read-only.
    grid : tuple of (str, tuple)
        Each axis's key and its values, in the file's order; cells are their product.
    settings : dataclass
        The kind's ``Settings``, frozen (e.g. ``polarized_below``, an ensemble's ``starts``).
    """

    kind: str
    name: str
    base: Mapping[str, Any]
    grid: tuple[tuple[str, tuple], ...]
    settings: Any

    @property
    def entry(self) -> SweepKind:
        """The kind itself (``KINDS[kind]``): it knows the cells, rows and figures."""
        return KINDS[self.kind]

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
        return self.n_cells * self.entry.results_per_cell(self.settings)

    @property
    def n_tasks(self) -> int:
        """Tasks of the whole sweep (``tasks.make_tasks``): the kind's ``cells_per_task`` cells each."""
        return -(-self.n_results // self.entry.cells_per_task(self.settings))

    def cells(self):
        """Each cell's grid values as a dict, in row-major order of the axes."""
        keys = self.axes
        for values in itertools.product(*(v for _, v in self.grid)):
            yield dict(zip(keys, values, strict=True))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: what ``parse_sweep`` reads back (ranges written out, each setting in its section)."""
        sections = {section: {name: getattr(self.settings, name) for name in settings}
                    for section, settings in self.entry.sections().items()}
        return {"kind": self.kind, "name": self.name, "base": dict(self.base),
                "grid": {key: list(values) for key, values in self.grid}, **sections}

    def digest(self) -> str:
        """A hash of everything that decides the results (not the name)."""
        data = {k: v for k, v in self.to_dict().items() if k != "name"}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def config(self, cell: dict[str, Any]) -> Any:
        """The config of one cell (a ``ConfigError`` if that combination is invalid)."""
        return self.entry.config(self.base, cell)


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
    known = {*_KEYS, *(section for kind in KINDS.values() for section in kind.sections())}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(unknown[0], f"is not a key of a sweep (known: {', '.join(sorted(known))})")
    name_of_kind = table.get("kind")
    if not isinstance(name_of_kind, str) or name_of_kind not in KINDS:
        raise ConfigError("kind", f"must be one of {', '.join(KINDS)}; got {shown(name_of_kind)}")
    kind = KINDS[name_of_kind]
    name = table.get("name", default_name)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError("name", "must be 1-64 letters, digits, '-', '_' or '.', not starting with '.'; "
                          f"got {shown(name)}")
    base = _base(kind, _section(table, "base"))
    grid = _grid(kind, _section(table, "grid"), allow_large)
    sweep = Sweep(kind=kind.name, name=name, base=MappingProxyType(base), grid=grid,
                  settings=_settings(kind, table))
    kind.check(sweep, allow_large=allow_large)
    _check_values(sweep)
    return sweep


def _section(table: dict[str, Any], key: str) -> dict[str, Any]:
    value = table.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(key, f"must be a table ([{key}]); got {shown(value)}")
    return value


def _settings(kind: SweepKind, table: dict[str, Any]) -> Any:
    """The kind's ``Settings`` from the file's sections, each error naming ``section.setting``.

    A stored sweep of an earlier version (a results folder's sweep.json) lists every kind's sections
    with their defaults: another kind's setting at its default is no setting of this one.
    """
    own = kind.sections()
    given: dict[str, Any] = {}
    for section in sorted(set(table) - set(_KEYS)):
        for key, value in _section(table, section).items():
            if key in own.get(section, {}):
                given[key] = value
                continue
            owners = [other for other in KINDS.values() if key in other.sections().get(section, {})]
            if any(_same(other.sections()[section][key], value) for other in owners):
                continue
            if owners and section not in own:
                raise ConfigError(section, f"applies to {' or '.join(o.name for o in owners)} sweeps only, "
                                  f"not to kind {kind.name!r}")
            if owners:
                raise ConfigError(f"{section}.{key}", f"applies to {' or '.join(o.name for o in owners)} "
                                  "sweeps only")
            known = ", ".join(own.get(section, {})) or "none"
            raise ConfigError(f"{section}.{key}", f"is not a setting (known: {known})")
    return kind.Settings(**given)


def _same(default: Any, value: Any) -> bool:
    """``value`` is ``default`` (``1`` is ``1.0`` but not ``true``)."""
    return value == default and isinstance(value, bool) == isinstance(default, bool)


def _base(kind: SweepKind, base: dict[str, Any]) -> dict[str, Any]:
    for key, value in base.items():
        kind.check_base(key, value)
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


def _grid(kind: SweepKind, grid: dict[str, Any], allow_large: bool) -> tuple:
    if not grid:
        raise ConfigError("grid", "is empty: give at least one key with a list of values")
    lengths = {}
    for key, values in grid.items():
        if key not in kind.axes:
            raise ConfigError(f"grid.{key}", f"is not a field that a {kind.name} sweep can vary")
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
    kind = sweep.entry
    for key, values in sweep.grid:
        blamed = kind.blamed(key)
        for value in values:
            kind.check_axis(key, value)
            try:
                sweep.config({**first, key: value})
            except ConfigError as exc:
                if exc.field in blamed:
                    raise ConfigError(f"grid.{key}", f"value {shown(value)}: {str(exc).split(': ', 1)[1]}"
                                      ) from None
