"""The dashboard and the small figures, tested without Streamlit."""

from __future__ import annotations

import json
import math
from functools import cache

import numpy as np
import plotly.graph_objects as go
import pytest

from polarize import Experiment, simulate
from polarize.plots import (
    comparison_figure,
    dashboard,
    frame_indices,
    project_to_polygon,
    round_significant,
    scores_figure,
    simplex_vertices,
    token_colors,
)
from polarize.science import format_time, simplex_shares


@cache
def run(**fields):
    return simulate(Experiment(**fields))


@cache
def figure(**fields) -> go.Figure:
    return dashboard(run(**fields))


def trace(fig: go.Figure, name: str):
    (found,) = [t for t in fig.data if t.name == name]
    return found


def static_count(n: int) -> int:
    # simplex: outline, vertices, labels, centre, whole path; n score lines; entropy and log n; loss.
    return 5 + n + 2 + 1


# ---- the simplex geometry ------------------------------------------------------------------


def test_two_tokens_are_a_segment():
    fig = figure(n=2, d=2)
    outline = trace(fig, "simplex")
    assert list(outline.x) == [-1.0, 1.0] and list(outline.y) == [0.0, 0.0]
    path = trace(fig, "whole path")
    assert np.allclose(path.y, 0.0)  # the point stays on the segment
    assert np.all(np.abs(path.x) <= 1.0)


def test_three_tokens_are_a_triangle():
    fig = figure(n=3, d=3)
    outline = trace(fig, "simplex")
    assert len(outline.x) == 4  # closed triangle
    assert (outline.x[0], outline.y[0]) == (outline.x[-1], outline.y[-1])
    corners = np.column_stack([outline.x[:3], outline.y[:3]])
    sides = np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1)
    assert np.allclose(sides, math.sqrt(3), atol=1e-4)  # equilateral, on the unit circle


@pytest.mark.parametrize("n", [4, 7, 64])
def test_more_tokens_are_a_regular_polygon(n):
    vertices = simplex_vertices(n)
    assert vertices.shape == (n, 2)
    assert np.allclose(np.linalg.norm(vertices, axis=1), 1.0)
    gaps = np.linalg.norm(vertices - np.roll(vertices, 1, axis=0), axis=1)
    assert np.allclose(gaps, gaps[0])
    assert np.allclose(project_to_polygon(np.eye(n)), vertices)  # one-hot scores sit on a vertex
    assert np.allclose(project_to_polygon(np.full(n, 1.0 / n)), 0.0)  # uniform ones at the centre


def test_polygon_in_the_figure_for_n_above_three():
    fig = figure(n=6, d=6)
    outline = trace(fig, "simplex")
    assert len(outline.x) == 7
    assert np.allclose(np.column_stack([outline.x[:6], outline.y[:6]]), simplex_vertices(6), atol=1e-4)


def test_shares_of_scores_off_the_simplex():
    s = np.array([[0.5, -0.5, 1.0], [0.0, 0.0, 0.0]])
    q = simplex_shares(s)
    assert np.allclose(q[0], [0.25, 0.25, 0.5])
    assert np.allclose(q[1], 1 / 3)  # all zero: shown at the centre


# ---- traces, frames, ranges ----------------------------------------------------------------


@pytest.mark.parametrize(("fields", "moving"),
                         [({}, 8), ({"loss": "square"}, 7), ({"loss": "kl", "n": 5}, 7)])
def test_trace_counts(fields, moving):
    fig = figure(**fields)
    n = run(**fields).s.shape[1]
    assert len(fig.data) == static_count(n) + moving
    animated = fig.layout.meta["animated"]
    assert animated == list(range(static_count(n), static_count(n) + moving))


def test_frames_move_only_the_moving_traces():
    fig = figure()
    animated = fig.layout.meta["animated"]
    for frame in fig.frames:
        assert list(frame.traces) == animated
        assert len(frame.data) == len(animated)
        assert frame.layout.to_plotly_json() == {}  # axes never change during the animation


def test_frame_count_and_log_spacing():
    result = run()
    fig = figure()
    assert 60 <= len(fig.frames) <= 100
    times = np.array(fig.layout.meta["frame_times"])
    assert times[0] == result.t[1] and times[-1] == result.t[-1]
    # Evenly spaced in log time, once the saved grid is no longer whole steps of lr.
    steps = np.diff(np.log10(times[times >= 100 * times[0]]))
    assert steps.max() < 1.2 * steps.min()
    assert [f.name for f in fig.frames] == [str(k) for k in frame_indices(result.t)]


