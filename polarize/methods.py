"""The methods a configuration names: the exact flow and gradient descent, each with its own facts.

``METHODS`` (a ``polarize.registry.Registry``) holds a ``Method`` for each: how it moves a state over
the saved times (``states``), where its run ends (``end``), how many steps of ``lr`` it takes (the
step cap is on those), and its words. The configuration's check, the integrator, the pages' controls
and the command line's progress bar ask the method, never its name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from polarize.registry import Registry
from polarize.stepping import descend, march

if TYPE_CHECKING:
    from polarize.budget import WallClock
    from polarize.save_at import SaveAt
    from polarize.switching import SwitchLog

__all__ = ["METHODS", "Method"]

States = Callable[..., Iterator[np.ndarray]]


@dataclass(frozen=True, kw_only=True)
class Method:
    """A method a configuration names (``Experiment.method``).

    Attributes
    ----------
    name : str
        Its key in ``METHODS``.
    label : str
        Its name in menus (``"gradient flow (exact)"``).
    doing : str
        What a run of it is doing, for a spinner (``"the exact flow"``).
    stepped : bool
        Whether it moves in whole steps of ``lr`` (descent): then ``lr`` applies, its steps are capped
        (``steps``) and its run ends at its last whole step (``end``); else ``lr`` only sets the first
        saved time and the run ends at the horizon.
    words : callable
        ``words(lr)``: the method in a settings line (``"gradient descent (lr = 0.1)"``).
    states : callable
        ``states(system, grid, lr, *, calls, log, clock)``: an iterator of the states (state, 1) of a
        ``polarize.systems`` system at the saved times ``grid`` (``SaveAt``), the start first; ``calls``
        counts the evaluations, ``log`` the switches at kinks, ``clock`` the time allowed.
    stacked : bool
        Whether ``simulate_many`` runs many starts of it as one batch (a ``polarize.systems`` system
        of k starts), step for step (the descent loop when ``stepped``, else the march). It runs each
        start of any other method alone, through ``states`` (``polarize.systems.runs_together``).
    """

    name: str
    label: str
    doing: str
    stepped: bool
    words: Callable[[float], str]
    states: States
    stacked: bool = False

    def steps(self, horizon: float, lr: float) -> int | None:
        """The steps of ``lr`` a run to ``horizon`` takes (what the step cap counts), None for a flow."""
        return round(horizon / lr) if self.stepped else None

    def end(self, horizon: float, lr: float) -> float:
        """The time a run to ``horizon`` is asked to reach: a descent's whole steps of ``lr``, else it."""
        return round(horizon / lr) * lr if self.stepped else horizon


def _flow_states(system: Any, grid: SaveAt, lr: float, *, calls: list[int], log: SwitchLog,
                 clock: WallClock) -> Iterator[np.ndarray]:
    def counted(tau, y, sigma=None):
        calls[0] += 1
        return system.field(tau, y, sigma)
    return march(counted, system.y0, system.schedule(grid.t), log=log, budget=clock)


def _descent_states(system: Any, grid: SaveAt, lr: float, *, calls: list[int], log: SwitchLog,
                    clock: WallClock) -> Iterator[np.ndarray]:
    steps = descend(system.gradient, system.y0, lr, grid.steps, budget=clock, calls=calls)
    return (y[:, None] for y in steps)


METHODS: Registry[Method] = Registry({method.name: method for method in (
    Method(name="flow", label="gradient flow (exact)", doing="the exact flow", stepped=False,
           words=lambda lr: "exact flow", states=_flow_states, stacked=True),
    Method(name="gd", label="gradient descent", doing="gradient descent", stepped=True,
           words=lambda lr: f"gradient descent (lr = {lr:g})", states=_descent_states, stacked=True),
)})
"""Every method a configuration can name, in the order menus list them."""
