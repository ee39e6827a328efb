"""The replicator picture of a softmax run: the field on the simplex (or a slice of it), frozen ``V``.

With ``V`` held at its value at some time, the scores move in a field of their
own: ``da/dt = J^T u`` with the fitness ``u = -V^T grad l(V s)`` (docs/derivations.md
section 1) and ``ds/dt = J da/dt``. Its rest points (``polarize.science.rest_points``)
are those of the replicator equation. As ``V`` learns, the field and its rest
points move; the basin map (``polarize.science.basins``) says where each start
really ends.

A *slice* shows n > 3 tokens through three of them: the other tokens keep the
logits of a reference start, and the three are drawn by their shares among
themselves, ``r = s_S / sum s_S``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.special import logsumexp

from polarize.config import Experiment
from polarize.integrate import simulate
from polarize.model import value_gradients
from polarize.normalizers import make_normalizer
from polarize.systems import build_loss

__all__ = ["field_at", "naive_winner", "portrait_field", "slice_field", "slice_logits", "slice_shares",
           "square_to_triangle", "triangle_grid", "values_at"]

def triangle_grid(resolution: int) -> np.ndarray:
    """``resolution**2`` points strictly inside the 2-simplex, evenly spread by area.

    The unit square's cell centres ``(x, y)`` map to ``(1 - sqrt x, sqrt x (1 - y), sqrt x y)``;
    neighbouring cells stay neighbours, so the grid reads as a ``resolution x resolution`` image.

    Returns
    -------
    ndarray, shape (resolution**2, 3)
    """
    centres = (np.arange(resolution) + 0.5) / resolution
    x, y = np.meshgrid(centres, centres, indexing="ij")
    return square_to_triangle(x.ravel(), y.ravel())


def square_to_triangle(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Shares (..., 3) ``(1 - sqrt x, sqrt x (1 - y), sqrt x y)`` of points ``(x, y)`` of the unit square."""
    root_x = np.sqrt(np.asarray(x, dtype=float))
    return np.stack([1 - root_x, root_x * (1 - np.asarray(y)), root_x * np.asarray(y)], axis=-1)


def slice_logits(shares: np.ndarray, tokens: tuple[int, int, int], reference: np.ndarray,
                 temperature: float = 1.0) -> np.ndarray:
    """Logits (K, n) whose shares among ``tokens`` are ``shares`` (K, 3); the others keep ``reference`` (n,).

    The three tokens keep the total share they have at ``reference`` under ``softmax(a / temperature)``,
    so for n = 3 the logits are ``temperature * log shares`` plus a constant.
    """
    a = np.repeat(np.asarray(reference, dtype=float)[None], len(shares), axis=0)
    mass = logsumexp(np.asarray(reference)[list(tokens)] / temperature)
    with np.errstate(divide="ignore"):
        a[:, list(tokens)] = temperature * (np.log(shares) + mass)
    return a


def slice_shares(s: np.ndarray, tokens: tuple[int, int, int]) -> np.ndarray:
    """Shares (..., 3) of ``tokens`` among themselves, from scores (..., n)."""
    part = np.asarray(s)[..., list(tokens)]
    return part / np.sum(part, axis=-1, keepdims=True)


def values_at(experiment: Experiment, time: float) -> np.ndarray:
    """The value matrix (d, n) of the experiment's own run at ``time`` (``V0`` at 0)."""
    e = experiment.resolved()
    if time <= 0:
        return np.asarray(e.V0)
    return simulate(dataclasses.replace(e, horizon=time, samples=2)).V_final


def field_at(experiment: Experiment, V: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The scores' velocity ``ds/dt`` with ``V`` held fixed, and the fitness, at logits ``a``.

    Parameters
    ----------
    experiment : Experiment
        Its loss, target and softmax temperature.
    V : ndarray, shape (d, n)
    a : ndarray, shape (K, n)
        Logits; ``-inf`` marks a token with share zero (a point on a face).

    Returns
    -------
    ds, u : ndarray, shape (K, n)
    """
    _, ds, u = _velocities(experiment, V, a)
    return ds, u


def _velocities(experiment: Experiment, V: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, ...]:
    """``da/dt``, ``ds/dt`` and the fitness ``u``, each (K, n), at logits ``a`` (K, n) with ``V`` fixed."""
    e = experiment.resolved()
    normalizer = make_normalizer("softmax", temperature=e.temperature)
    with np.errstate(invalid="ignore"):
        grads = value_gradients(np.asarray(V), np.asarray(a, dtype=float), build_loss(e), normalizer)
        da = np.nan_to_num(-grads.grad_a)  # a token of share 0 does not move (0 * inf in J)
        return da, np.nan_to_num(normalizer.vjp(a, da)), grads.u


def slice_field(experiment: Experiment, V: np.ndarray, shares: np.ndarray,
                tokens: tuple[int, int, int] = (0, 1, 2)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The field on the triangle of ``tokens``: the velocity of their shares among themselves.

    Parameters
    ----------
    shares : ndarray, shape (K, 3)
        Points of the triangle (a zero share is a point on its edge); the other tokens keep the
        logits of the experiment's ``a0`` (``slice_logits``). For n = 3 the triangle is the simplex.

    Returns
    -------
    velocity : ndarray, shape (K, 3)
        ``dr/dt`` of the shares ``r = s_S / m``, ``m = sum s_S``.
    da, u : ndarray, shape (K, n)
        The logits' velocity and the fitness there.
    """
    e = experiment.resolved()
    shares = np.asarray(shares, dtype=float)
    a = slice_logits(shares, tokens, np.asarray(e.a0), e.temperature)
    da, ds, u = _velocities(e, V, a)
    mass = np.sum(make_normalizer("softmax", temperature=e.temperature).forward(a)[:, list(tokens)], axis=1)
    part = ds[:, list(tokens)]
    # r = s_S / m with m = sum s_S:  dr = (ds_S - r dm) / m.
    return (part - shares * np.sum(part, axis=1, keepdims=True)) / mass[:, None], da, u


def portrait_field(experiment: Experiment, V: np.ndarray, resolution: int,
                   tokens: tuple[int, int, int] = (0, 1, 2)) -> tuple[np.ndarray, np.ndarray]:
    """The field on a ``resolution x resolution`` grid of the triangle of ``tokens`` (``V`` held fixed).

    Returns
    -------
    shares, velocity : ndarray, shape (resolution**2, 3)
        The points (shares of the three tokens among themselves) and the velocity of those shares.
    """
    shares = triangle_grid(resolution)
    return shares, slice_field(experiment, V, shares, tokens)[0]


def naive_winner(experiment: Experiment) -> int:
    """The token with the largest fitness at the uniform scores and ``V0``.

    For logistic loss on ``beta_*`` the fitness is ``c p`` with ``p = V0^T beta_*``:
    the largest ``p_i(0)``, which wins from ``a(0) = 0`` (docs/derivations.md section 3).
    """
    e = experiment.resolved()
    _, u = field_at(e, np.asarray(e.V0), np.zeros((1, e.n)))
    return int(np.argmax(u[0]))
