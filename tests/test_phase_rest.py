"""The phase portrait's rest points against an enumeration written here, apart from the page's code.

With V frozen under the square loss (X = I, y = beta_*) the fitness u(s) = V^T y - V^T V s is affine,
so on each face S of the simplex the rest point solves G_SS s_S + lambda 1 = V_S^T y, 1.s_S = 1
exactly. The frozen flow decreases f(s) = |V s - y|^2 / 2, so a rest point is stable when f has a
strict local minimum there on the simplex: the off-face multipliers u_j - s.u are negative and the
Hessian G restricted to the face's tangent is positive definite. Every label is then confirmed by
integrating the frozen flow (scipy's solve_ivp on the logits) from a small perturbation.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import plotly.graph_objects as go
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq, fsolve
from scipy.special import softmax

from polarize import Experiment
from polarize.science import flow_field, rest_points

PAGE_TIMES = (0.0, 1.0, 10.0, 100.0, 1000.0)


def page_experiment(seed: int, n: int = 3, loss: str = "square") -> Experiment:
    """As the Phase portrait page builds it (n tokens, d = n, the default horizon)."""
    return Experiment(n=n, d=n, loss=loss, seed=seed, horizon=1e4, samples=120).resolved()


@functools.cache
def page_values(seed: int) -> tuple[Experiment, np.ndarray, tuple[tuple[float, np.ndarray], ...]]:
    """The page's experiment, its target, and ``V`` at each of ``PAGE_TIMES`` (each a run: made once)."""
    e = page_experiment(seed)
    return e, np.asarray(e.target), tuple((at, flow_field.values_at(e, at)) for at in PAGE_TIMES)


