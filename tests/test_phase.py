"""The replicator lens: rest points and their stability, basins against single runs, and the page."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from scipy.integrate import solve_ivp
from support.app import figures
from support.app import page as app_page
from support.controls import control

from polarize import Experiment, simulate
from polarize.plots import project_to_polygon
from polarize.science import basins as outcomes
from polarize.science import deadline as deadline_module
from polarize.science import flow_field, rest_points
from polarize.science.deadline import Deadline
from polarize.web import pages
from polarize.web.page import selected_values

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 90


def square_experiment() -> Experiment:
    return Experiment(n=3, d=3, loss="square", seed=1, horizon=100.0).resolved()


def test_rest_points_of_the_square_loss_solve_equal_fitness_on_their_face():
    e = square_experiment()
    V = flow_field.values_at(e, 10.0)
    points = rest_points.rest_points(e, V)
    assert [p.support for p in points if len(p.support) == 1] == [(0,), (1,), (2,)]
    (inner,) = [p for p in points if len(p.support) == 3]
    # u = V^T beta_* - V^T V s is affine in s: the interior rest point solves u_i = u_j, sum s = 1.
    A, q = V.T @ V, V.T @ np.asarray(e.target)
    system = np.vstack([(A[0] - A[1]), (A[0] - A[2]), np.ones(3)])
    rhs = np.array([q[0] - q[1], q[0] - q[2], 1.0])
    np.testing.assert_allclose(inner.s, np.linalg.solve(system, rhs), atol=1e-9)
    ds, _ = flow_field.field_at(e, V, np.log(inner.s)[None])
    assert np.max(np.abs(ds)) < 1e-12


def _jacobian_other_coordinates(e, V, s, h=1e-4):
    """Finite differences in the shares of the last two tokens (the page uses the first two)."""
    def velocity(y):
        point = np.array([1 - y.sum(), *y])
        ds, _ = flow_field.field_at(e, V, np.log(point)[None])
        return ds[0, 1:]
    y0 = s[1:]
    columns = [(velocity(y0 + h * step) - velocity(y0 - h * step)) / (2 * h) for step in np.eye(2)]
    return np.array(columns).T


def test_the_stability_of_an_interior_rest_point_matches_a_finite_difference_jacobian():
    e = square_experiment()
    V = flow_field.values_at(e, 10.0)
    (inner,) = [p for p in rest_points.rest_points(e, V) if len(p.support) == 3]
    expected = np.sort_complex(np.linalg.eigvals(_jacobian_other_coordinates(e, V, inner.s)))
    np.testing.assert_allclose(np.sort_complex(np.array(inner.eigenvalues)), expected, rtol=1e-5, atol=1e-9)
    assert inner.stability == ("stable" if np.all(expected.real < 0) else
                               "unstable" if np.all(expected.real > 0) else "saddle")


@pytest.mark.parametrize("loss", ["logistic", "square", "kl"])
def test_a_vertex_is_stable_exactly_when_every_other_token_dies_out_near_it(loss):
    """Along the edge from vertex k to token j, ds_j/dt = 2 s_j^2 (u_j - u_k) + O(s_j^3): the invasion
    rate u_j - s.u has the sign the field itself shows."""
    e = Experiment(n=3, d=3, loss=loss, seed=2, horizon=100.0).resolved()
    V = flow_field.values_at(e, 5.0)
    eps = 1e-5
    for point in (p for p in rest_points.rest_points(e, V) if len(p.support) == 1):
        (k,) = point.support
        measured, _, u = [], *flow_field.field_at(e, V, np.log(point.s + 1e-300)[None])
        for j in (j for j in range(3) if j != k):
            s = np.zeros(3)
            s[k], s[j] = 1 - eps, eps
            with np.errstate(divide="ignore"):
                ds, _ = flow_field.field_at(e, V, np.log(s)[None])
            measured.append(ds[0, j] / eps**2)
        np.testing.assert_allclose(measured, 2 * np.array(point.invasion), rtol=1e-3, atol=1e-8)
        np.testing.assert_allclose(point.invasion, [u[0, j] - u[0, k] for j in range(3) if j != k],
                                   rtol=1e-3, atol=1e-8)
        measured = np.array(measured)
        expected = "stable" if np.all(measured < 0) else "unstable" if np.all(measured > 0) else "saddle"
        assert point.stability == expected


@pytest.mark.parametrize("loss, seed, at", [("kl", 2, 50.0), ("kl", 3, 50.0), ("square", 0, 5.0),
                                            ("square", 1, 5.0)])
def test_an_edge_rest_point_is_invaded_as_the_frozen_flow_does(loss, seed, at):
    """From next to an edge point, with the third token at a small share, the frozen flow (integrated
    here) makes that share grow exactly when the point's invasion rate is positive; the old reading
    along a straight line, which ignored how the edge's shares adjust, got kl, seed 2, t = 50 wrong."""
    e = Experiment(n=3, d=3, loss=loss, seed=seed, horizon=100.0).resolved()
    V = flow_field.values_at(e, at)
    edges = [p for p in rest_points.rest_points(e, V) if len(p.support) == 2]
    assert edges

    def rhs(_t, a):
        s = np.exp(a - a.max())
        s /= s.sum()
        u = flow_field.field_at(e, V, a[None])[1][0]
        return s * (u - s @ u)  # da/dt at temperature 1

    eps = 1e-4
    for point in edges:
        (j,) = [i for i in range(3) if i not in point.support]
        start = (1 - eps) * point.s + eps * np.eye(3)[j]
        rate = point.invasion[0]
        run = solve_ivp(rhs, (0, 50.0 / (eps * abs(rate))), np.log(start), method="LSODA", rtol=1e-9,
                        atol=1e-12)
        end = np.exp(run.y[:, -1] - run.y[:, -1].max())
        end /= end.sum()
        assert run.success and np.sign(end[j] - eps) == np.sign(rate)
        assert point.stability in (("unstable", "saddle") if rate > 0 else ("stable", "saddle"))


