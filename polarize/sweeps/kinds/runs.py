"""The ``runs`` sweep kind: one ``simulate`` per cell, one row per run.

Its row: the winner, ``1 - max s``, the entropy and loss at the end, ``t_end``, the status, the
switches, the naive prediction; with ``options.trajectories`` also the saved series
(``traj-*.parquet``).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from polarize.config import Experiment
from polarize.fields import flag, integer, real
from polarize.integrate import simulate
from polarize.sweeps.cell import Cell
from polarize.sweeps.kinds.base import setting
from polarize.sweeps.kinds.experiment import POLARIZED_BELOW, ExperimentKind, naive

__all__ = ["KIND", "Runs", "RunsSettings"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunsSettings:
    """``[options]`` of a runs sweep: cells per task, the threshold for polarized, saved series or not."""

    cells_per_task: int = setting(1)
    polarized_below: float = setting(POLARIZED_BELOW)
    trajectories: bool = setting(False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cells_per_task",
                           integer("options.cells_per_task", self.cells_per_task, 1, 10_000))
        below = real("options.polarized_below", self.polarized_below, 0, 1, open_low=True, open_high=True)
        object.__setattr__(self, "polarized_below", below)
        object.__setattr__(self, "trajectories", flag("options.trajectories", self.trajectories))


class Runs(ExperimentKind):
    name = "runs"
    label = "runs"
    Settings = RunsSettings
    schema: ClassVar[Mapping[str, str]] = MappingProxyType({
        "winner": "int64", "one_minus_max": "double", "entropy_end": "double", "loss_end": "double",
        "t_end": "double", "polarized": "bool", "naive_winner": "int64", "naive_holds": "bool",
        "switches": "int64", "n_evaluations": "int64", "note": "string"})
    measures: ClassVar[Mapping[str, str]] = MappingProxyType(
        {"one_minus_max": "1 - max s at the end", "entropy_end": "entropy of s at the end (nats)"})

    def cells_per_task(self, settings: RunsSettings) -> int:
        return settings.cells_per_task

    def run_cell(self, cell: Cell, settings: RunsSettings, base: Mapping[str, Any]):
        e = Experiment.from_json(cell.config)
        with warnings.catch_warnings():  # a stepper's complaints end in the result's message, in words
            warnings.simplefilter("ignore")
            r = simulate(e)
        guess = naive(r.experiment)
        row = {"status": r.status.value, "message": r.message, "note": r.note,
               "winner": None if r.dead else r.winner,
               "one_minus_max": float(r.one_minus_max[-1]), "entropy_end": float(r.entropy[-1]),
               "loss_end": float(r.loss[-1]), "t_end": float(r.t[-1]),
               "polarized": bool(r.one_minus_max[-1] < settings.polarized_below),
               "naive_winner": guess, "naive_holds": None if guess < 0 or r.dead else guess == r.winner,
               "switches": r.switches, "n_evaluations": r.n_evaluations}
        path = None
        if settings.trajectories:
            path = {"hash": cell.hash, "t": r.t, "s": r.s, "one_minus_max": r.one_minus_max,
                    "entropy": r.entropy, "loss": r.loss}
        return [row], path

    def figures(self, frame, sweep, choices, words, *, narrow=False):
        from polarize.plots.sweeps import spread_figure
        from polarize.sweeps.summary import pick_axes, spread_table

        x, colour = pick_axes(frame, sweep.axes)
        if x is None:
            return ()
        y = choices.get("measure") if choices.get("measure") in self.measures else next(iter(self.measures))
        table = spread_table(frame, y, [a for a in (x, colour) if a])
        return (("sweeps-spread", spread_figure(table, x, colour, self.measures[y]),
                 f"{self.measures[y]}: the median over seeds (and the other axes) per {words(x)}, "
                 "quartiles as bars, least to largest as the band."),)


KIND = Runs()
