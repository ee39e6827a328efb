"""The random draws behind ``Experiment.resolved()``.

Draws use numpy's legacy ``RandomState(seed)``, always in the order ``V0``
(``randn(d, n)``), ``a0`` (``randn(n)``), ``target`` (its loss's ``Target.draw``: ``randn(d)``,
or for kl ``softmax(10 rand(d))``), then for a square loss with a condition number ``X``
(``conditioned_matrix``) and ``y`` (``randn(m)``). Every draw is made whatever
the initialization mode (a zero start still consumes its ``randn(n)``, as the
official code's ``0 * randn`` does), so changing one mode never changes the
others' values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from polarize.losses import LOSSES, conditioned_matrix

if TYPE_CHECKING:
    from polarize.config import Experiment

__all__ = ["draw_missing"]


def _values(V_init: str, V_scale: float, draw: np.ndarray) -> np.ndarray:
    """``V0`` (d, n) for an init mode, from the Gaussian ``draw`` (d, n)."""
    if V_init == "gaussian":
        return V_scale * draw
    if V_init == "identity":
        return V_scale * np.eye(*draw.shape)
    return np.zeros(draw.shape)


def _logits(e: Experiment, draw: np.ndarray) -> np.ndarray:
    """``a0`` (n,) for the experiment's init mode, from the Gaussian ``draw`` (n,)."""
    if e.a_init == "zeros":
        a = 0.0 * draw
    elif e.a_init == "gaussian":
        a = e.a_scale * draw
    elif e.a_init == "shifted":
        a = e.a_shift + e.a_scale * draw
    else:
        a = e.a_scale * draw
        a[e.a_vertex] += e.a_shift
    return a + 0.0  # turn the -0.0 of 0 * randn into 0.0


def draw_missing(e: Experiment) -> dict[str, Any]:
    """The arrays ``e`` leaves to its seed, drawn: a dict of ``Experiment`` field changes.

    Parameters
    ----------
    e : Experiment

    Returns
    -------
    dict
        ``V0`` (d, n), ``a0`` (n,), ``target`` (d,) for each one not given; for
        a drawn design also ``X`` (m, d), ``y`` (m,) unless given, and
        ``kappa = m = None`` (the design is then explicit). Empty when nothing is
        left to draw.
    """
    n, d = e.n, e.d
    rng = np.random.RandomState(e.seed)
    v_draw = rng.randn(d, n)
    a_draw = rng.randn(n)
    t_draw = LOSSES[e.loss].target.draw(rng, d)
    changes: dict[str, Any] = {}
    if e.V0 is None:
        changes["V0"] = _values(e.V_init, e.V_scale, v_draw)
    if e.a0 is None:
        changes["a0"] = _logits(e, a_draw)
    if e.target is None:
        changes["target"] = t_draw
    if e.kappa is not None and e.X is None:
        m = e.m or e.d  # the rows of the drawn design (Experiment.rows, here never None)
        changes.update(X=conditioned_matrix(m, d, e.kappa, rng), kappa=None, m=None)
        if e.y is None:
            changes["y"] = rng.randn(m)
    return changes