SLICE = (0, 2, 3)


def _slice_velocity(e, V, r, h=1e-20):
    """dr/dt on the slice, straight from the full field: the shares among SLICE moved along ds/dt
    (a complex step, exact to rounding)."""
    with np.errstate(divide="ignore"):
        a = flow_field.slice_logits(np.asarray(r, dtype=float)[None], SLICE, np.asarray(e.a0))
    s = np.exp(a - a.max())
    s /= s.sum()
    ds, _ = flow_field.field_at(e, V, a)
    return np.imag(flow_field.slice_shares(s + 1j * h * ds, SLICE))[0] / h


@pytest.mark.parametrize("loss, seed, at", [("square", 2, 10.0), ("logistic", 3, 0.0), ("kl", 2, 5.0)])
def test_rest_points_on_a_slice_rest_and_their_stability_matches_the_field(loss, seed, at):
    """For n > 3 the triangle is a slice (token 1 keeps its logit): its own rest points, checked
    against the field of all four tokens by finite differences."""
    e = Experiment(n=4, d=4, loss=loss, seed=seed, horizon=100.0).resolved()
    V = flow_field.values_at(e, at)
    points = rest_points.rest_points(e, V, SLICE)
    assert sorted(p.support for p in points if len(p.support) == 1) == [(0,), (2,), (3,)]
    assert len(points) > 3  # this slice has rest points off its vertices too
    h, eps = 1e-4, 1e-6
    for point in points:
        r = point.shares
        np.testing.assert_allclose(flow_field.slice_shares(point.s, SLICE), r, atol=1e-12)
        assert np.max(np.abs(_slice_velocity(e, V, r))) < 1e-9
        face = [SLICE.index(t) for t in point.support]
        # Along the face, in its last shares (the module uses the first ones).
        steps = [np.eye(3)[i] - np.eye(3)[face[0]] for i in face[1:]]
        columns = [(_slice_velocity(e, V, r + h * d) - _slice_velocity(e, V, r - h * d))[face[1:]] / (2 * h)
                   for d in steps]
        expected = np.sort_complex(np.linalg.eigvals(np.array(columns).T)) if steps else np.array([])
        np.testing.assert_allclose(np.sort_complex(np.array(point.eigenvalues)), expected, rtol=1e-4,
                                   atol=1e-9)
        # Off the face: how the share of each other token grows from eps.
        off = [i for i in range(3) if i not in face]
        measured = np.array([_slice_velocity(e, V, (1 - eps) * r + eps * np.eye(3)[j])[j] / eps for j in off])
        np.testing.assert_allclose(measured, point.invasion, rtol=1e-3, atol=1e-9)
        signs = np.concatenate([measured, expected.real])
        assert point.stability == ("stable" if np.all(signs < 0) else "unstable" if np.all(signs > 0)
                                   else "saddle")


def test_logistic_rest_points_are_the_vertices_and_the_largest_p_is_the_stable_one():
    e = Experiment(n=3, d=3, seed=3, horizon=1e3).resolved()
    V = np.asarray(e.V0)
    points = rest_points.rest_points(e, V)
    assert sorted(p.support for p in points) == [(0,), (1,), (2,)]
    (stable,) = [p for p in points if p.stability == "stable"]
    assert stable.support == (int(np.argmax(V.T @ np.asarray(e.target))),)


