"""The replicator picture of a softmax run: the field on the simplex, its rest points, and basins.

With ``V`` held at its value at some time, the scores move in a field of their
own: ``da/dt = J^T u`` with the fitness ``u = -V^T grad l(V s)`` (docs/derivations.md
section 1) and ``ds/dt = J da/dt``. Its rest points are those of the replicator
equation, ``s_i (u_i - s.u) = 0``: the vertices, and points of a face where
every token of the face has the same fitness. As ``V`` learns, the field and
its rest points move; the basin map (``polarize.science.basins``) says where
each start really ends.

A *slice* shows n > 3 tokens through three of them: the other tokens keep the
logits of a reference start, and the three are drawn by their shares among
themselves, ``r = s_S / sum s_S``. Those shares move as
``dr_i/dt = r_i (da_i - r.da_S) / T``, so the slice's rest points are its
vertices and the points of its faces where the face's logits move at one
common speed ``c`` (for n = 3, ``c = 0``: equal fitness). Off the face a share
then grows at the rate ``-c / T``, the same for every token off it; where
``c = 0`` it grows like its share squared, and the sign of that term decides.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

import numpy as np
from scipy.optimize import root
from scipy.special import logsumexp

from polarize.config import Experiment
from polarize.integrate import simulate
from polarize.model import value_gradients
from polarize.normalizers import make_normalizer
from polarize.systems import build_loss

__all__ = ["RestPoint", "field_at", "naive_winner", "portrait_field", "rest_points", "slice_logits",
           "slice_shares", "triangle_grid", "values_at"]

FD_STEP = 1e-6
"""Step of the central differences that linearize the field on a face."""
INVADE_STEP = 1e-4
"""Share off a face at which an invader's growth is read, where it grows like its share squared."""


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
    root_x = np.sqrt(x.ravel())
    return np.stack([1 - root_x, root_x * (1 - y.ravel()), root_x * y.ravel()], axis=1)


def slice_logits(shares: np.ndarray, tokens: tuple[int, int, int], reference: np.ndarray) -> np.ndarray:
    """Logits (K, n) whose shares among ``tokens`` are ``shares`` (K, 3); the others keep ``reference`` (n,).

    The three tokens keep the total share they have at ``reference``, so for n = 3 the
    logits are ``log shares`` plus a constant.
    """
    a = np.repeat(np.asarray(reference, dtype=float)[None], len(shares), axis=0)
    mass = logsumexp(np.asarray(reference)[list(tokens)])
    with np.errstate(divide="ignore"):
        a[:, list(tokens)] = np.log(shares) + mass
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
    a = slice_logits(shares, tokens, np.asarray(e.a0))
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


@dataclass(frozen=True, kw_only=True)
class RestPoint:
    """A rest point of the field on the triangle of three tokens, with ``V`` held fixed.

    Attributes
    ----------
    s : ndarray, shape (n,)
        The scores there.
    shares : ndarray, shape (3,)
        The point on the triangle: the three tokens' shares among themselves (for n = 3, ``s``).
    support : tuple of int
        The triangle's tokens with a positive share.
    invasion : tuple of float
        For each of the triangle's tokens off the support: positive when its share grows back from
        near zero, negative when it dies out. On a slice (n > 3) it is the share's growth rate
        ``(dr_j/dt) / r_j`` there, ``-c/T`` for the support's common logit velocity ``c``; where that
        is zero (always on the whole simplex, whose faces have ``ds_j ~ s_j^2``) it is the next
        term, ``lim (dr_j/dt) / r_j^2`` (at a vertex, ``2 (u_j - s.u)``).
    eigenvalues : tuple of complex
        Of the field linearized along the support's face (``len(support) - 1`` of them).
    stability : {"stable", "unstable", "saddle", "degenerate"}
    """

    s: np.ndarray
    shares: np.ndarray
    support: tuple[int, ...]
    invasion: tuple[float, ...]
    eigenvalues: tuple[complex, ...]
    stability: str


def rest_points(experiment: Experiment, V: np.ndarray,
                tokens: tuple[int, int, int] = (0, 1, 2)) -> list[RestPoint]:
    """Every rest point of the field on the triangle of ``tokens`` (``slice_field``), with its stability.

    On each face of the triangle (support ``S``), solves ``da_i/dt = da_j/dt`` for ``i, j`` in ``S``
    (the shares among ``S`` stand still; on the whole simplex this is ``u_i = u_j``) from a few
    starts, and keeps the solutions strictly inside the face. The vertices always rest.
    """
    e = experiment.resolved()
    found: list[RestPoint] = []
    for size in (1, 2, 3):
        for face in itertools.combinations(range(3), size):
            for r in _face_solutions(e, V, face, tokens):
                found.append(_classified(e, V, r, face, tokens))
    return found