def test_frame_indices():
    t = np.concatenate([[0.0], np.geomspace(0.1, 1e5, 199)])
    idx = frame_indices(t, 80)
    assert idx[0] == 1 and idx[-1] == len(t) - 1
    assert np.all(np.diff(idx) > 0) and 60 <= len(idx) <= 120
    assert np.allclose(np.diff(np.log(t[idx[1:]])), np.log(t[idx[-1]] / t[idx[-2]]))
    assert list(frame_indices(t, 1000)) == list(range(1, 200))
    assert list(frame_indices(np.array([0.0]))) == [0]
    assert list(frame_indices(np.array([0.0, 5.0]), 80)) == [1]


def test_axis_ranges_are_fixed():
    fig = figure()
    layout = fig.layout
    for name in ("xaxis", "yaxis", "xaxis2", "yaxis2", "xaxis3", "yaxis3", "xaxis4", "yaxis4", "xaxis5",
                 "yaxis5"):
        axis = layout[name]
        assert axis.range is not None and axis.range[0] < axis.range[1], name
    assert layout.xaxis2.type == layout.xaxis3.type == layout.xaxis5.type == "log"
    assert layout.yaxis5.type == "log"
    assert layout.yaxis.scaleanchor == "x"  # the simplex keeps its shape
    # The log n line of the entropy panel is inside the entropy range.
    assert layout.yaxis3.range[1] > math.log(8)


def test_repulsion_range_covers_every_frame():
    fig = figure()
    meta = fig.layout.meta
    low, high = fig.layout.xaxis4.range
    moving = meta["animated"]
    for frame in fig.frames:
        for data in frame.data[4:6]:  # p and u of the logistic loss
            assert low <= min(data.x) and max(data.x) <= high
    assert moving


def test_colours_are_the_same_token_by_token():
    n = 6
    fig = figure(n=n, d=n)
    colors = token_colors(n)
    assert list(trace(fig, "vertices").marker.color) == colors
    assert [trace(fig, f"token {i}").line.color for i in range(n)] == colors
    repulsion = fig.data[fig.layout.meta["animated"][4]]
    assert list(repulsion.marker.color) == colors
    assert len(set(token_colors(64))) == 64


def test_controls_play_pause_speed_and_slider():
    fig = figure()
    menus = fig.layout.updatemenus
    labels = [b.label for menu in menus for b in menu.buttons]
    assert any("Play" in label for label in labels) and any("Pause" in label for label in labels)
    durations = [b.args[1]["frame"]["duration"] for b in menus[1].buttons]
    assert durations == sorted(durations, reverse=True) and len(set(durations)) == 3
    (slider,) = fig.layout.sliders
    assert len(slider.steps) == len(fig.frames)
    assert [s.args[0][0] for s in slider.steps] == [f.name for f in fig.frames]


def test_valid_plotly_and_small_payload_for_64_tokens():
    fig = figure(n=64, d=64)
    go.Figure(fig.to_dict())  # full plotly validation (the builder skips it for speed)
    payload = fig.to_json()
    assert len(payload) < 2_000_000
    json.loads(payload)


@pytest.mark.parametrize("normalizer", ["softmax", "sigmoid", "relu", "sum", "l2", "linear", "sparsemax"])
def test_every_normalizer_draws(normalizer):
    fields = {"normalizer": normalizer, "horizon": 1e3}
    if normalizer in ("sum", "l2"):
        fields |= {"a_init": "shifted"}
    fig = figure(**fields)
    go.Figure(fig.to_dict())
    assert np.all(np.isfinite(fig.layout.xaxis4.range)) and np.all(np.isfinite(fig.layout.yaxis2.range))


def test_a_short_run_still_animates():
    result = simulate(Experiment(samples=3, horizon=10))
    fig = dashboard(result)
    assert 1 <= len(fig.frames) <= len(result.t) - 1
    go.Figure(fig.to_dict())


# ---- helpers and static figures ------------------------------------------------------------


def test_round_significant_gives_short_numbers():
    x = np.array([0.123456789, 123456.789, -9.87654321e-12, 0.0, np.inf])
    r = round_significant(x, 5)
    assert [repr(v) for v in r.tolist()[:4]] == ["0.12346", "123460.0", "-9.8765e-12", "0.0"]
    assert np.isinf(r[4])


def test_format_time():
    assert [format_time(v) for v in (0, 0.1, 250, 1000, 1e4, 1.25e12, 2e-3)] == \
        ["0", "0.1", "250", "1000", "1e4", "1.25e12", "2e-3"]


def test_static_figures():
    result = run()
    assert len(scores_figure(result).data) == 8
    fig = comparison_figure({"a": result, "b": run(loss="square")}, "entropy", reference=[math.log(8)])
    assert len(fig.data) == 3
    assert fig.layout.xaxis.type == "log"
