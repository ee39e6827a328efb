"""Named experiments, among them the paper's toy settings (PAPER.md section 6).

The ``paper-*`` presets draw their random arrays exactly as the official
notebook does (numpy's legacy generator, same seed and draw order), so that
their ``gd`` runs retrace the official loops to rounding; their default method
is the exact flow. ``PRESETS`` maps each name to a ``Preset``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import softmax

from polarize.config import ConfigError, Experiment

__all__ = ["PRESETS", "Preset", "get_preset"]

_DRAWN = ("a0", "V0", "target", "X", "y")


@dataclass(frozen=True, kw_only=True)
class Preset:
    """A named experiment with a one-line description."""

    name: str
    description: str
    build: Callable[[], Experiment]

    @property
    def experiment(self) -> Experiment:
        return self.build()

    def with_changes(self, **changes: Any) -> Experiment:
        """The preset with some fields changed.

        The preset's explicit arrays are kept only while the fields they were
        drawn for (sizes, loss, seed) are unchanged; otherwise they are dropped
        and drawn afresh from the (new) seed, as for any experiment.
        """
        base = self.experiment
        shaping = {"n", "d", "loss", "seed", "model"}
        if any(k in shaping and changes[k] != getattr(base, k) for k in changes):
            base = dataclasses.replace(base, **{k: None for k in _DRAWN if k not in changes})
        return dataclasses.replace(base, **changes)


def _paper_logistic() -> Experiment:
    # Official draws: seed 123; W = 0.1 randn(8, 8); a = 0 * randn(8); beta = randn(8) / norm.
    # That is exactly the engine's own draw order, so no explicit arrays are needed.
    return Experiment(n=8, d=8, loss="logistic", lr=0.1, horizon=1e5, seed=123,
                      a_init="zeros", V_init="gaussian", V_scale=0.1, samples=400)


def _paper_kl() -> Experiment:
    # Official draws: seed 123; V = 0.1 randn(n, k) used as V^T s; a = 0 * randn(n);
    # p* = softmax(10 rand(k)). The notebook's V is our V transposed.
    rng = np.random.RandomState(123)
    V_official = 0.1 * rng.randn(10, 10)
    a = 0 * rng.randn(10) + 0.0
    p_star = softmax(10 * rng.rand(10))
    return Experiment(n=10, d=10, loss="kl", lr=0.1, horizon=1e6, seed=123, samples=400,
                      a0=a, V0=V_official.T, target=p_star)


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(name="default", description="Logistic loss, 8 tokens, softmax, from uniform scores.",
               build=Experiment),
        Preset(name="paper-logistic",
               description="The paper's logistic run: n = d = 8, seed 123, flow time 1e5 (1e6 steps of 0.1).",
               build=_paper_logistic),
        Preset(name="paper-kl",
               description="The paper's cross-entropy run: n = k = 10, seed 123, flow time 1e6 "
                           "(1e7 steps of 0.1).",
               build=_paper_kl),
    )
}


def get_preset(name: str) -> Preset:
    """The preset registered as ``name``; a ``ConfigError`` naming ``preset`` otherwise."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError("preset", f"must be one of {', '.join(PRESETS)}; got {name!r}") from None
