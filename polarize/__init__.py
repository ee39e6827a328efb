"""polarize: how gradient flow drives softmax outputs toward one-hot solutions.

The value-softmax model ``beta = V sigma(a)`` trained by gradient flow on
``l(V sigma(a))``; see the README and docs/derivations.md for the science
(Varre, Rofin and Flammarion, arXiv:2603.06248).
"""

from polarize.config import ConfigError, Experiment, limits
from polarize.diagnostics import Result
from polarize.ensemble import Ensemble, simulate_many
from polarize.integrate import simulate
from polarize.losses import KL, Logistic, LogisticData, Square, conditioned_matrix, entropy
from polarize.model import tied_gradients, value_gradients
from polarize.normalizers import NORMALIZERS, DegenerateStateError, make_normalizer

__all__ = [
    "ConfigError",
    "DegenerateStateError",
    "Ensemble",
    "Experiment",
    "KL",
    "Logistic",
    "LogisticData",
    "NORMALIZERS",
    "Result",
    "Square",
    "conditioned_matrix",
    "entropy",
    "limits",
    "make_normalizer",
    "simulate",
    "simulate_many",
    "tied_gradients",
    "value_gradients",
]

__version__ = "0.1.0"
