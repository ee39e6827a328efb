"""Roots of a two-dimensional residual in the unit square, sought from many starts at once.

Every start moves together: one call of the residual evaluates it at every start (and at the
probes of its central differences), so a vectorized field costs as much for 64 starts as for one.
``crossing_cells`` finds the starts: the cells of a grid where both components change sign.
``roots_in_square`` is a damped Gauss-Newton search (Levenberg-Marquardt) clipped to the square,
then Newton's steps; ``newton_steps`` says how far each answer still is from a root, and
``same_roots`` groups the answers that are one root (or one connected set of roots).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["crossing_cells", "newton_steps", "roots_in_square", "same_roots"]

Residual = Callable[[np.ndarray], np.ndarray]
"""Points (K, 2) of the unit square -> residuals (K, 2)."""

_H = 1e-7  # the central differences' step
_RCOND = 1e-10  # singular values below this fraction of the largest are left out of Newton's step
_ROUNDING = 1e-14  # a residual this small against the steepest slope (in the square's units) is rounding


def roots_in_square(residual: Residual, starts: np.ndarray, *, close: float, rounds: int = 200,
                    steps: int = 30) -> np.ndarray:
    """Where each start (K, 2) ends: Levenberg-Marquardt, then Newton until a step is under ``close``.

    In a long, nearly flat valley (a Jacobian with a singular value near 1e-7, as cross-entropy's resting
    point can have) the least-squares search stops on its tolerances well short of the root; Newton's
    step, which divides by that small singular value, walks the rest of the way where the valley is
    straight. Where it curves, Newton's step leaves it (and the search may end on the square's edge):
    from where it stalled, and from its start, the valley's floor is then followed to the root
    (``_valley_roots``), whose answers come after the starts' (K + m, 2).
    """
    starts = np.array(starts, dtype=float)
    x = _polished(residual, _damped(residual, starts, rounds), close, steps)
    # an answer whose Newton step is already within reach of ``close`` is at its root (or on a line of them)
    stalled = newton_steps(residual, x, flat=1e3 * close) > 1e3 * close
    return np.concatenate([x, _valley_roots(residual, np.concatenate([x[stalled], starts[stalled]]), close)])


def crossing_cells(residual: Residual, axis: np.ndarray, *, most: int) -> np.ndarray:
    """Centres (K, 2) of the cells of the grid ``axis`` x ``axis`` where both components of the residual
    change sign (or touch zero) over the cell's corners: each holds a crossing of the two zero curves,
    however flat the valley they meet in. At most ``most`` of them, evenly spread (a residual zero on a
    whole region flags every cell).
    """
    axis = np.asarray(axis, dtype=float)
    x, y = np.meshgrid(axis, axis, indexing="ij")
    with np.errstate(all="ignore"):
        values = residual(np.stack([x.ravel(), y.ravel()], axis=1)).reshape(len(axis), len(axis), -1)
    corners = np.stack([values[:-1, :-1], values[1:, :-1], values[:-1, 1:], values[1:, 1:]])
    with np.errstate(invalid="ignore"):
        crossing = np.all((np.min(corners, axis=0) <= 0) & (np.max(corners, axis=0) >= 0), axis=-1)
    centres = 0.5 * (axis[:-1] + axis[1:])
    i, j = np.nonzero(crossing)
    if len(i) > most:
        keep = np.linspace(0, len(i) - 1, most).astype(int)
        i, j = i[keep], j[keep]
    return np.stack([centres[i], centres[j]], axis=1)


def same_roots(residual: Residual, x: np.ndarray, *, flat: float) -> list[np.ndarray]:
    """Groups (indices into ``x``) of the roots ``x`` (K, 2) that are one root or one connected set of roots.

    Two answers are linked when the point halfway between them is itself a root by ``newton_steps``
    (its step under ``flat``): in the solver's own units, so two answers of one root in a flat valley,
    apart along it by what rounding lets Newton's step settle, are one, while two roots apart are
    two (between them the residual is no rounding). Linked answers chain into one group.
    """
    group = np.arange(len(x))

    def root(k: int) -> int:
        while group[k] != k:
            k = group[k]
        return k

    pairs = np.array([(a, b) for a in range(len(x)) for b in range(a + 1, len(x))]).reshape(-1, 2)
    if len(pairs):
        halfway = newton_steps(residual, 0.5 * (x[pairs[:, 0]] + x[pairs[:, 1]]), flat=flat) <= flat
        for a, b in pairs[halfway]:
            group[root(b)] = root(a)
    roots = np.array([root(k) for k in range(len(x))], dtype=int)
    return [np.flatnonzero(roots == k) for k in np.unique(roots)]


def newton_steps(residual: Residual, x: np.ndarray, *, flat: float) -> np.ndarray:
    """Length (K,) of the least-squares Newton step from each point ``x`` (K, 2) towards a root.

    Scale-free: a root where the residual's own terms vanish passes, while a point where the whole
    field is merely tiny does not, since there its slope is as tiny as its value: where no move of
    ``flat`` could make up the residual the length is infinite. So is it where the residual or its
    slope is not finite. On a line of roots the least-squares step along the line is zero.

    Scale-aware: the step leaves out the part of the residual, along each of the Jacobian's singular
    directions, that is rounding against the steepest slope (``_ROUNDING`` times it). In a flat valley
    (singular values 1e6 apart or more) rounding alone, over the small singular value, would otherwise
    make a step longer than ``flat`` at the root itself.
    """
    f, jac = _linearized(residual, x, residual(x))
    out = np.full(len(x), np.inf)
    finite = np.all(np.isfinite(f), axis=1) & np.all(np.isfinite(jac), axis=(1, 2))
    resting = finite.copy()
    resting[finite] = np.max(np.abs(f[finite]), axis=1) <= flat * np.max(np.abs(jac[finite]), axis=(1, 2))
    left, sigma, right = np.linalg.svd(jac[resting])
    along = np.einsum("kij,ki->kj", left, f[resting])  # the residual along each singular direction
    kept = (np.abs(along) > _ROUNDING * sigma[:, :1]) & (sigma > _RCOND * sigma[:, :1])
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.einsum("kji,kj->ki", right, np.where(kept, along / sigma, 0.0))
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
        trial = np.clip(x[index] - step, 0.0, 1.0)
        trial_f = residual(trial)
        # A step that no longer lowers the residual is rounding's (a flat valley's Newton step wanders
        # by rounding over the small singular value): stop where the residual was least.
        better = np.sum(trial_f * trial_f, axis=1) < np.sum(f * f, axis=1)
        x[index[better]] = trial[better]
        moving[index[~better | (np.max(np.abs(step), axis=1) <= close)]] = False
    return x


VALLEY = 1e-3
"""A Jacobian whose singular values differ by more than this factor makes a valley worth following."""
VALLEYS = 2
"""At most this many valleys are followed (the starts that stall in one valley end close together)."""
_VALLEY_STEP = 1e-2  # the step along a valley's floor, in the square's units
_VALLEY_STEPS = 150  # most steps each way: a floor across the square is at most about 1.5 long


def _valley_roots(residual: Residual, x: np.ndarray, close: float) -> np.ndarray:
    """Roots (m, 2) found by following the floor of each flat valley that points ``x`` (K, 2) lie in.

    In such a valley the residual's strong combination ``g1 = u1.f`` (``u1`` its Jacobian's first left
    singular vector) is near zero and the weak one ``g2 = u2.f`` is not. The curve ``g1 = 0`` runs along
    the valley's floor through the root; it is followed both ways (a step along it, then Newton's
    correction across it) until ``g2`` changes sign, which bisection along the curve then closes in on:
    a sign, not a size, so however flat the valley.
    """
    f, jac = _linearized(residual, x, residual(x))
    finite = np.all(np.isfinite(f), axis=1) & np.all(np.isfinite(jac), axis=(1, 2))
    sigma = np.full((len(x), 2), np.nan)
    sigma[finite] = np.linalg.svd(jac[finite], compute_uv=False)
    stalled = finite & (sigma[:, 1] < VALLEY * sigma[:, 0]) & np.all((x > 0) & (x < 1), axis=1)
    found: list[np.ndarray] = []
    visited = np.zeros((0, 2))  # the floors followed so far: a point on one is in a valley already searched
    for k in np.flatnonzero(stalled)[np.argsort(np.sum(f[stalled] ** 2, axis=1))][:VALLEYS * 8]:
        if len(found) >= 2 * VALLEYS or (len(visited) and np.min(np.max(np.abs(visited - x[k]), axis=1))
                                         < 3 * _VALLEY_STEP):
            continue
        rotation = np.linalg.svd(jac[k])[0]  # columns u1, u2: f @ rotation = (g1, g2)
        for sign in (1.0, -1.0):  # one way, and the other only where the first finds no root
            root, path = _follow(residual, x[k], rotation, sign, close)
            visited = np.concatenate([visited, path, x[k][None]])
            if root is not None:
                found.append(root)
                break
    return np.array(found).reshape(-1, 2)


def _follow(residual: Residual, x0: np.ndarray, rotation: np.ndarray, sign: float,
            close: float) -> tuple[np.ndarray | None, np.ndarray]:
    """Follow ``g1 = 0`` from ``x0`` (2,) in the direction ``sign``: the point where ``g2`` changes sign
    (or None), and the floor's points visited (m, 2)."""
    def rotated(y: np.ndarray) -> np.ndarray:  # (K, 2) -> (g1, g2) (K, 2)
        return residual(y) @ rotation

    x, slope, value = _onto_floor(rotated, x0, close)
    heading = None
    path: list[np.ndarray] = []
    for _ in range(_VALLEY_STEPS):
        if x is None:
            break
        path.append(x)
        tangent = np.array([-slope[1], slope[0]]) / max(np.hypot(*slope), 1e-300)
        heading = sign * tangent if heading is None else np.copysign(1.0, tangent @ heading) * tangent
        y, slope, after = _onto_floor(rotated, x + _VALLEY_STEP * heading, close)
        if y is not None and np.sign(after) != np.sign(value):
            return _bisected(rotated, x, y, close), np.array(path)
        x, value = y, after
    return None, np.array(path).reshape(-1, 2)


