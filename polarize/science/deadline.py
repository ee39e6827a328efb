"""A study of several runs under one wall-clock budget: what it finished, what it cut, what it left out.

A page gives a study (``studies``, the comparison pages, the phase portrait) a
budget just under the runner's hard time limit (``budget.within``), so that a
slow study returns what it has instead of having its worker killed with nothing
to show. The study makes every run through its ``Deadline``: a run started in
time gets the time left and, past it, stops with status ``Status.OUT_OF_TIME``
keeping what it saved (it is *cut*); a run not started before the budget ran
out is *left out*, and so is a part that cannot be cut (an ensemble of starts)
when the time left would not cover it at the pace of the parts before it.
A large ensemble is run so in chunks (``Deadline.ensemble``): the first one
small, to measure the pace, the next sized to fit the time left, so that the
budget running out leaves the starts done and never a worker stopped part-way.
``within_budget`` runs a study so and returns its outcome as a ``Partial``
that says which.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from polarize.budget import WallClock
from polarize.config import Experiment
from polarize.diagnostics import Result
from polarize.ensemble import Ensemble, simulate_many
from polarize.integrate import simulate
from polarize.status import Status

__all__ = ["Deadline", "Partial", "joined", "simulated", "within_budget"]

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True, eq=False)
class Partial:
    """A study's outcome, and what its budget did not let it finish.

    Attributes
    ----------
    outcome : any
        What the study returns (with the runs left out missing from it).
    cut : tuple of str
        The runs stopped at the budget (drawn up to where they got), by their labels.
    left_out : tuple of str
        The runs and parts not started, by their labels.
    reached : tuple of (str, float)
        Each cut run's label and the last time it saved.
    seconds : float
        The budget (inf: none).
    """

    outcome: Any
    cut: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    reached: tuple[tuple[str, float], ...] = ()
    seconds: float = math.inf

    def earliest(self, *labels: str) -> float | None:
        """The earliest last saved time among the cut runs named (all of them when none is), or None."""
        return min((t for label, t in self.reached if not labels or label in labels), default=None)

    @property
    def complete(self) -> bool:
        """Whether every run and part of the study finished within the budget."""
        return not (self.cut or self.left_out)


class Deadline:
    """The wall-clock budget of one study (``seconds``; None: none) and a record of what it cut or left out.

    The clock starts when the deadline is made, in the process that runs the study.
    """

    def __init__(self, seconds: float | None = None):
        self.clock = WallClock(math.inf if seconds is None else seconds)
        self.cut: list[str] = []
        self.left_out: list[str] = []
        self.reached: list[tuple[str, float]] = []
        self.spent, self.units = 0.0, 0  # seconds and units of size taken by the parts made so far

    def allows(self, label: str, needs: float = 0.0) -> bool:
        """Whether the part ``label`` may start: not (and it is noted as left out) once the time left is
        ``needs`` seconds or less (0: once time is up)."""
        if self.clock.remaining() <= needs:
            self.left_out.append(label)
            return False
        return True

    def part(self, label: str, size: int, make: Callable[[], T]) -> T | None:
        """``make()``, a part that cannot be cut (e.g. an ensemble of ``size`` starts), or None.

        It is left out when the time left would not cover it at the pace of the parts made so far
        (seconds per unit of ``size``): the worker would be stopped part-way, losing everything.
        """
        if not self.allows(label, self.spent * size / self.units if self.units else 0.0):
            return None
        begin = time.monotonic()
        made = make()
        self.spent += time.monotonic() - begin
        self.units += size
        return made

    def ensemble(self, label: str, experiment: Experiment, a0: np.ndarray, *, row: int = 1,
                 trajectories: bool = False) -> Ensemble | None:
        """``simulate_many(experiment, a0)`` for the first starts (rows of ``a0``) the time allows, or None.

        Without a budget, all in one part (as ``simulate_many``). With one, in chunks of whole rows of
        ``row`` starts through ``part``: first one row, to measure this ensemble's pace, then as many
        as would take half the time left at that pace. A chunk the time left would not cover is left out, with
        the starts after it, and noted as ``label``'s last starts.

        Returns
        -------
        Ensemble or None
            Of the first ``k * row`` starts (``joined``), or None when not even one row was run.
        """
        starts, chunks = np.asarray(a0, dtype=float), []
        K, begin, spent = len(starts), 0, self.spent
        while begin < K:
            size = K if math.isinf(self.clock.seconds) else row
            if chunks:  # at this ensemble's own pace: its starts may be slower than earlier parts'
                pace = (self.spent - spent) / begin
                size = max(row, int(self.clock.remaining() / 2 / max(pace, 1e-12)) // row * row)
            end = min(K, begin + size)
            name = label if begin == 0 else f"{label}'s last {K - begin:,} of {K:,} starts"
            # The budget is the hard stop: a chunk slower than its pace said stops with the starts it did.
            chunk = self.part(name, end - begin, lambda b=begin, e=end: simulate_many(
                experiment, starts[b:e], trajectories=trajectories, budget=self.clock.remaining()))
            if chunk is None:
                break
            if len(chunk):
                chunks.append(chunk)
            begin += len(chunk)
            if chunk.status is Status.OUT_OF_TIME:
                self.left_out.append(f"{label}'s last {K - begin:,} of {K:,} starts" if begin else label)
                break
        return joined(chunks) if chunks else None

    def simulate(self, label: str, experiment: Experiment) -> Result | None:
        """``simulate(experiment)`` in the time left, noted as cut if it runs out; None if it is left out."""
        if not self.allows(label):
            return None
        result = simulate(experiment, budget=self.clock.remaining())
        if result.status is Status.OUT_OF_TIME:
            self.cut.append(label)
            self.reached.append((label, float(result.t[-1])))
        return result

    def unused(self, label: str) -> None:
        """Note that the run ``label`` is not shown after all (its partner was left out): as left out."""
        while label in self.cut:
            index = self.cut.index(label)
            del self.cut[index], self.reached[index]
        self.left_out.append(label)

    def partial(self, outcome: Any) -> Partial:
        """``outcome`` with what this deadline cut and left out."""
        return Partial(outcome=outcome, cut=tuple(dict.fromkeys(self.cut)),
                       left_out=tuple(dict.fromkeys(self.left_out)),
                       reached=tuple(self.reached), seconds=self.clock.seconds)


def joined(parts: list[Ensemble]) -> Ensemble:
    """One ensemble of the starts of ``parts`` (each of the same experiment), in order; its status is
    the last part's (the one that ran out of time, if one did: only the last can).

    Trajectories are kept when every part saved them at the same times (a part of many starts
    saves fewer times only beyond ``ensemble.TRAJECTORY_FLOATS``).
    """
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    same_times = first.t is not None and all(p.t is not None and np.array_equal(p.t, first.t) for p in parts)

    def stacked(name: str) -> np.ndarray:
        return np.concatenate([getattr(p, name) for p in parts])

    per_start = {f.name: stacked(f.name) for f in dataclasses.fields(Ensemble)
                 if f.name not in ("t", "s_path") and isinstance(getattr(first, f.name), np.ndarray)}
    return Ensemble(experiment=first.experiment, **per_start, t=first.t if same_times else None,
                    s_path=stacked("s_path") if same_times else None, alone=sum(p.alone for p in parts),
                    status=parts[-1].status)


def within_budget(function: Callable[..., Any], seconds: float | None, *args: Any) -> Partial:
    """``function(*args, deadline=Deadline(seconds))`` as a ``Partial`` (for ``runner.call_with_timeout``).

    ``function`` is a study that makes its runs through the deadline it is given.
    """
    deadline = Deadline(seconds)
    return deadline.partial(function(*args, deadline=deadline))


def simulated(label: str, experiment: Experiment, *, deadline: Deadline) -> Result | None:
    """``deadline.simulate(label, experiment)``: one run as a study of its own (``within_budget``), for a
    page that hands its runs to the workers at once."""
    return deadline.simulate(label, experiment)