def _on_face(x: np.ndarray, face: tuple[int, ...]) -> np.ndarray:
    r = np.zeros(3)
    r[list(face)] = [*x, 1 - np.sum(x)]
    return r


def _face_solutions(e: Experiment, V: np.ndarray, face: tuple[int, ...],
                    tokens: tuple[int, int, int]) -> list[np.ndarray]:
    if len(face) == 1:
        return [_on_face(np.zeros(0), face)]
    k, on = len(face), [tokens[i] for i in face]

    def rates(x):
        with np.errstate(divide="ignore", invalid="ignore"):  # the root finder may try points off the face
            _, da, u = slice_field(e, V, _on_face(x, face)[None], tokens)
        return da[0][on], u[0]

    def residual(x):
        da, _ = rates(x)
        return da[:-1] - da[-1]

    guesses = [np.full(k - 1, 1 / k), *(np.eye(k)[i][:-1] * 0.8 + 0.2 / k for i in range(k))]
    out: list[np.ndarray] = []
    for guess in guesses:
        solution = root(residual, guess, method="hybr")
        r = _on_face(solution.x, face)
        if not (solution.success and np.all(r[list(face)] > 1e-9)):
            continue
        scale = max(1.0, float(np.max(np.abs(rates(solution.x)[1]))))
        if np.max(np.abs(residual(solution.x))) < 1e-9 * scale and not any(
                np.max(np.abs(r - other)) < 1e-6 for other in out):
            out.append(r)
    return out


def _classified(e: Experiment, V: np.ndarray, r: np.ndarray, face: tuple[int, ...],
                tokens: tuple[int, int, int]) -> RestPoint:
    _, da, u = slice_field(e, V, r[None], tokens)
    da, u = da[0], u[0]
    s = make_normalizer("softmax", temperature=e.temperature).forward(slice_logits(r[None], tokens,
                                                                                  np.asarray(e.a0)))[0]
    off = [i for i in range(3) if i not in face]
    common = float(np.mean(da[[tokens[i] for i in face]]))
    scale = max(1e-300, float(np.max(np.abs(u))))
    if abs(common) > 1e-9 * scale:
        # On a slice the shares off the face move at a linear rate: dr_j/r_j -> (0 - r.da) / T.
        invasion = tuple(-common / e.temperature for _ in off)
    else:
        invasion = tuple(_quadratic_rate(e, V, r, i, tokens) for i in off)
    eigenvalues = tuple(complex(v) for v in np.linalg.eigvals(_face_jacobian(e, V, r, face, tokens)))
    signs = np.array([*invasion, *(v.real for v in eigenvalues)])
    if np.any(np.abs(signs) <= 1e-7 * scale):
        stability = "degenerate"
    elif np.all(signs < 0):
        stability = "stable"
    elif np.all(signs > 0):
        stability = "unstable"
    else:
        stability = "saddle"
    return RestPoint(s=s, shares=r, support=tuple(tokens[i] for i in face), invasion=invasion,
                     eigenvalues=eigenvalues, stability=stability)


def _quadratic_rate(e: Experiment, V: np.ndarray, r: np.ndarray, i: int,
                    tokens: tuple[int, int, int]) -> float:
    """``lim (dr_i/dt) / r_i^2`` moving from ``r`` towards vertex ``i``, read off the field at two shares.

    Where the linear rate vanishes, ``(dr_i/dt) / r_i = k x + O(x^2)`` at share ``x``; two values give ``k``
    with the ``x^2`` term cancelled. (At a vertex ``k = 2 (u_i - s.u)``; on an edge the face's fitness
    also shifts as ``i`` comes in, so ``u_i - s.u`` alone can have the wrong sign.)
    """
    x = np.array([INVADE_STEP, 2 * INVADE_STEP])
    points = (1 - x)[:, None] * r + x[:, None] * np.eye(3)[i]
    with np.errstate(divide="ignore"):
        rate = slice_field(e, V, points, tokens)[0][:, i] / x
    return float(2 * rate[0] / x[0] - rate[1] / x[1])


def _face_jacobian(e: Experiment, V: np.ndarray, r: np.ndarray, face: tuple[int, ...],
                   tokens: tuple[int, int, int]) -> np.ndarray:
    """The field's Jacobian along the face, in the coordinates ``x``: the face's shares but the last."""
    k = len(face)
    if k == 1:
        return np.zeros((0, 0))
    x0 = r[list(face)][:-1]
    steps = np.eye(k - 1) * FD_STEP
    points = np.stack([_on_face(x, face) for x in np.concatenate([x0 + steps, x0 - steps])])
    with np.errstate(divide="ignore"):
        dr = slice_field(e, V, points, tokens)[0][:, list(face)][:, :-1]
    return ((dr[:k - 1] - dr[k - 1:]) / (2 * FD_STEP)).T
