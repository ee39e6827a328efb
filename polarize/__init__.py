"""polarize: how gradient flow drives softmax outputs toward one-hot solutions.

The value-softmax model ``beta = V sigma(a)`` trained by gradient flow on
``l(V sigma(a))`` (Varre, Rofin and Flammarion, arXiv:2603.06248); the
README, docs/derivations.md and the documentation site in ``docs/`` explain the science.

The supported API is ``__all__``, and nothing else at this level: describe a
run (``Experiment``, ``PRESETS``), run it (``simulate``, ``simulate_many``),
read it (``Result``, ``Ensemble``, ``judge``, ``polarization_rate``, ``basins``,
``naive_odds``) and draw it (``Result.figure``, ``Ensemble.figure``, ``Basins.figure``: plotly
figures; ``dashboard``, ``basin_figure``, ``odds_figure``: the same as plotly's figure dicts, for
``go.Figure`` or ``plotly.io.show``). The modules under it
(``polarize.config``, ``polarize.plots``, ...) stay importable by their full
path for the app and the command line, but are not part of that promise.

The names that draw or judge (everything from ``polarize.science`` and
``polarize.plots``) are imported on first use, so ``import polarize`` does
not load plotly.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from polarize.config import ConfigError, Experiment, limits
from polarize.diagnostics import Result
from polarize.ensemble import Ensemble, simulate_many
from polarize.integrate import simulate
from polarize.losses import KL, LOSSES, Logistic, LogisticData, Square, conditioned_matrix, entropy
from polarize.model import tied_gradients, value_gradients
from polarize.normalizers import NORMALIZERS, DegenerateStateError, make_normalizer
from polarize.presets import PRESETS, Preset, get_preset
from polarize.status import Status

if TYPE_CHECKING:
    from polarize.plots.dashboard import dashboard
    from polarize.plots.portrait import basin_figure, odds_figure
    from polarize.science.basins import Basins, NaiveOdds, basins, naive_odds
    from polarize.science.studies import Rate, polarization_rate
    from polarize.science.verdict import Verdict, judge

__all__ = [
    "KL",
    "LOSSES",
    "NORMALIZERS",
    "PRESETS",
    "Basins",
    "ConfigError",
    "DegenerateStateError",
    "Ensemble",
    "Experiment",
    "Logistic",
    "LogisticData",
    "NaiveOdds",
    "Preset",
    "Rate",
    "Result",
    "Square",
    "Status",
    "Verdict",
    "basin_figure",
    "basins",
    "conditioned_matrix",
    "dashboard",
    "entropy",
    "get_preset",
    "judge",
    "limits",
    "make_normalizer",
    "naive_odds",
    "odds_figure",
    "polarization_rate",
    "simulate",
    "simulate_many",
    "tied_gradients",
    "value_gradients",
]

__version__ = "0.1.0"

_LAZY = {
    "Basins": "polarize.science.basins",
    "NaiveOdds": "polarize.science.basins",
    "basins": "polarize.science.basins",
    "naive_odds": "polarize.science.basins",
    "Rate": "polarize.science.studies",
    "polarization_rate": "polarize.science.studies",
    "Verdict": "polarize.science.verdict",
    "judge": "polarize.science.verdict",
    "dashboard": "polarize.plots.dashboard",
    "basin_figure": "polarize.plots.portrait",
    "odds_figure": "polarize.plots.portrait",
}
"""Public names from the layers above the engine: module that defines each, imported on first use."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'polarize' has no attribute {name!r}")


def __dir__() -> list[str]:
    # The supported names only: submodules bound as they are imported are internal.
    return sorted([*__all__, "__version__"])
