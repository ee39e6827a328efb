"""Named experiments, among them the paper's toy settings (arXiv:2603.06248 section 6).

The ``paper-*`` presets draw their random arrays exactly as the official
notebook does (numpy's legacy generator, same seed and draw order), so that
their ``gd`` runs retrace the official loops to rounding (they also add the
notebook's 1e-10 to the normalizing sums, ``NOTEBOOK_EPS``); their default method
is the exact flow. ``PRESETS`` maps each name to a ``Preset``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import softmax

from polarize.config import ConfigError, Experiment
from polarize.losses import LOSSES

__all__ = ["NOTEBOOK_EPS", "PAPER_KAPPAS", "PAPER_TIED_SIZES", "PRESETS", "Preset", "get_preset",
           "paper_regression", "paper_tied"]

NOTEBOOK_EPS = 1e-10
"""What the official notebook adds to the normalizing sums of relu, l1, l2 and sum (``Experiment.eps``)."""


@dataclass(frozen=True, kw_only=True)
class Preset:
    """A named experiment with a one-line description."""

    name: str
    description: str
    build: Callable[[], Experiment]

    @functools.cached_property
    def experiment(self) -> Experiment:
        """The preset's experiment, built once (it is immutable; pages ask for it on every rerun)."""
        return self.build()

    def with_changes(self, **changes: Any) -> Experiment:
        """The preset with some fields changed (``Experiment.varied``).

        A preset's explicit arrays are its own draws, and its init fields
        (``a_init``, ``V_init``, their scales) say what they were drawn as, so an
        array that a change invalidates is drawn afresh from those fields. A
        dropped design ``X`` is redrawn with the preset's condition number.
        """
        base = self.experiment
        varied = base.varied(**changes)
        if (base.X is not None and varied.X is None and LOSSES[varied.loss].takes_kappa
                and "kappa" not in changes):
            varied = dataclasses.replace(varied, kappa=_condition_number(base), y=None)
        return varied


def _condition_number(e: Experiment) -> float:
    values = np.linalg.svd(np.asarray(e.X), compute_uv=False)
    return float(f"{values[0] / values[-1]:.12g}")  # the kappa it was built with, without rounding noise


def _paper_logistic() -> Experiment:
    # Official draws: seed 123; W = 0.1 randn(8, 8); a = 0 * randn(8); beta = randn(8) / norm.
    # That is exactly the engine's own draw order, so no explicit arrays are needed.
    return Experiment(n=8, d=8, loss="logistic", lr=0.1, horizon=1e5, seed=123, eps=NOTEBOOK_EPS,
                      a_init="zeros", V_init="gaussian", V_scale=0.1, samples=400)


def _paper_kl() -> Experiment:
    # Official draws: seed 123; V = 0.1 randn(n, k) used as V^T s; a = 0 * randn(n);
    # p* = softmax(10 rand(k)). The notebook's V is our V transposed.
    rng = np.random.RandomState(123)
    V_official = 0.1 * rng.randn(10, 10)
    a = 0 * rng.randn(10) + 0.0
    p_star = softmax(10 * rng.rand(10))
    return Experiment(n=10, d=10, loss="kl", lr=0.1, horizon=1e6, seed=123, samples=400, eps=NOTEBOOK_EPS,
                      a_init="zeros", V_init="gaussian", V_scale=0.1,
                      a0=a, V0=V_official.T, target=p_star)


def _paper_comparison(loss: str, lr: float, steps: int) -> Experiment:
    # Official draws: seed 42, target = randn(10) / norm; then the solver re-seeds 42 and
    # draws V = 0.1 randn(10, 10) and a = 1 * (ones + 0.1 randn(10)). Square loss: 5,000
    # steps of 0.1; logistic: 1e5 steps of 0.5.
    rng = np.random.RandomState(42)
    target = rng.randn(10)
    target = target / np.linalg.norm(target)
    rng = np.random.RandomState(42)
    V = 0.1 * rng.randn(10, 10)
    a = 1.0 * (np.ones(10) + rng.randn(10) * 0.1)
    return Experiment(n=10, d=10, loss=loss, lr=lr, horizon=lr * steps, seed=42, samples=300,
                      eps=NOTEBOOK_EPS, a_init="shifted", a_shift=1.0, a_scale=0.1, V_init="gaussian",
                      V_scale=0.1, a0=a, V0=V, target=target)