def test_the_naive_prediction_is_the_largest_value_projection_and_wins_from_zero_logits():
    e = Experiment(n=4, d=4, seed=4, horizon=1e4).resolved()
    p0 = np.asarray(e.V0).T @ np.asarray(e.target)
    assert flow_field.naive_winner(e) == int(np.argmax(p0))
    assert simulate(dataclasses.replace(e, a0=np.zeros(4))).winner == flow_field.naive_winner(e)


@pytest.mark.parametrize("n, tokens", [(3, (0, 1, 2)), (4, (0, 2, 3))])
def test_basin_winners_are_those_of_single_runs_at_sampled_grid_points(n, tokens):
    e = Experiment(n=n, d=n, seed=5, horizon=1e4).resolved()
    basins = outcomes.basins(e, 12, tokens)
    for k in np.random.default_rng(0).choice(len(basins.shares), 6, replace=False):
        a0 = flow_field.slice_logits(basins.shares[k:k + 1], tokens, np.asarray(e.a0))[0]
        np.testing.assert_allclose(flow_field.slice_shares(np.exp(a0) / np.exp(a0).sum(), tokens),
                                   basins.shares[k], atol=1e-12)
        assert simulate(dataclasses.replace(e, a0=a0)).winner == basins.ensemble.winner[k]
    holds = basins.naive_holds.reshape(12, 12)
    if holds.all() or not holds.any():
        assert len(basins.boundary()) == 0
    else:
        assert len(basins.boundary()) > 0


def test_a_basin_map_in_chunks_under_a_deadline_agrees_with_one_ensemble(monkeypatch, flow_tol):
    e = Experiment(n=4, d=4, seed=5, horizon=1e3).resolved()
    sizes, many = [], deadline_module.simulate_many

    def counted(experiment, a0, **options):
        sizes.append(len(a0))
        return many(experiment, a0, **options)

    monkeypatch.setattr(deadline_module, "simulate_many", counted)
    whole = outcomes.basins(e, 15, (0, 2, 3), trajectories=True)  # no deadline: one ensemble, as before
    assert sizes == [225]
    deadline = Deadline(600.0)
    chunked = outcomes.basins(e, 15, (0, 2, 3), trajectories=True, deadline=deadline)
    assert sizes[1] == 15 and sum(sizes[1:]) == 225 and deadline.partial(chunked).complete
    assert chunked.missing == 0 and np.array_equal(chunked.shares, whole.shares)
    np.testing.assert_array_equal(chunked.ensemble.winner, whole.ensemble.winner)
    flow_tol.assert_close(chunked.ensemble.s, whole.ensemble.s)
    np.testing.assert_array_equal(chunked.ensemble.t, whole.ensemble.t)
    flow_tol.assert_close(chunked.ensemble.s_path, whole.ensemble.s_path)
    np.testing.assert_array_equal(chunked.boundary(), whole.boundary())


def test_the_naive_odds_fall_as_the_random_logits_grow():
    e = Experiment(n=3, d=3, seed=0, horizon=1e3)
    odds = outcomes.naive_odds(e, [0.01, 30.0], 150, seed=1)
    assert odds.odds[0] == 1.0  # logits of 0.01 cannot beat the value projections' head start here
    assert odds.odds[1] < 0.8
    assert np.all(odds.low <= odds.odds) and np.all(odds.odds <= odds.high)


# ---- the page ----------------------------------------------------------------------------------------


def test_the_page_spec_draws_three_figures_with_rest_points_and_a_table(whole_pages):
    spec = pages.PHASE
    view = spec.view(spec.make_job({**spec.defaults(None), "resolution": 30}))
    assert view.error is None
    assert [p.key for p in view.plots()] == ["field", "basins", "odds"]
    assert {row["stability"] for row in view.data.table} >= {"stable"}
    uids = {trace["uid"] for trace in view.plots()[0].figure["data"]}
    assert {"phase-picked", "phase-paths", "phase-rest-stable"} <= uids
    for row in view.data.table:  # words and numbers, not Python's tuples and lists
        assert all(not str(v).startswith(("(", "[")) for v in row.values()), row


def test_the_page_refuses_bad_slices_and_starts_naming_the_field():
    spec = pages.PHASE
    values = spec.defaults(None)
    assert spec.check({**values, "n": 5, "tokens": (0, 1)}).fields == ("tokens",)
    assert spec.check({**values, "pick_a": 0.6, "pick_b": 0.5}).fields[0] == "pick_b"
    assert spec.check({**values, "at": 1e6, "horizon": 1e3}).fields == ("at",)