def _onto_floor(rotated: Residual, x: np.ndarray,
                close: float) -> tuple[np.ndarray | None, np.ndarray, float]:
    """Newton across the valley from ``x`` (2,): the point of ``g1 = 0`` along ``grad g1`` (None when that
    leaves the open square or the slope vanishes), ``grad g1`` (2,) at the last step, and ``g2`` there."""
    grad, weak = np.zeros(2), 0.0
    for _ in range(8):
        if not np.all((x > 0) & (x < 1)):  # outside, a share is negative and its logit NaN
            return None, grad, weak
        value, slope = _linearized(rotated, x[None], rotated(x[None]))
        grad, weak = slope[0, 0], float(value[0, 1])
        norm = float(grad @ grad)
        if not np.isfinite(norm) or norm == 0:
            return None, grad, weak
        move = grad * value[0, 0] / norm
        x = x - move
        if np.max(np.abs(move)) <= close:
            break
    return (x if np.all((x > 0) & (x < 1)) else None), grad, weak


def _bisected(rotated: Residual, x: np.ndarray, y: np.ndarray, close: float) -> np.ndarray:
    """Bisection along the floor between ``x`` and ``y`` (2,), where ``g2`` has opposite signs."""
    side = np.sign(rotated(x[None])[0, 1])
    for _ in range(60):
        middle = _onto_floor(rotated, 0.5 * (x + y), close)[0]
        if middle is None or np.max(np.abs(y - x)) <= close:
            break
        if np.sign(rotated(middle[None])[0, 1]) == side:
            x = middle
        else:
            y = middle
    return x


def _linearized(residual: Residual, x: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``f`` and the Jacobians (K, 2, 2) of ``residual`` at points ``x`` (K, 2), by central differences.

    A probe outside the square (of a point within ``_H`` of its edge) is not evaluated: its shares
    would be negative. Its point's Jacobian is NaN, which the callers pass over as not finite.
    """
    if not len(x):
        return f.reshape(0, 2), np.zeros((0, 2, 2))
    probes = np.concatenate([x + _H * d for d in np.eye(2)] + [x - _H * d for d in np.eye(2)])
    inside = np.all((probes >= 0) & (probes <= 1), axis=1)
    values = np.full((len(probes), np.shape(f)[-1]), np.nan)
    if np.any(inside):
        values[inside] = residual(probes[inside])
    values = values.reshape(4, len(x), -1)
    return f, np.stack([(values[j] - values[2 + j]) / (2 * _H) for j in range(2)], axis=2)
