"""Roots of a two-dimensional residual in the unit square, sought from many starts at once.

Every start moves together: one call of the residual evaluates it at every start (and at the
probes of its central differences), so a vectorized field costs as much for 64 starts as for one.
``roots_in_square`` is a damped Gauss-Newton search (Levenberg-Marquardt) clipped to the square,
then Newton's steps; ``newton_steps`` says how far each answer still is from a root.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["newton_steps", "roots_in_square"]

Residual = Callable[[np.ndarray], np.ndarray]
"""Points (K, 2) of the unit square -> residuals (K, 2)."""

_H = 1e-7  # the central differences' step
_RCOND = 1e-10  # singular values below this fraction of the largest are left out of Newton's step


def roots_in_square(residual: Residual, starts: np.ndarray, *, close: float, rounds: int = 200,
                    steps: int = 30) -> np.ndarray:
    """Where each start (K, 2) ends: Levenberg-Marquardt, then Newton until a step is under ``close``.

    In a long, nearly flat valley (a Jacobian with a singular value near 1e-7, as cross-entropy's resting
    point can have) the least-squares search stops on its tolerances well short of the root; Newton's
    step, which divides by that small singular value, walks the rest of the way.
    """
    return _polished(residual, _damped(residual, np.array(starts, dtype=float), rounds), close, steps)


def newton_steps(residual: Residual, x: np.ndarray, *, flat: float) -> np.ndarray:
    """Length (K,) of the least-squares Newton step from each point ``x`` (K, 2) towards a root.

    Scale-free: a root where the residual's own terms vanish passes, while a point where the whole
    field is merely tiny does not, since there its slope is as tiny as its value: where no move of
    ``flat`` could make up the residual the length is infinite. So is it where the residual or its
    slope is not finite. On a line of roots the least-squares step along the line is zero.
    """
    f, jac = _linearized(residual, x, residual(x))
    out = np.full(len(x), np.inf)
    finite = np.all(np.isfinite(f), axis=1) & np.all(np.isfinite(jac), axis=(1, 2))
    resting = finite.copy()
    resting[finite] = np.max(np.abs(f[finite]), axis=1) <= flat * np.max(np.abs(jac[finite]), axis=(1, 2))
    step = np.einsum("kij,kj->ki", np.linalg.pinv(jac[resting], rcond=_RCOND), f[resting])
    out[resting] = np.max(np.abs(step), axis=1)
    return out


def _damped(residual: Residual, x: np.ndarray, rounds: int) -> np.ndarray:
    """Levenberg-Marquardt from each start ``x`` (K, 2) at once, each step clipped to the unit square.

    A start stops when its damping has grown past any use (no step lowers its residual), its step has
    shrunk to rounding, or its residual is zero.
    """
    x = x.copy()
    f = residual(x)
    cost = np.sum(f * f, axis=1)
    damping = np.full(len(x), 1e-3)
    moving = np.isfinite(cost)
    for _ in range(rounds):
        index = np.flatnonzero(moving)
        if not len(index):
            break
        f_k, jac = _linearized(residual, x[index], f[index])
        normal = np.einsum("kij,kil->kjl", jac, jac)
        scale = normal.diagonal(axis1=1, axis2=2)[:, :, None] * np.eye(2) + 1e-300 * np.eye(2)
        with np.errstate(all="ignore"):
            lifted = normal + damping[index, None, None] * scale
            step = np.linalg.solve(lifted, np.einsum("kij,ki->kj", jac, f_k)[..., None])[..., 0]
        trial = np.clip(x[index] - step, 0.0, 1.0)
        finite = np.all(np.isfinite(trial), axis=1)
        trial[~finite] = x[index][~finite]
        trial_f = residual(trial)
        trial_cost = np.sum(trial_f * trial_f, axis=1)
        better = finite & (trial_cost < cost[index])
        moved = np.max(np.abs(trial - x[index]), axis=1)
        kept = index[better]
        x[kept], f[kept], cost[kept] = trial[better], trial_f[better], trial_cost[better]
        damping[index] = np.where(better, damping[index] / 3, damping[index] * 4)
        moving[index[(damping[index] > 1e16) | (better & (moved <= 1e-16)) | (cost[index] == 0)]] = False
    return x


def _polished(residual: Residual, x: np.ndarray, close: float, steps: int) -> np.ndarray:
    """Newton steps from each point ``x`` (K, 2), kept in the unit square, until a step is under ``close``."""
    x = x.copy()
    moving = np.ones(len(x), dtype=bool)
    for _ in range(steps):
        index = np.flatnonzero(moving)
        if not len(index):
            break
        f, jac = _linearized(residual, x[index], residual(x[index]))
        finite = np.all(np.isfinite(f), axis=1) & np.all(np.isfinite(jac), axis=(1, 2))
        moving[index[~finite]] = False
        index, f, jac = index[finite], f[finite], jac[finite]
        step = np.einsum("kij,kj->ki", np.linalg.pinv(jac, rcond=_RCOND), f) if len(index) else f
        x[index] = np.clip(x[index] - step, 0.0, 1.0)
        moving[index[np.max(np.abs(step), axis=1) <= close]] = False
    return x


def _linearized(residual: Residual, x: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``f`` and the Jacobians (K, 2, 2) of ``residual`` at points ``x`` (K, 2), by central differences."""
    probes = np.concatenate([x + _H * d for d in np.eye(2)] + [x - _H * d for d in np.eye(2)])
    values = residual(probes).reshape(4, len(x), -1)
    return f, np.stack([(values[j] - values[2 + j]) / (2 * _H) for j in range(2)], axis=2)
