"""How a run ended: one type for results, ensembles, partial runs and the pages.

``Status`` is a ``str`` enum (as diffrax's ``RESULTS`` or scipy's integer status, with words):
its values are the strings results have always been stored with, so a ``Result`` or a sweep row
written before it existed reads back as the same status (``Status("finished")``), and a status
written to JSON or Parquet is that plain string.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Status"]


class Status(StrEnum):
    """How a run ended, with ``message``: what that means, in words."""

    FINISHED = "finished"
    STOPPED = "stopped"
    OUT_OF_TIME = "out of time"
    OUT_OF_STEPS = "out of steps"
    """Still moving when it used up its integrator steps (``budget.MAX_FLOW_STEPS``)."""

    @property
    def message(self) -> str:
        """What the status means, in words (the run's own ``message`` says why it stopped)."""
        return _MESSAGES[self]

    @property
    def ok(self) -> bool:
        """Whether the run reached its horizon."""
        return self is Status.FINISHED


_MESSAGES = {
    Status.FINISHED: "reached the horizon",
    Status.STOPPED: "stopped early: the run could not go on (its message says why)",
    Status.OUT_OF_TIME: "stopped by its wall-clock budget; what it saved until then is kept",
    Status.OUT_OF_STEPS: "stopped by its limit of integrator steps while still moving; what it saved until "
                         "then is kept",
}
