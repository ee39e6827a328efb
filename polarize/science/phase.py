"""The replicator picture of a softmax run: the field on the simplex, its rest points, and basins.

With ``V`` held at its value at some time, the scores move in a field of their
own: ``da/dt = J^T u`` with the fitness ``u = -V^T grad l(V s)`` (PAPER.md
section 1) and ``ds/dt = J da/dt``. Its rest points are those of the replicator
equation, ``s_i (u_i - s.u) = 0``: the vertices, and points of a face where
every token of the face has the same fitness. As ``V`` learns, the field and
its rest points move; the basin map says where each start really ends.

A *slice* shows n > 3 tokens through three of them: the other tokens keep the
logits of a reference start, and the three are drawn by their shares among
themselves, ``r = s_S / sum s_S``.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

import numpy as np
from scipy.optimize import root
from scipy.special import logsumexp

from polarize.config import Experiment
from polarize.ensemble import Ensemble, simulate_many
from polarize.integrate import simulate
from polarize.model import value_gradients
from polarize.normalizers import make_normalizer
from polarize.systems import build_loss

__all__ = ["Basins", "NaiveOdds", "RestPoint", "basins", "field_at", "naive_odds", "naive_winner",
           "portrait_field", "rest_points", "slice_logits", "slice_shares", "triangle_grid", "values_at"]

FD_STEP = 1e-6
"""Step of the central differences that linearize the field on a face."""


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
    e = experiment.resolved()
    normalizer = make_normalizer("softmax", temperature=e.temperature)
    with np.errstate(invalid="ignore"):
        grads = value_gradients(np.asarray(V), np.asarray(a, dtype=float), build_loss(e), normalizer)
        da = np.nan_to_num(-grads.grad_a)  # a token of share 0 does not move (0 * inf in J)
        return np.nan_to_num(normalizer.vjp(a, da)), grads.u


def portrait_field(experiment: Experiment, V: np.ndarray, resolution: int,
                   tokens: tuple[int, int, int] = (0, 1, 2)) -> tuple[np.ndarray, np.ndarray]:
    """The field on a ``resolution x resolution`` grid of the triangle of ``tokens`` (``V`` held fixed).

    Returns
    -------
    shares, velocity : ndarray, shape (resolution**2, 3)
        The points (shares of the three tokens among themselves) and the velocity of those shares.
    """
    e = experiment.resolved()
    shares = triangle_grid(resolution)
    a = slice_logits(shares, tokens, np.asarray(e.a0))
    ds, _ = field_at(e, V, a)
    mass = np.sum(make_normalizer("softmax", temperature=e.temperature).forward(a)[:, list(tokens)], axis=1)
    part = ds[:, list(tokens)]
    # r = s_S / m with m = sum s_S:  dr = (ds_S - r dm) / m.
    return shares, (part - shares * np.sum(part, axis=1, keepdims=True)) / mass[:, None]


def naive_winner(experiment: Experiment) -> int:
    """The token with the largest fitness at the uniform scores and ``V0``.

    For logistic loss on ``beta_*`` the fitness is ``c p`` with ``p = V0^T beta_*``:
    the largest ``p_i(0)``, which wins from ``a(0) = 0`` (PAPER.md section 3).
    """
    e = experiment.resolved()
    _, u = field_at(e, np.asarray(e.V0), np.zeros((1, e.n)))
    return int(np.argmax(u[0]))


@dataclass(frozen=True, kw_only=True)
class RestPoint:
    """A rest point of the field with ``V`` held fixed.

    Attributes
    ----------
    s : ndarray, shape (n,)
    support : tuple of int
        The tokens with a positive share.
    invasion : tuple of float
        For each token off the support, ``u_j - s.u``: it grows back (positive) or dies out.
    eigenvalues : tuple of complex
        Of the field linearized along the support's face (``len(support) - 1`` of them).
    stability : {"stable", "unstable", "saddle", "degenerate"}
    """

    s: np.ndarray
    support: tuple[int, ...]
    invasion: tuple[float, ...]
    eigenvalues: tuple[complex, ...]
    stability: str


def rest_points(experiment: Experiment, V: np.ndarray,
                tokens: tuple[int, ...] | None = None) -> list[RestPoint]:
    """Every rest point of the field on the face of ``tokens`` (default all; at most 4), with stability.

    On each face (support ``S``), solves ``u_i = u_j`` for ``i, j`` in ``S`` from a few starts
    and keeps the solutions strictly inside the face.
    """
    e = experiment.resolved()
    tokens = tuple(range(e.n)) if tokens is None else tuple(tokens)
    found: list[RestPoint] = []
    for size in range(1, len(tokens) + 1):
        for support in itertools.combinations(tokens, size):
            for s in _face_solutions(e, V, support):
                found.append(_classified(e, V, s, support, tokens))
    return found


def _on_face(x: np.ndarray, support: tuple[int, ...], n: int) -> np.ndarray:
    s = np.zeros(n)
    s[list(support)] = [*x, 1 - np.sum(x)]
    return s


def _logits(s: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):  # the root finder may try points off the face
        return np.log(s)


def _face_solutions(e: Experiment, V: np.ndarray, support: tuple[int, ...]) -> list[np.ndarray]:
    if len(support) == 1:
        return [_on_face(np.zeros(0), support, e.n)]
    k = len(support)

    def residual(x):
        _, u = field_at(e, V, _logits(_on_face(x, support, e.n))[None])
        u = u[0][list(support)]
        return u[:-1] - u[-1]

    guesses = [np.full(k - 1, 1 / k), *(np.eye(k)[i][:-1] * 0.8 + 0.2 / k for i in range(k))]
    out: list[np.ndarray] = []
    for guess in guesses:
        solution = root(residual, guess, method="hybr")
        s = _on_face(solution.x, support, e.n)
        scale = max(1.0, float(np.max(np.abs(field_at(e, V, _logits(s)[None])[1]))))
        inside = np.all(s[list(support)] > 1e-9)
        if solution.success and inside and np.max(np.abs(residual(solution.x))) < 1e-9 * scale:
            if not any(np.max(np.abs(s - other)) < 1e-6 for other in out):
                out.append(s)
    return out


def _classified(e: Experiment, V: np.ndarray, s: np.ndarray, support: tuple[int, ...],
                tokens: tuple[int, ...]) -> RestPoint:
    _, u = field_at(e, V, _logits(s)[None])
    u = u[0]
    invasion = tuple(float(u[j] - s @ u) for j in tokens if j not in support)
    eigenvalues = tuple(complex(v) for v in np.linalg.eigvals(_face_jacobian(e, V, s, support)))
    signs = np.array([*invasion, *(v.real for v in eigenvalues)])
    scale = max(1e-300, float(np.max(np.abs(u))))
    if np.any(np.abs(signs) <= 1e-7 * scale):
        stability = "degenerate"
    elif np.all(signs < 0):
        stability = "stable"
    elif np.all(signs > 0):
        stability = "unstable"
    else:
        stability = "saddle"
    return RestPoint(s=s, support=support, invasion=invasion, eigenvalues=eigenvalues, stability=stability)


def _face_jacobian(e: Experiment, V: np.ndarray, s: np.ndarray, support: tuple[int, ...]) -> np.ndarray:
    """The field's Jacobian along the face, in the coordinates ``x``: the support's shares but the last."""
    k = len(support)
    if k == 1:
        return np.zeros((0, 0))
    x0 = s[list(support)][:-1]
    steps = np.eye(k - 1) * FD_STEP
    points = np.concatenate([x0 + steps, x0 - steps])
    a = np.stack([_logits(_on_face(x, support, e.n)) for x in points])
    ds = field_at(e, V, a)[0][:, list(support)][:, :-1]
    return ((ds[:k - 1] - ds[k - 1:]) / (2 * FD_STEP)).T


@dataclass(frozen=True, kw_only=True, eq=False)
class Basins:
    """Where starts end: an ensemble over a grid on the triangle (or a slice), and the naive guess.

    Attributes
    ----------
    shares : ndarray, shape (K, 3)
        The starts, as shares of the three ``tokens`` among themselves.
    tokens : tuple of int
    ensemble : Ensemble
    naive : int
        The naive prediction (``naive_winner``).
    resolution : int
        The grid is ``resolution x resolution`` (``triangle_grid``).
    """

    shares: np.ndarray
    tokens: tuple[int, int, int]
    ensemble: Ensemble
    naive: int
    resolution: int

    @property
    def naive_holds(self) -> np.ndarray:
        """Whether the naive prediction wins, per start (K,)."""
        return self.ensemble.winner == self.naive

    def boundary(self) -> np.ndarray:
        """Shares (B, 3) midway between grid neighbours on either side of where the naive prediction fails."""
        holds = self.naive_holds.reshape(self.resolution, self.resolution)
        grid = self.shares.reshape(self.resolution, self.resolution, 3)
        points = []
        for axis in (0, 1):
            change = np.diff(holds.astype(int), axis=axis) != 0
            low = grid[:-1] if axis == 0 else grid[:, :-1]
            high = grid[1:] if axis == 0 else grid[:, 1:]
            points.append(((low + high) / 2)[change])
        return np.concatenate(points)


def basins(experiment: Experiment, resolution: int, tokens: tuple[int, int, int] = (0, 1, 2),
           *, trajectories: bool = False) -> Basins:
    """Run a ``resolution x resolution`` grid of starts on the triangle of ``tokens``.

    Tokens outside the triangle keep the logits of the experiment's own ``a0``.
    """
    e = experiment.resolved()
    shares = triangle_grid(resolution)
    ensemble = simulate_many(e, slice_logits(shares, tokens, np.asarray(e.a0)), trajectories=trajectories)
    return Basins(shares=shares, tokens=tuple(tokens), ensemble=ensemble, naive=naive_winner(e),
                  resolution=resolution)


@dataclass(frozen=True, kw_only=True)
class NaiveOdds:
    """How often the naive prediction wins, against the scale of random starting logits.

    Attributes
    ----------
    scales : ndarray, shape (S,)
    odds, low, high : ndarray, shape (S,)
        The fraction of starts the naive token won, and its 95% Wilson interval.
    starts : int
        Starts per scale.
    """

    scales: np.ndarray
    odds: np.ndarray
    low: np.ndarray
    high: np.ndarray
    starts: int


def naive_odds(experiment: Experiment, scales, starts: int, seed: int = 0) -> NaiveOdds:
    """The chance that ``naive_winner`` wins from ``a(0) = scale * randn(n)``, for each scale."""
    e = experiment.resolved()
    scales = np.asarray(scales, dtype=float)
    noise = np.random.default_rng(seed).standard_normal((len(scales), starts, e.n))
    a0 = (scales[:, None, None] * noise).reshape(-1, e.n)
    wins = simulate_many(e, a0).winner.reshape(len(scales), starts) == naive_winner(e)
    odds = wins.mean(axis=1)
    z = 1.959964  # two-sided 95%
    centre = (odds + z**2 / (2 * starts)) / (1 + z**2 / starts)
    half = z * np.sqrt(odds * (1 - odds) / starts + z**2 / (4 * starts**2)) / (1 + z**2 / starts)
    return NaiveOdds(scales=scales, odds=odds, low=centre - half, high=centre + half, starts=starts)
