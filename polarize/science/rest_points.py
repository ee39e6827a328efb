"""The rest points of the replicator field on a triangle of three tokens, and their stability.

With ``V`` held fixed the scores move in the field of ``polarize.science.flow_field``.
Its rest points are those of the replicator equation, ``s_i (u_i - s.u) = 0``:
the vertices, and points of a face where every token of the face has the same
fitness (docs/derivations.md section 1).

On a slice (n > 3 tokens seen through three) the shares ``r = s_S / sum s_S``
move as ``dr_i/dt = r_i (da_i - r.da_S) / T``, so the slice's rest points are its
vertices and the points of its faces where the face's logits move at one
common speed ``c`` (for n = 3, ``c = 0``: equal fitness). Off the face a share
then grows at the rate ``-c / T``, the same for every token off it. Where
``c = 0`` (always for n = 3) that linear rate vanishes; the field ``J(Ju)``
then has the inertia of the replicator field ``Ju``, whose rate off the face is
``(u_j - s.u) / T``: its sign decides.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit

from polarize.config import Experiment
from polarize.losses import LinearLoss, Square
from polarize.normalizers import make_normalizer
from polarize.science.flow_field import slice_field, slice_logits
from polarize.science.square_search import crossing_cells, newton_steps, roots_in_square, same_roots
from polarize.systems import build_loss

__all__ = ["RestPoint", "rest_points"]

Corners = np.ndarray | None
"""The corners (m, 3) of the set of rest points a found point stands for, or None for an isolated one."""

FD_STEP = 1e-6
"""Largest step of the central differences that linearize the field on a face."""
ZERO = 1e-6
"""A rate or eigenvalue this small against the fitness's size (over T, or T^2) counts as zero: degenerate."""
EDGE_SCAN = 400
"""Points along an edge at which a non-affine fitness's rest condition is scanned for sign changes."""
ROUNDING = 1e-7
"""A fitness this small against its size at the vertices is rounding where the loss's gradient can vanish."""
EDGE_LOGIT = 36.0
"""The edge scan also covers the shares ``expit(z)``, ``|z| <= EDGE_LOGIT``: to 2e-16 of each vertex."""
INSIDE_STARTS = 8
"""Starts per side of the even grid from which rest points inside the triangle are sought (and crossings)."""
INSIDE_GRID = 80
"""Cells per side of the grid whose crossings of the two rest conditions start the search inside: evenly
in each coordinate of the unit square, and evenly in its logit to ``INSIDE_LOGIT`` (near the edges)."""
INSIDE_LOGIT = 16.0
"""The inside grid reaches the coordinates ``expit(z)``, ``|z| <= INSIDE_LOGIT``: to 1e-7 of each edge."""
MOST_STARTS = 400
"""At most this many crossing cells start the search (where the rest conditions vanish on a patch, all do)."""
SAME = 1e-6
"""Answers of one group spread wider than this (in shares) are a set of rest points, not one point: an
isolated root's answers lie within its Newton step's tolerance (``NEWTON``), however flat its valley."""
NEWTON = 1e-9
"""An inside point counts as a rest point when the Newton step to the root there is this short (in shares)."""
VERTEX = 1e-12
"""A point of a face whose smallest share is this small is the vertex or edge beside it (found there)."""
BORDER = 1e-7
"""An inside answer this close to an edge is that edge's rest point (found on the edge) or its vertex's."""


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
        is zero (always on the whole simplex) it is the replicator's rate ``(u_j - s.u) / T``, whose
        sign the field ``J(Ju)`` shares.
    eigenvalues : tuple of complex
        Of the field linearized along the support's face (``len(support) - 1`` of them).
    stability : {"stable", "unstable", "saddle", "degenerate"}
        By the signs of ``invasion`` and of the eigenvalues' real parts; "degenerate" where one of
        them is zero against its own size (the linearization does not decide): the eigenvalues shrink
        with the square of the face's smallest share, and are read against a threshold that does too.
        For a point of a ``continuum`` the zero eigenvalues along it are left out: "stable" then says
        the continuum attracts the runs near it; a whole triangle at rest has no rate left: "degenerate".
    continuum : ndarray, shape (m, 3), or None
        Where the point is one of a whole segment (or face) of rest points, as under a rank-deficient
        ``V`` (d < n) for any loss: the corners of that set on the triangle (a segment's two ends);
        ``shares`` is its middle. None for an isolated rest point.
    """

    s: np.ndarray
    shares: np.ndarray
    support: tuple[int, ...]
    invasion: tuple[float, ...]
    eigenvalues: tuple[complex, ...]
    stability: str
    continuum: np.ndarray | None = None


def rest_points(experiment: Experiment, V: np.ndarray,
                tokens: tuple[int, int, int] = (0, 1, 2)) -> list[RestPoint]:
    """Every rest point of the field on the triangle of ``tokens`` (``slice_field``), with its stability.

    On each face of the triangle (support ``S``) a rest point is where the face's logits move at one
    common speed (on the whole simplex: ``u_i = u_j`` for ``i, j`` in ``S``). Under the square loss the
    fitness ``u = b - G s`` is affine in ``s`` (``b = (XV)^T y``, ``G = (XV)^T XV``), and on the whole
    simplex each face is one linear system, ``G_SS s_S + lambda 1 = b_S``, ``1.s_S = 1``, solved exactly;
    on a slice an edge's condition is a cubic in its one share, whose roots are exact. Elsewhere edges
    are scanned for sign changes, and inside a root finder that never leaves the face runs from every
    grid cell where both conditions change sign (``_searched_inside``); only the answers at which the
    field really stands still are kept. Whatever the loss, a face whose conditions vanish everywhere
    rests whole, and roots that form a line are given as one. The vertices always rest.
    """
    e = experiment.resolved()
    V = np.asarray(V, dtype=float)
    affine = _affine_fitness(e, V)
    found: list[RestPoint] = []
    for size in (1, 2, 3):
        for face in itertools.combinations(range(3), size):
            ends = _continuum(affine, face) if affine is not None and e.n == 3 and size > 1 else None
            if ends is not None:
                if len(ends):
                    found.append(_classified(e, V, np.mean(ends, axis=0), face, tokens, ends))
                continue
            for r, corners in _face_solutions(e, V, face, tokens, affine):
                found.append(_classified(e, V, r, face, tokens, corners))
    return found


def _face_system(affine: tuple[np.ndarray, np.ndarray],
                 face: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The face's equal-fitness system ``G_SS s_S + lambda 1 = b_S``, ``1.s_S = 1`` as (matrix, rhs)."""
    b, G = affine
    k = len(face)
    system = np.zeros((k + 1, k + 1))
    system[:k, :k] = G[np.ix_(face, face)]
    system[:k, k] = system[k, :k] = 1.0
    return system, np.append(b[list(face)], 1.0)


def _continuum(affine: tuple[np.ndarray, np.ndarray], face: tuple[int, ...]) -> np.ndarray | None:
    """The corners (m, 3) of the face's set of rest points where it is more than a point; else None.

    The face's system ``G_SS s_S + lambda 1 = b_S``, ``1.s_S = 1`` is singular where ``G = W^T W`` has
    rank below the face's size (a rank-deficient ``V``): when it is consistent, its solutions form a
    line (or the whole face), cut to the face by ``s_S > 0``. An empty array: the line misses the face.
    """
    k = len(face)
    system, rhs = _face_system(affine, face)
    _, sigma, vt = np.linalg.svd(system)
    null = vt[sigma <= 1e-10 * sigma[0]][:, :k]
    solution, *_ = np.linalg.lstsq(system, rhs, rcond=1e-10)
    if not len(null) or np.max(np.abs(system @ solution - rhs)) > 1e-9 * max(1.0, float(np.max(np.abs(rhs)))):
        return None
    if len(null) > 1 or k == 2:
        ends = np.eye(3)[list(face)]  # the whole face (an edge, or the triangle) rests
        return ends
    return _segment(solution[:k], null[0], face)


def _segment(point: np.ndarray, direction: np.ndarray, face: tuple[int, ...]) -> np.ndarray:
    """The ends (2, 3) of the line ``point + t direction`` (the face's shares, (k,)) where every share of
    the face is positive; an empty (0, 3) where the line misses the face."""
    k = len(face)
    with np.errstate(divide="ignore", invalid="ignore"):
        bounds = -point / direction
    low = np.max(bounds[direction > 0], initial=-np.inf)
    high = np.min(bounds[direction < 0], initial=np.inf)
    if not low < high:
        return np.zeros((0, 3))
    return np.stack([_on_face((point + t * direction)[:k - 1], face) for t in (low, high)])


def _affine_fitness(e: Experiment, V: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(b, G)`` with ``u(s) = b - G s`` (n,), (n, n), where the fitness is affine in ``s``; else None."""
    loss = build_loss(e)
    if not isinstance(loss, Square):
        return None
    W = loss.X @ V
    return W.T @ loss.y, W.T @ W


def _on_face(x: np.ndarray, face: tuple[int, ...]) -> np.ndarray:
    r = np.zeros(3)
    r[list(face)] = [*x, 1 - np.sum(x)]
    return r


def _face_rates(e: Experiment, V: np.ndarray, r: np.ndarray, face: tuple[int, ...],
                tokens: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The face's rest condition, (K, len(face) - 1) at points (K, 3), and the fitness (K, n).

    On a slice: the face's logit velocities minus the last one's. On the whole simplex (n = 3): the
    face's fitness minus the last one's, whose zeros are the same points (``da_i = s_i (u_i - s.u)``)
    but which does not fade with the shares near a vertex, where rounding would fake sign changes.
    """
    _, da, u = slice_field(e, V, np.atleast_2d(r), tokens)
    on = (u if e.n == 3 else da)[:, [tokens[i] for i in face]]
    return on[:, :-1] - on[:, -1:], u


def _face_solutions(e: Experiment, V: np.ndarray, face: tuple[int, ...], tokens: tuple[int, int, int],
                    affine: tuple[np.ndarray, np.ndarray] | None) -> list[tuple[np.ndarray, Corners]]:
    """The face's rest points (3,) each with the corners of the set of rest points it stands for (or None)."""
    if len(face) == 1:
        return [(_on_face(np.zeros(0), face), None)]
    if len(face) == 2 and not (affine is not None and e.n == 3) and _resting_edge(e, V, face, tokens):
        ends = np.eye(3)[list(face)]
        return [(np.mean(ends, axis=0), ends)]
    if len(face) == 3 and not (affine is not None and e.n == 3):
        return _searched_inside(e, V, face, tokens)
    if affine is not None and e.n == 3:
        candidates = _exact_simplex(affine, face)
    elif affine is not None and len(face) == 2:
        candidates = _cubic_edge(e, V, face, tokens)
    else:
        candidates = _scanned_edge(e, V, face, tokens)
    out: list[np.ndarray] = []
    for r in candidates:
        if np.all(r[list(face)] > VERTEX) and not any(np.max(np.abs(r - other)) < 1e-9 for other in out):
            out.append(r)
    return [(r, None) for r in out]


def _resting_edge(e: Experiment, V: np.ndarray, face: tuple[int, ...], tokens: tuple[int, int, int]) -> bool:
    """Whether the edge's rest condition vanishes along the whole edge (to rounding): the edge rests.

    The condition is analytic in the edge's share, so it either has isolated zeros or is zero
    everywhere (as when ``V``'s rank leaves the loss at its floor along the edge); a scan tells which.
    """
    x = np.linspace(0, 1, EDGE_SCAN + 1)[1:-1]
    return _resting_face(e, V, np.stack([_on_face(np.array([xi]), face) for xi in x]), face, tokens)


def _resting_face(e: Experiment, V: np.ndarray, r: np.ndarray, face: tuple[int, ...],
                  tokens: tuple[int, int, int]) -> bool:
    """Whether the face's rest conditions vanish (to rounding) at every point ``r`` (K, 3) of a scan of it."""
    rates, _ = _face_rates(e, V, r, face, tokens)
    # the condition is a difference of fitnesses (n = 3) or of logit velocities, at most 2 |u| / T
    tolerance = _rounding(e, V, tokens) * (1.0 if e.n == 3 else 2.0 / e.temperature)
    return bool(np.all(np.abs(rates) <= tolerance))


def _exact_simplex(affine: tuple[np.ndarray, np.ndarray], face: tuple[int, ...]) -> list[np.ndarray]:
    """The face's point of equal fitness: ``G_SS s_S + lambda 1 = b_S``, ``1.s_S = 1`` (n = 3)."""
    k = len(face)
    system, rhs = _face_system(affine, face)
    solution, *_ = np.linalg.lstsq(system, rhs, rcond=None)
    if np.max(np.abs(system @ solution - rhs)) > 1e-9 * max(1.0, float(np.max(np.abs(rhs)))):
        return []  # singular and inconsistent: no point of the face has equal fitness
    r = np.zeros(3)
    r[list(face)] = solution[:k]
    return [r]


def _cubic_edge(e: Experiment, V: np.ndarray, face: tuple[int, ...],
                tokens: tuple[int, int, int]) -> list[np.ndarray]:
    """On a slice's edge ``da_i - da_j`` is a cubic in the share ``x`` of ``i`` (``s`` affine in ``x``,
    ``u`` affine in ``s``): four values fix it, its real roots in (0, 1) are the edge's rest points."""
    x = 0.5 - 0.5 * np.cos(np.pi * (np.arange(4) + 0.5) / 4)
    values = _face_rates(e, V, np.stack([_on_face(np.array([xi]), face) for xi in x]), face, tokens)[0][:, 0]
    roots = np.roots(np.polyfit(x, values, 3))
    return [_on_face(np.array([z.real]), face) for z in roots
            if abs(z.imag) < 1e-9 and 0 < z.real < 1]


def _scanned_edge(e: Experiment, V: np.ndarray, face: tuple[int, ...],
                  tokens: tuple[int, int, int]) -> list[np.ndarray]:
    """Sign changes of ``da_i - da_j`` along the edge, each closed in by bisection (never off the edge)."""
    # Evenly in the share and evenly in its logit: a rest point close to a vertex (a sharp softmax, large
    # values) lies between grid points near the ends that an even grid alone steps over.
    x = np.unique(np.concatenate([np.linspace(0, 1, EDGE_SCAN + 1)[1:-1],
                                  expit(np.linspace(-EDGE_LOGIT, EDGE_LOGIT, EDGE_SCAN + 1))]))
    x = x[(x > 0) & (x < 1)]
    values = _face_rates(e, V, np.stack([_on_face(np.array([xi]), face) for xi in x]), face, tokens)[0][:, 0]

    def residual(xi: float) -> float:
        return float(_face_rates(e, V, _on_face(np.array([xi]), face), face, tokens)[0][0, 0])

    out = [_on_face(np.array([xi]), face) for xi, v in zip(x, values, strict=True) if v == 0]
    for k in np.flatnonzero(values[:-1] * values[1:] < 0):
        out.append(_on_face(np.array([brentq(residual, x[k], x[k + 1], xtol=1e-15, rtol=1e-15)]), face))
    return out


def _searched_inside(e: Experiment, V: np.ndarray, face: tuple[int, ...],
                     tokens: tuple[int, int, int]) -> list[tuple[np.ndarray, Corners]]:
    """Roots inside the triangle, in coordinates ``(p, q)`` of the unit square (shares ``p, (1-p) q,
    (1-p)(1-q)``), each with the corners of the set of rest points it stands for (or None).

    The search (``square_search``) starts in every cell of a grid where both rest conditions change sign
    (a crossing of their zero curves, found however flat the valley they meet in; the grid is also even in
    the logit, so points a few thousandths from an edge have cells of their own) and from an even grid.
    An answer counts only where the field stands still to rounding (its Newton step under ``NEWTON``);
    answers one root or one connected set of roots are grouped (``same_roots``). A group spread wider
    than ``SAME`` is a set of rest points, whose dimension is what the rank of the rest conditions leaves:
    where they vanish on the whole face (rank 0: checked first), the whole triangle; else a line (rank 1),
    its ends where it leaves the triangle.
    """
    def shares(pq: np.ndarray) -> np.ndarray:  # (K, 2) -> (K, 3)
        return np.stack([pq[:, 0], (1 - pq[:, 0]) * pq[:, 1], (1 - pq[:, 0]) * (1 - pq[:, 1])], axis=1)

    def residual(pq: np.ndarray) -> np.ndarray:  # (K, 2) -> (K, 2)
        return _face_rates(e, V, shares(pq), face, tokens)[0]

    axis = np.unique(np.concatenate([np.linspace(0, 1, INSIDE_GRID + 1),
                                     expit(np.linspace(-INSIDE_LOGIT, INSIDE_LOGIT, INSIDE_GRID + 1))]))
    if _resting_face(e, V, shares(np.stack(np.meshgrid(axis, axis), axis=-1).reshape(-1, 2)), face, tokens):
        return [(np.full(3, 1 / 3), np.eye(3))]  # the rest conditions vanish everywhere: rank 0
    grid = (np.arange(INSIDE_STARTS) + 0.5) / INSIDE_STARTS
    starts = np.concatenate([crossing_cells(residual, axis, most=MOST_STARTS),
                             np.array(list(itertools.product(grid, grid)))])
    x = roots_in_square(residual, starts, close=NEWTON * 1e-3)
    x = x[newton_steps(residual, x, flat=NEWTON) <= NEWTON]
    found = np.unique(shares(x[np.min(shares(x), axis=1) > BORDER]), axis=0)

    def on_triangle(xy: np.ndarray) -> np.ndarray:  # the rest conditions at shares (K, 2) and their third
        return _face_rates(e, V, np.concatenate([xy, 1 - np.sum(xy, axis=1, keepdims=True)], axis=1),
                           face, tokens)[0]

    out: list[tuple[np.ndarray, Corners]] = []
    # grouped in the shares themselves, where a line of rest points (a loss at its floor along an affine
    # set of V s) is straight, so the point halfway between two of its points is on it
    for members in same_roots(on_triangle, found[:, :2], flat=NEWTON):
        points = found[members]
        if np.max(np.ptp(points, axis=0)) <= SAME:
            out.append((points[np.argmin(np.max(np.abs(on_triangle(points[:, :2])), axis=1))], None))
            continue
        ends = _resting_set(points, face)
        out.append((np.mean(ends, axis=0), ends))
    return out


def _resting_set(points: np.ndarray, face: tuple[int, ...]) -> np.ndarray:
    """The ends (2, 3) of the line of rest points through ``points`` (K, 3), where it leaves the triangle.

    The rest conditions are analytic: where their Jacobian vanishes on a patch they vanish on the whole
    face (``_resting_face``, the rank 0 case, found before the search); otherwise a set of rest points
    wider than a point has rank 1, a curve, which for these losses is straight (the loss at its floor
    along an affine set of ``V s``): drawn along the points' spread.
    """
    centre = np.mean(points, axis=0)
    ends = _segment(centre, np.linalg.svd(points - centre)[2][0], face)
    return ends if len(ends) else points[[0, -1]]


def _classified(e: Experiment, V: np.ndarray, r: np.ndarray, face: tuple[int, ...],
                tokens: tuple[int, int, int], ends: np.ndarray | None = None) -> RestPoint:
    _, da, u = slice_field(e, V, r[None], tokens)
    da, u = da[0], u[0]
    s = make_normalizer("softmax", temperature=e.temperature).forward(
        slice_logits(r[None], tokens, np.asarray(e.a0), e.temperature))[0]
    off = [i for i in range(3) if i not in face]
    common = float(np.mean(da[[tokens[i] for i in face]]))
    scale = max(1e-300, float(np.max(np.abs(u))), _rounding(e, V, tokens)) / e.temperature
    if abs(common) > 1e-7 * scale:
        # On a slice the shares off the face move at a linear rate: dr_j/r_j -> (0 - r.da) / T.
        invasion = tuple(-common / e.temperature for _ in off)
    else:
        # Where the linear rate vanishes (always on the whole simplex) the field ds/dt = J(Ju) has the
        # inertia of the replicator field Ju: a token off the face grows back exactly when its fitness
        # beats the mean, at the replicator's rate (u_j - s.u) / T.
        invasion = tuple(float(u[tokens[i]] - s @ u) / e.temperature for i in off)
    eigenvalues = tuple(complex(v) for v in np.linalg.eigvals(_face_jacobian(e, V, r, face, tokens)))
    transverse = np.array(eigenvalues)
    if ends is not None:  # leave out the zero rates along the continuum (one per dimension of it)
        transverse = transverse[np.argsort(np.abs(transverse))][len(ends) - 1:]
    stability = _stability(np.array(invasion), transverse, scale, scale * _face_spread(face, s, tokens) ** 2,
                           e.temperature)
    return RestPoint(s=s, shares=r, support=tuple(tokens[i] for i in face), invasion=invasion,
                     eigenvalues=eigenvalues, stability=stability, continuum=ends)


def _rounding(e: Experiment, V: np.ndarray, tokens: tuple[int, int, int]) -> float:
    """The size below which a fitness is rounding, not a value: its sign then says nothing.

    Square and cross-entropy losses reach zero gradient (their runs end there, or along a line of such
    points when V is rank-deficient), where ``u = -V^T grad l`` is a difference of terms the size of the
    fitness elsewhere: ``ROUNDING`` times its largest size at the triangle's vertices. The logistic
    loss's gradient ``-c beta_*`` never vanishes and keeps its relative precision however small ``c``
    is, so there a tiny fitness still has a sign.
    """
    if isinstance(build_loss(e), LinearLoss) and not isinstance(build_loss(e), Square):
        return 0.0
    u = slice_field(e, V, np.eye(3), tokens)[2]
    return ROUNDING * float(np.max(np.abs(u)))


def _face_spread(face: tuple[int, ...], s: np.ndarray, tokens: tuple[int, int, int]) -> float:
    """How far the scores can move along the face: the smallest of the face's ``k - 1`` nonzero
    eigenvalues of ``diag(s_S) - s_S s_S^T`` (the softmax's Jacobian there, times T), 1 at a vertex.

    Along the face the field is ``J J du`` (``J u`` vanishes at the rest point), so its eigenvalues
    are the fitness's slope times the square of this: a share ``x`` from a vertex makes them ``~x^2``
    however hyperbolic the point is.
    """
    if len(face) == 1:
        return 1.0
    part = s[[tokens[i] for i in face]]
    return float(np.sort(np.linalg.eigvalsh(np.diag(part) - np.outer(part, part)))[1])


def _stability(invasion: np.ndarray, eigenvalues: np.ndarray, scale: float, along: float,
               temperature: float) -> str:
    """Stable, unstable or saddle by the signs of the linearization; degenerate where one is zero.

    ``scale`` is the size of the fitness (over the temperature): invasion rates are read against it, the
    face's eigenvalues (which scale like ``x^2 G / T^2``, ``x`` the face's spread ``_face_spread``)
    against ``along = scale x^2`` over the temperature. A point with no rate left to read (a whole
    triangle at rest) is degenerate: nothing there moves towards or away from it.
    """
    flat = np.abs(eigenvalues.real) <= ZERO * along / temperature
    if not len(invasion) + len(eigenvalues) or np.any(np.abs(invasion) <= ZERO * scale) or np.any(flat):
        return "degenerate"
    signs = np.concatenate([invasion, eigenvalues.real])
    if np.all(signs < 0):
        return "stable"
    if np.all(signs > 0):
        return "unstable"
    return "saddle"


def _face_jacobian(e: Experiment, V: np.ndarray, r: np.ndarray, face: tuple[int, ...],
                   tokens: tuple[int, int, int]) -> np.ndarray:
    """The field's Jacobian along the face, in the coordinates ``x``: the face's shares but the last.

    Central differences with a step that keeps every probe on the face.
    """
    k = len(face)
    if k == 1:
        return np.zeros((0, 0))
    step = min(FD_STEP, 0.25 * float(np.min(r[list(face)])))
    x0 = r[list(face)][:-1]
    steps = np.eye(k - 1) * step
    points = np.stack([_on_face(x, face) for x in np.concatenate([x0 + steps, x0 - steps])])
    with np.errstate(divide="ignore"):
        dr = slice_field(e, V, points, tokens)[0][:, list(face)][:, :-1]
    return ((dr[:k - 1] - dr[k - 1:]) / (2 * step)).T
