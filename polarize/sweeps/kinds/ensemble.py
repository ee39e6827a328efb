"""The ``ensemble`` sweep kind: random starts of each cell's experiment, stacked (``simulate_many``).

A grid cell's ``ensemble.starts`` starts ``a(0) = scale * randn(n)`` are split into chunks of at most
``ensemble.chunk``, each a result cell and a task of its own; a chunk writes one row with counts, or
(``ensemble.rows = "starts"``) one row per start.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from polarize.config import Experiment
from polarize.ensemble import simulate_many
from polarize.fields import ConfigError, choice, integer, real
from polarize.status import Status
from polarize.sweeps.cell import Cell, digest
from polarize.sweeps.kinds.base import setting
from polarize.sweeps.kinds.experiment import POLARIZED_BELOW, ExperimentKind, naive

__all__ = ["KIND", "Ensemble", "EnsembleSettings", "MAX_STARTS", "ensemble_starts"]

MAX_STARTS = 10**9
"""Random starts a whole ensemble sweep may have without ``allow_large``."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class EnsembleSettings:
    """``[ensemble]`` (starts per cell, chunk, rows, scale, draw seed) and ``options.polarized_below``."""

    starts: int = setting(1000, "ensemble")
    chunk: int = setting(100_000, "ensemble")
    rows: str = setting("cells", "ensemble")
    scale: float = setting(1.0, "ensemble")
    draw_seed: int = setting(0, "ensemble")
    polarized_below: float = setting(POLARIZED_BELOW)

    def __post_init__(self) -> None:
        checked = {"starts": integer("ensemble.starts", self.starts, 1, 10**12),
                   "chunk": integer("ensemble.chunk", self.chunk, 1, 100_000),
                   "rows": choice("ensemble.rows", self.rows, ("cells", "starts")),
                   "scale": real("ensemble.scale", self.scale, 0, 1e3, open_low=True),
                   "draw_seed": integer("ensemble.draw_seed", self.draw_seed, 0, 2**32 - 1),
                   "polarized_below": real("options.polarized_below", self.polarized_below, 0, 1,
                                           open_low=True, open_high=True)}
        for name, value in checked.items():
            object.__setattr__(self, name, value)


def ensemble_starts(n: int, lo: int, hi: int, scale: float, draw_seed: int) -> np.ndarray:
    """Starts ``lo .. hi - 1`` of every ensemble cell: ``scale * randn(n)``, the same noise in every cell."""
    return scale * np.random.default_rng([draw_seed, lo]).standard_normal((hi - lo, n))


class Ensemble(ExperimentKind):
    name = "ensemble"
    label = "ensembles of random starts"
    unit = "starts"
    Settings = EnsembleSettings
    axes = ExperimentKind.axes | {"scale"}
    drops = frozenset({"scale"})
    seeds_cluster = True  # the starts of one seed share its V0 (and target)
    samples = True
    schema: ClassVar[Mapping[str, str]] = MappingProxyType({
        "start": "int64", "n_starts": "int64", "n_finished": "int64", "n_polarized": "int64",
        "n_naive": "int64", "winner": "int64", "one_minus_max": "double", "mean_one_minus_max": "double",
        "polarized": "bool", "naive_holds": "bool", "naive_winner": "int64", "alone": "int64",
        "wins": "list<int64>"})

    def check_axis(self, key: str, value: Any) -> None:
        if key == "scale":  # the one grid key that is no Experiment field
            real("grid.scale", value, 0, 1e3, open_low=True)

    def results_per_cell(self, settings: EnsembleSettings) -> int:
        return -(-settings.starts // settings.chunk)

    def check(self, sweep, *, allow_large: bool) -> None:
        from polarize.sweeps.spec import MAX_CELLS, MAX_CELLS_LARGE

        s = sweep.settings
        most = MAX_CELLS_LARGE if allow_large else MAX_CELLS
        if sweep.n_results > most:  # before any cell is built: each chunk of starts is a cell and a task
            hint = "even with --allow-large" if allow_large else "without --allow-large"
            raise ConfigError("ensemble.chunk", f"{sweep.n_cells:,} grid cells of {s.starts:,} starts "
                              f"in chunks of {s.chunk:,} make {sweep.n_results:,} result cells "
                              f"(tasks), more than {most:,} {hint}; raise chunk")
        total = s.starts * sweep.n_cells
        if total > MAX_STARTS and not allow_large:
            raise ConfigError("ensemble.starts", f"{total:,} starts in all exceed {MAX_STARTS:,}; "
                              "pass --allow-large to run them")

    def split(self, index: int, params: dict, config: str | None, error: str | None, ident: Any,
              settings: EnsembleSettings) -> Iterator[Cell]:
        s = settings
        scale = params.get("scale", s.scale)
        for k in range(math.ceil(s.starts / s.chunk)):
            lo, hi = k * s.chunk, min(s.starts, (k + 1) * s.chunk)
            yield Cell(index=index, params={**params, "scale": scale}, config=config, error=error,
                       chunk=(lo, hi), hash=digest("ensemble", ident, scale, s.draw_seed, s.rows, lo, hi))

    def run_cell(self, cell: Cell, settings: EnsembleSettings, base: Mapping[str, Any]):
        e = Experiment.from_json(cell.config).resolved()
        lo, hi = cell.chunk
        starts = ensemble_starts(e.n, lo, hi, cell.params["scale"], settings.draw_seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = simulate_many(dataclasses.replace(e, a0=None), starts)
        guess = naive(e)
        polarized = out.one_minus_max < settings.polarized_below
        if settings.rows == "starts":
            return [{"status": (Status.FINISHED if ok else Status.STOPPED).value, "message": "",
                     "start": lo + k, "winner": int(w), "one_minus_max": float(m), "polarized": bool(p),
                     "naive_winner": guess, "naive_holds": bool(w == guess)}
                    for k, (w, m, p, ok) in enumerate(zip(out.winner, out.one_minus_max, polarized,
                                                          out.finished, strict=True))], None
        status = Status.FINISHED if out.finished.all() else Status.STOPPED
        message = "" if status.ok else f"{int((~out.finished).sum())} starts stopped early"
        return [{"status": status.value, "message": message, "start": lo, "n_starts": hi - lo,
                 "n_finished": int(out.finished.sum()), "n_polarized": int(polarized.sum()),
                 "n_naive": int((out.winner == guess).sum()), "naive_winner": guess, "alone": out.alone,
                 "mean_one_minus_max": float(out.one_minus_max.mean()),  # over the chunk's starts
                 "wins": np.bincount(out.winner, minlength=e.n).tolist()}], None

    def counts(self, ok, what: str):
        if "n_starts" in ok and ok["n_starts"].notna().all():  # one row per chunk: its counts
            column = {"polarized": "n_polarized", "naive_holds": "n_naive"}[what]
            return ok, ok[column].astype(float), ok["n_starts"].astype(float)
        return super().counts(ok, what)


KIND = Ensemble()