def fitness(V: np.ndarray, y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """u = V^T y - V^T V s for one s (n,) or for each row of s (..., n)."""
    return V.T @ y - s @ V.T @ V


def enumerate_simplex(V: np.ndarray, y: np.ndarray) -> list[tuple[tuple[int, ...], np.ndarray, str]]:
    """Every rest point (support, s, label) of the frozen field on the whole simplex, n = 3."""
    G, b = V.T @ V, V.T @ y
    out = []
    for k in (1, 2, 3):
        for S in itertools.combinations(range(3), k):
            K = np.zeros((k + 1, k + 1))
            K[:k, :k], K[:k, k], K[k, :k] = G[np.ix_(S, S)], 1.0, 1.0
            z = np.linalg.solve(K, np.append(b[list(S)], 1.0))
            if np.any(z[:k] <= 0):
                continue
            s = np.zeros(3)
            s[list(S)] = z[:k]
            u = fitness(V, y, s)
            margins = [u[j] - s @ u for j in range(3) if j not in S]
            basis = np.array([np.eye(3)[i] - np.eye(3)[S[-1]] for i in S[:-1]]).reshape(-1, 3)
            curvature = np.linalg.eigvalsh(basis @ G @ basis.T) if k > 1 else np.zeros(0)
            signs = np.concatenate([margins, -curvature])
            label = ("degenerate" if np.any(np.abs(signs) < 1e-5 * np.max(np.abs(u))) else
                     "stable" if np.all(signs < 0) else "unstable" if np.all(signs > 0) else "saddle")
            out.append((S, s, label))
    return out


def same_points(mine, page, atol=1e-7):
    """Pair the page's rest points with mine: same support, same point, same label; none left over."""
    assert len(page) == len(mine), ([(p.support, p.s.round(4)) for p in page], [m[:2] for m in mine])
    for S, s, label in mine:
        (match,) = [p for p in page if p.support == S and np.max(np.abs(p.s - s)) < atol]
        if label != "degenerate":
            assert match.stability == label, (S, s, match.stability, label)


def frozen_flow(V, y, temperature, tokens):
    """da/dt = s (u - s.u) / T on the logits of ``tokens`` only (the others have share 0)."""
    def rhs(_t, a):
        s = np.zeros(V.shape[1])
        z = np.exp((a - a.max()) / temperature)  # softmax inline: scipy's per-call overhead doubled the run
        s[tokens] = z / z.sum()
        u = fitness(V, y, s)
        return (s * (u - s @ u))[tokens] / temperature
    return rhs


def settles(V, y, temperature, rest, start, rate) -> bool:
    """Integrate the frozen flow from ``start``: True if it ends at most half as far from ``rest``, False if
    at least twice as far (after 50 times the time the linearization takes to move it by its own size)."""
    tokens = np.flatnonzero(start > 0)
    d0 = np.max(np.abs(start - rest))
    run = solve_ivp(frozen_flow(V, y, temperature, tokens), (0, 50.0 / (d0 * abs(rate))),
                    temperature * np.log(start[tokens]), method="LSODA", rtol=1e-9, atol=1e-12)
    end = np.zeros(len(start))
    end[tokens] = softmax(run.y[:, -1] / temperature)
    ratio = np.max(np.abs(end - rest)) / d0
    assert run.success and (ratio < 0.5 or ratio > 2), ratio
    return bool(ratio < 0.5)


def perturbations(V, y, S, s):
    """(start, predicted return, rate): off the face one per missing token, on it along G's eigenvectors."""
    G = V.T @ V
    u = fitness(V, y, s)
    eps = min(1e-3, 0.05 * min(s[list(S)]))
    out = []
    for j in (j for j in range(3) if j not in S):
        out.append(((1 - eps) * s + eps * np.eye(3)[j], u[j] - s @ u < 0, u[j] - s @ u))
    if len(S) > 1:
        basis = np.array([np.eye(3)[i] - np.eye(3)[S[-1]] for i in S[:-1]])
        values, vectors = np.linalg.eigh(basis @ G @ basis.T)
        for value, vector in zip(values, vectors.T, strict=True):
            step = vector @ basis
            out.append((s + eps * step / np.max(np.abs(step)), True, value))  # f is convex: it comes back
    return out


@pytest.mark.parametrize("seed", range(30))
def test_the_page_finds_every_rest_point_of_the_square_loss_and_labels_it_right(seed):
    e, y, values = page_values(seed)
    for _, V in values:
        same_points(enumerate_simplex(V, y), rest_points.rest_points(e, V))


def test_the_stable_interior_point_of_seed_6_at_t_100_is_found():
    """The case the old root finder lost: it stepped off the simplex and stopped on a false root."""
    e = page_experiment(6)
    V = flow_field.values_at(e, 100.0)
    inner = [p for p in rest_points.rest_points(e, V) if p.support == (0, 1, 2)]
    assert [p.stability for p in inner] == ["stable"]


@pytest.mark.parametrize("d, temperature", [(2, 1.0), (3, 1.0), (3, 0.5), (5, 2.0)])
def test_random_values_rest_points_match_the_exact_enumeration(d, temperature):
    rng = np.random.default_rng(d)
    e = Experiment(n=3, d=d, loss="square", seed=0, temperature=temperature).resolved()
    y = np.asarray(e.target)
    for _ in range(60):
        V = rng.normal(size=(d, 3)) * rng.choice([0.3, 1.0, 3.0])
        same_points(enumerate_simplex(V, y), rest_points.rest_points(e, V))


@pytest.mark.parametrize("seed", range(30))
def test_each_label_is_what_the_frozen_flow_does_next_to_the_point(seed):
    e, y, values = page_values(seed)
    for at, V in values:
        for S, s, label in enumerate_simplex(V, y):
            if label == "degenerate":
                continue
            returns = []
            for start, predicted, rate in perturbations(V, y, S, s):
                assert settles(V, y, e.temperature, s, start, rate) == predicted, (seed, at, S, rate)
                returns.append(predicted)
            assert label == ("stable" if all(returns) else "unstable" if not any(returns) else "saddle")


# ---- slices: n > 3, three tokens, the others keep their logits --------------------------------------

SLICE = (0, 2, 3)


def slice_velocity(e, V, r):
    """dr/dt on the slice, from scratch: s = the reference scores with s_S = m r, r = s_S / m; ``r`` is
    one point (3,) or one per row (..., 3)."""
    T = e.temperature
    r = np.asarray(r)
    s0 = softmax(np.asarray(e.a0) / T)
    m = s0[list(SLICE)].sum()
    s = np.broadcast_to(s0, (*r.shape[:-1], len(s0))).astype(np.result_type(r, float))
    s[..., list(SLICE)] = m * r
    u = fitness(V, np.asarray(e.target), s)
    da = s * (u - np.sum(s * u, axis=-1, keepdims=True)) / T
    da = da[..., list(SLICE)]
    return r * (da - np.sum(r * da, axis=-1, keepdims=True)) / T, da, u


def enumerate_slice(e, V):
    """The slice's rest points: vertices, sign changes along each edge, crossings of both zero curves
    inside (a fine grid, then fsolve), each with (support, r, label) by its own linearization."""
    found = [(i,) for i in range(3)]
    points = [np.eye(3)[i] for i in range(3)]
    for i, j in itertools.combinations(range(3), 2):
        def h(x, i=i, j=j):
            x = np.asarray(x)[..., None]
            da = slice_velocity(e, V, x * np.eye(3)[i] + (1 - x) * np.eye(3)[j])[1]
            return da[..., i] - da[..., j]
        x = np.linspace(0, 1, 4001)[1:-1]
        values = h(x)  # every grid point at once
        for k in np.flatnonzero(values[:-1] * values[1:] < 0):
            z = brentq(h, x[k], x[k + 1], xtol=1e-15)
            found.append((i, j))
            points.append(z * np.eye(3)[i] + (1 - z) * np.eye(3)[j])

    def F(xy):
        """(da_0 - da_2, da_1 - da_2) at r = (x, y, 1 - x - y), for one (2,) or each row (..., 2)."""
        xy = np.asarray(xy)
        da = slice_velocity(e, V, np.concatenate([xy, 1 - xy.sum(axis=-1, keepdims=True)], axis=-1))[1]
        return da[..., :2] - da[..., 2:]

    grid = np.linspace(0, 1, 121)
    X, Y = np.meshgrid(grid, grid, indexing="ij")
    inside = X + Y <= 1
    values = np.full((*X.shape, 2), np.nan)
    values[inside] = F(np.stack([X[inside], Y[inside]], axis=-1))  # every grid point at once
    inner = []
    for a in range(120):
        for b in range(120 - a):
            cell = values[a:a + 2, b:b + 2].reshape(4, 2)
            cell = cell[~np.isnan(cell[:, 0])]
            if np.all(np.ptp(np.sign(cell), axis=0) > 0):
                xy = fsolve(F, [grid[a] + 1 / 240, grid[b] + 1 / 240], xtol=1e-13)
                r = np.array([xy[0], xy[1], 1 - xy.sum()])
                if np.all(r > 0) and np.max(np.abs(F(xy))) < 1e-12 and not any(
                        np.max(np.abs(r - q)) < 1e-7 for q in inner):
                    inner.append(r)
    found += [(0, 1, 2)] * len(inner)
    points += inner
    return [(S, r, slice_label(e, V, S, r)) for S, r in zip(found, points, strict=True)]


def slice_label(e, V, S, r):
    da = slice_velocity(e, V, r)[1]
    off = np.array([-da[S[0]] / e.temperature for j in range(3) if j not in S])
    steps = [np.eye(3)[i] - np.eye(3)[S[-1]] for i in S[:-1]]
    h = 1e-30  # complex step: the slice's field here is a polynomial in r
    columns = [np.imag(slice_velocity(e, V, r + 1j * h * d)[0])[list(S[:-1])] / h for d in steps]
    eig = np.linalg.eigvals(np.array(columns).T).real if steps else np.zeros(0)
    signs = np.concatenate([off, eig])
    return "stable" if np.all(signs < 0) else "unstable" if np.all(signs > 0) else "saddle"


@pytest.mark.parametrize("seed, at", [(2, 10.0), (0, 0.0), (5, 100.0), (7, 1.0), (11, 1000.0)])
def test_a_slice_has_the_rest_points_of_its_own_field_with_their_labels(seed, at):
    e = page_experiment(seed, n=4)
    V = flow_field.values_at(e, at)
    page = rest_points.rest_points(e, V, SLICE)
    mine = enumerate_slice(e, V)
    assert len(page) == len(mine), ([(p.support, p.shares.round(4)) for p in page], mine)
    for S, r, label in mine:
        (match,) = [p for p in page if p.support == tuple(SLICE[i] for i in S)
                    and np.max(np.abs(p.shares - r)) < 1e-7]
        assert match.stability == label
        for j in (j for j in range(3) if j not in S):  # off the face: the slice's own field
            eps = 1e-4
            start = (1 - eps) * r + eps * np.eye(3)[j]
            run = solve_ivp(lambda _t, q: slice_velocity(e, V, q)[0], (0, 5.0 / abs(match.invasion[0])),
                            start, method="LSODA", rtol=1e-10, atol=1e-14)
            assert np.sign(run.y[j, -1] - eps) == np.sign(match.invasion[0])


# ---- the basin map's cells ----------------------------------------------------------------------------


def test_the_basin_map_cells_tile_the_triangle_and_wear_their_start_s_winner(whole_pages):
    """Square markers of one size left striped bars near the top vertex (rows far apart there): the cells
    now tile the triangle (areas add up to its area, none overlapping), each holds its own start, and is
    filled in the colour of that start's winner."""
    from polarize.plots.panels import project_to_polygon, simplex_vertices
    from polarize.science import basins as outcomes
    from polarize.web import pages

    view = pages.PHASE.view(pages.PHASE.make_job({**pages.PHASE.defaults(None), "resolution": 30}))
    figure = go.Figure(view.plots()[1].figure)
    starts = next(t for t in figure.data if t.uid == "basin-starts")
    cells = [t for t in figure.data if t.uid.startswith("basin-cells-")]
    polygons, colours = [], []
    for trace in cells:
        xy = np.array([[np.nan if v is None else v for v in trace.x],
                       [np.nan if v is None else v for v in trace.y]], dtype=float).T
        for shape in np.split(xy, np.flatnonzero(np.isnan(xy[:, 0])) + 1):
            shape = shape[~np.isnan(shape[:, 0])]
            if len(shape):
                polygons.append(shape[:-1])
                colours.append(trace.fillcolor)
    assert len(polygons) == 900

    def area(p):
        x, y = p[:, 0], p[:, 1]
        return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))

    triangle = area(simplex_vertices(3))
    assert sum(area(p) for p in polygons) == pytest.approx(triangle, rel=1e-3)
    shares = flow_field.triangle_grid(30)
    e = Experiment(n=3, d=3, loss="logistic", seed=0, horizon=1e4, samples=120)
    winners = outcomes.basins(e, 30).ensemble.winner
    colour_of = dict(zip(starts.text, starts.marker.color, strict=True))
    where = project_to_polygon(shares)
    inside = np.array([_contains(p, where) for p in polygons])  # (cell, start)
    assert np.all(inside.sum(axis=0) == 1)  # each start in exactly one cell
    for k, cell in enumerate(np.argmax(inside, axis=0)):
        assert colours[cell] == colour_of[f"token {winners[k]} wins"]


def _contains(polygon, points):
    """Whether the convex ``polygon`` (corners in order) holds each of ``points`` (m, 2) strictly
    inside: (m,) booleans."""
    edges = np.roll(polygon, -1, axis=0) - polygon
    real = np.hypot(*edges.T) > 1e-9  # a top row's cell is a triangle: two of its corners are the vertex
    edges, corners = edges[real], polygon[real]
    cross = (edges[:, 0] * (points[:, 1, None] - corners[:, 1])
             - edges[:, 1] * (points[:, 0, None] - corners[:, 0]))  # (m, real edges)
    return np.all(cross > 1e-12, axis=1) | np.all(cross < -1e-12, axis=1)