def paper_tied(D: int) -> Experiment:
    """The paper's tied model (massive activations) of size ``D``: ``U0 = I``, 1e4 steps of 0.05.

    Official draws: seed 42, target = randn(D) / norm; the solver re-seeds 42, draws an unused
    ``randn(D, D)``, then ``a = ones + 0.1 randn(D)``.
    """
    rng = np.random.RandomState(42)
    target = rng.randn(D)
    target = target / np.linalg.norm(target)
    rng = np.random.RandomState(42)
    rng.randn(D, D)
    a = 1.0 * (np.ones(D) + rng.randn(D) * 0.1)
    return Experiment(model="tied", n=D, d=D, loss="logistic", lr=0.05, horizon=0.05 * 10_000,
                      seed=42, samples=300, eps=NOTEBOOK_EPS, a_init="shifted", a_shift=1.0, a_scale=0.1,
                      V_init="identity", V_scale=1.0, a0=a, V0=np.eye(D), target=target)


def paper_regression(kappa: float) -> Experiment:
    """The paper's regression of condition number ``kappa`` (n = d = m = 20, seed 123).

    Official draws: W = 1e-5 randn(20, 20), a = 1e-3 randn(20), X from randn(20, 20) with its
    singular values replaced by linspace(1, 1/kappa), y = randn(20). The notebook's loss is
    ``|y - X V s|^2`` without the 1/2, so its gradients are twice ours: its 3e5 steps of 0.001
    are exactly (to the last bit: a factor 2 is exact) 3e5 steps of 0.002 here, flow time 600.
    """
    rng = np.random.RandomState(123)
    W = 1e-5 * rng.randn(20, 20)
    a = 1e-3 * rng.randn(20)
    left, _, right = np.linalg.svd(rng.randn(20, 20), full_matrices=False)
    X = left @ np.diag(np.linspace(1, 1 / kappa, 20)) @ right
    y = rng.randn(20)
    return Experiment(n=20, d=20, loss="square", lr=0.002, horizon=0.002 * 300_000, seed=123,
                      samples=300, eps=NOTEBOOK_EPS, a_init="gaussian", a_scale=1e-3, V_init="gaussian",
                      V_scale=1e-5, a0=a, V0=W, X=X, y=y)


PAPER_TIED_SIZES = (10, 20, 50, 100)
PAPER_KAPPAS = (1, 2, 3, 4, 5)

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
        Preset(name="paper-compare-square",
               description="The paper's normalizer comparison, square loss: 10 x 10, seed 42, "
                           "flow time 500 (5,000 steps of 0.1).",
               build=lambda: _paper_comparison("square", 0.1, 5000)),
        Preset(name="paper-compare-logistic",
               description="The paper's normalizer comparison, logistic loss: 10 x 10, seed 42, "
                           "flow time 5e4 (1e5 steps of 0.5).",
               build=lambda: _paper_comparison("logistic", 0.5, 100_000)),
        *(Preset(name=f"paper-tied-{D}",
                 description=f"The paper's tied model (massive activations), D = {D}: U0 = I, "
                             "flow time 500 (1e4 steps of 0.05).",
                 build=functools.partial(paper_tied, D)) for D in PAPER_TIED_SIZES),
        *(Preset(name=f"paper-regression-kappa-{k}",
                 description=f"The paper's regression, condition number {k}: n = d = m = 20, "
                             "seed 123, 3e5 steps.",
                 build=functools.partial(paper_regression, k)) for k in PAPER_KAPPAS),
    )
}


def get_preset(name: str) -> Preset:
    """The preset registered as ``name``; a ``ConfigError`` naming ``preset`` otherwise."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError("preset", f"must be one of {', '.join(PRESETS)}; got {name!r}") from None