def test_a_click_on_the_basin_map_sets_the_start_to_the_clicked_square():
    spec = pages.PHASE
    values = {**spec.defaults(None), "resolution": 30}
    view = spec.view(spec.make_job(values))
    basin = view.plots()[1]
    (curve,) = [i for i, t in enumerate(basin.figure["data"]) if t["uid"] == "basin-starts"]
    shares = flow_field.triangle_grid(30)
    for k in (0, 17, 450, 899):  # corners and middle of the grid
        data = list(basin.figure["data"][curve]["customdata"][k])
        point = {"curve_number": curve, "point_index": k, "customdata": data}
        clicked = selected_values(basin, [{"curve_number": 0, "point_index": 2}, point], spec)
        assert set(clicked) == {"pick_a", "pick_b"}
        start = np.array([clicked["pick_a"], clicked["pick_b"]])
        # within one step of the square's shares, never above them, so that the three still add to 1
        assert np.all(start <= np.maximum(shares[k, :2], 0.001) + 1e-12)
        np.testing.assert_allclose(start, shares[k, :2], atol=1.001e-3)
        assert spec.check({**values, **clicked}) is None
    assert selected_values(basin, [{"curve_number": 0, "point_index": 2}], spec) == {}  # no start clicked
    assert selected_values(view.plots()[0], [point], spec) == {}  # the field is not clickable


def test_the_page_under_apptest_runs_and_follows_its_controls():
    at = app_page("phase", timeout=TIMEOUT)
    at.query_params["resolution"] = "30"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Phase portrait"
    assert len(figures(at)) == 3
    control(at, key="phase_pick_a").set_value(0.7).run()  # 0.7 + 0.5 leaves no share for token 2
    assert at.error and "add up to less than 1" in at.error[0].value
    control(at, key="phase_pick_a").set_value(0.3).run()
    assert not at.exception and not at.error
    spec = figures(at)[0]
    (picked,) = [t for t in spec["data"] if t.get("name") == "the run from the chosen start"]
    where = project_to_polygon(np.array([0.3, 0.5, 0.2]))
    np.testing.assert_allclose([picked["x"][0], picked["y"][0]], where, atol=1e-4)


def test_the_page_shows_a_slice_for_more_than_three_tokens():
    spec = pages.PHASE
    view = spec.view(spec.make_job({**spec.defaults(None), "n": 4, "tokens": (0, 2, 3), "resolution": 30}))
    assert view.error is None
    # The slice's own rest points: its three vertices at least, in the table and on the figure.
    assert {row["support"] for row in view.data.table} >= {"token 0", "token 2", "token 3"}
    field = view.plots()[0]
    drawn = go.Figure(field.figure)
    assert "slice" in field.caption and "rest points are those of the field on the slice" in field.caption
    marked = sum(len(t.x) for t in drawn.data if t.uid.startswith("phase-rest-"))
    assert marked == len(view.data.table)
    labels = next(t for t in drawn.data if t.uid == "phase-labels")
    assert list(labels.text) == ["token 0", "token 2", "token 3"]
    basins = go.Figure(view.plots()[1].figure)
    starts = next(t for t in basins.data if t.uid == "basin-starts")
    assert len(starts.x) == 30 * 30


@pytest.mark.parametrize("width", [330, 900])
def test_the_vertex_labels_clear_the_markers_and_the_figure(width):
    """Each token's name is drawn off its vertex's rest-point marker and inside the figure (on a phone
    "token 1" sat on the marker and was cut at the figure's edge)."""
    from polarize.plots.portrait import _layout, _triangle

    figure = go.Figure(_layout(_triangle((0, 1, 2), 3), 560, ""))
    layout = figure.layout
    x0, x1 = layout.xaxis.range
    y0, y1 = layout.yaxis.range
    plot_w = width - layout.margin.l - layout.margin.r
    plot_h = 560 - layout.margin.t - layout.margin.b
    scale = min(plot_w / (x1 - x0), plot_h / (y1 - y0))  # px a unit: the axes share one (scaleanchor)
    labels = next(t for t in figure.data if t.uid == "phase-labels")
    outline = next(t for t in figure.data if t.uid == "phase-outline")
    size = labels.textfont.size
    marker = 17 / 2 + 2.5  # the rest points' markers: size 17, a 2.5 px line
    for (vx, vy), x, y, text in zip(zip(outline.x[:3], outline.y[:3], strict=True), labels.x, labels.y,
                                    labels.text, strict=True):
        half_w, half_h = 0.6 * size * len(text) / 2, size / 2  # generous: Arial is about 0.5 em a character
        dx, dy = max(abs(x - vx) * scale - half_w, 0), max(abs(y - vy) * scale - half_h, 0)
        assert np.hypot(dx, dy) > marker, f"{text} on its vertex's marker at {width} px"
        assert x0 <= x - half_w / scale and x + half_w / scale <= x1, f"{text} cut at {width} px"
        assert y0 <= y - half_h / scale and y + half_h / scale <= y1, f"{text} cut at {width} px"
