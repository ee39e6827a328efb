"""The dashboard, the small-multiples renderer and the small figures, tested without Streamlit.

Traces are found by their ``uid`` (``find_trace``), never by position.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from functools import cache

import numpy as np
import plotly.graph_objects as go
import pytest
from support.figures import dashboard_figure, figure, moving_state, run, trace

from polarize import Experiment, simulate
from polarize.normalizers import make_normalizer
from polarize.plots import (
    Palette,
    comparisons,
    dashboard,
    find_trace,
    frame_indices,
    project_to_polygon,
    set_palette,
    simplex_vertices,
    style,
    token_colors,
    trace_index,
)
from polarize.plots.multiples import trace_uid
from polarize.plots.numbers import rounded, thinned
from polarize.presets import get_preset
from polarize.science import compare_normalizers, format_time, simplex_shares

# ---- the simplex geometry ------------------------------------------------------------------


def test_two_tokens_are_a_segment():
    fig = figure(n=2, d=2)
    outline = trace(fig, "simplex-outline")
    assert list(outline.x) == [-1.0, 1.0] and list(outline.y) == [0.0, 0.0]
    path = trace(fig, "simplex-path")
    assert np.allclose(path.y, 0.0)  # the point stays on the segment
    assert np.all(np.abs(path.x) <= 1.0)


def test_three_tokens_are_a_triangle():
    fig = figure(n=3, d=3)
    outline = trace(fig, "simplex-outline")
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
    outline = trace(fig, "simplex-outline")
    assert len(outline.x) == 7
    assert np.allclose(np.column_stack([outline.x[:6], outline.y[:6]]), simplex_vertices(6), atol=1e-4)
    path = trace(fig, "simplex-path")
    assert np.allclose(np.column_stack([path.x, path.y]), project_to_polygon(run(n=6, d=6).s), atol=1e-4)


def test_shares_of_scores_off_the_simplex():
    s = np.array([[0.5, -0.5, 1.0], [0.0, 0.0, 0.0]])
    q = simplex_shares(s)
    assert np.allclose(q[0], [0.25, 0.25, 0.5])
    assert np.allclose(q[1], 1 / 3)  # all zero: shown at the centre


# ---- traces, frames, ranges ----------------------------------------------------------------

STATIC = ["simplex-outline", "simplex-vertices", "simplex-labels", "simplex-uniform", "simplex-path",
          "entropy-uniform", "entropy-curve", "loss-curve"]
MOVING = ["simplex-tail", "simplex-now", "scores-now", "entropy-now", "repulsion-main", "repulsion-fitness",
          "repulsion-mean", "loss-now"]


@pytest.mark.parametrize("fields", [{}, {"loss": "square"}, {"loss": "kl", "n": 5}])
def test_every_trace_is_named_and_only_the_moving_ones_are_animated(fields):
    fig = figure(**fields)
    n = run(**fields).s.shape[1]
    logistic = fields.get("loss", "logistic") == "logistic"
    moving = [uid for uid in MOVING if logistic or uid != "repulsion-fitness"]
    uids = [t.uid for t in fig.data]
    assert sorted(uids) == sorted(STATIC + [f"scores-token{i}" for i in range(n)] + moving)
    assert fig.layout.meta["animated"] == [trace_index(fig.to_dict(), uid) for uid in moving]


def test_trace_uids_are_css_safe_and_unique():
    # plotly.js builds CSS selectors from uids: a space or a dot in one breaks the static export.
    tied = comparisons.tied_figure({10: run(model="tied", n=4, d=4, horizon=10.0)}, frames=5)
    figures = [figure(), go.Figure(tied)]
    for fig in figures:
        uids = [t.uid for t in fig.data]
        assert len(set(uids)) == len(uids)
        assert all(re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", uid) for uid in uids), uids


def test_frames_move_only_the_moving_traces():
    fig = figure()
    animated = fig.layout.meta["animated"]
    for frame in fig.frames:
        assert list(frame.traces) == animated
        assert len(frame.data) == len(animated)
        assert frame.layout.to_plotly_json() == {}  # axes never change during the animation


def test_frames_show_the_run_at_their_time():
    result, fig = run(), figure()
    for frame in fig.frames[::7]:
        k = int(frame.name)
        scores = moving_state(fig, frame, "scores-now")
        assert list(scores.y) == rounded(result.s[k]) and set(scores.x) == {rounded(result.t[k])}
        assert list(moving_state(fig, frame, "entropy-now").y) == rounded(result.entropy[k:k + 1])
        assert list(moving_state(fig, frame, "loss-now").y) == rounded(result.loss[k:k + 1])
        assert list(moving_state(fig, frame, "repulsion-main").x) == rounded(result.p[k])
        assert list(moving_state(fig, frame, "repulsion-fitness").x) == rounded(result.u[k])
        now = moving_state(fig, frame, "simplex-now")
        assert np.allclose([now.x[0], now.y[0]], project_to_polygon(result.s[k]), atol=1e-4)
        tail = moving_state(fig, frame, "simplex-tail")
        assert 1 <= len(tail.x) <= 11 and (tail.x[-1], tail.y[-1]) == (now.x[0], now.y[0])


def test_frame_times_are_the_frame_indices_and_log_spaced():
    result = run()
    fig = figure()
    assert [f.name for f in fig.frames] == [str(k) for k in frame_indices(result.t)]
    times = np.array(fig.layout.meta["frame_times"])
    assert list(times) == rounded(result.t[frame_indices(result.t)])
    assert times[0] == result.t[1] and times[-1] == result.t[-1]
    # Evenly spaced in log time, once the saved grid is no longer whole steps of lr.
    steps = np.diff(np.log10(times[times >= 100 * times[0]]))
    assert steps.max() < 1.2 * steps.min()


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
    for key, (x, y) in fig.layout.meta["panels"].items():
        for axis in (layout[f"xaxis{x[1:]}"], layout[f"yaxis{y[1:]}"]):
            assert axis.range is not None and axis.range[0] < axis.range[1], key
    assert layout.xaxis2.type == layout.xaxis3.type == layout.xaxis5.type == "log"
    assert layout.yaxis5.type == "log"
    assert layout.yaxis.scaleanchor == "x"  # the simplex keeps its shape
    # The log n line of the entropy panel is inside the entropy range.
    assert layout.yaxis3.range[1] > math.log(8) == trace(fig, "entropy-uniform").y[0]


def test_repulsion_range_covers_every_frame():
    fig = figure()
    low, high = fig.layout.xaxis4.range
    for frame in fig.frames:
        for uid in ("repulsion-main", "repulsion-fitness"):  # p and u of the logistic loss
            data = moving_state(fig, frame, uid)
            assert low <= min(data.x) and max(data.x) <= high


def test_colours_are_the_same_token_by_token():
    n = 6
    fig = figure(n=n, d=n)
    colors = token_colors(n)
    assert list(trace(fig, "simplex-vertices").marker.color) == colors
    assert [trace(fig, f"scores-token{i}").line.color for i in range(n)] == colors
    assert list(trace(fig, "repulsion-main").marker.color) == colors
    assert list(trace(fig, "scores-now").marker.color) == colors


def test_the_palette_is_swapped_in_one_place():
    before = style.PALETTE
    try:
        set_palette(dataclasses.replace(before, tokens=("#000001", "#000002", "#000003"), ink="#010101"))
        assert token_colors(3) == ["#000001", "#000002", "#000003"]
        fig = dashboard_figure(run(n=3, d=3))
        assert trace(fig, "scores-token2").line.color == "#000003"
        assert trace(fig, "entropy-curve").line.color == "#010101"
    finally:
        set_palette(before)
    assert isinstance(before, Palette) and token_colors(3) == list(before.tokens[:3])


def test_controls_play_pause_speed_and_slider():
    fig = figure()
    menus = fig.layout.updatemenus
    labels = [b.label for menu in menus for b in menu.buttons]
    assert any("Play" in label for label in labels) and any("Pause" in label for label in labels)
    durations = [b.args[1]["frame"]["duration"] for b in menus[1].buttons]
    assert durations == sorted(durations, reverse=True) and len(set(durations)) == 3
    (slider,) = fig.layout.sliders
    assert [s.args[0][0] for s in slider.steps] == [f.name for f in fig.frames]
    assert [s.label for s in slider.steps] == [format_time(t) for t in fig.layout.meta["frame_times"]]


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
    fig = dashboard_figure(result)
    assert [f.name for f in fig.frames] == [str(k) for k in frame_indices(result.t)]
    go.Figure(fig.to_dict())


# ---- the repulsion panel's replicator mode ---------------------------------------------------


@cache
def replicator(**fields) -> tuple[object, go.Figure]:
    result = simulate(Experiment(**({"n": 4, "d": 4, "seed": 6, "horizon": 1e3, "a_init": "gaussian",
                                     "a_scale": 1.0} | fields)))
    return result, dashboard_figure(result, repulsion="replicator")


@pytest.mark.parametrize("fields", [{}, {"loss": "square"}, {"temperature": 2.0}])
def test_the_replicator_bars_are_fitness_minus_mean_fitness_and_say_which_logits_grow(fields):
    """Under softmax da_i/dt = s_i (u_i - s.u) / T: a bar above zero is a logit that grows."""
    result, fig = replicator(**fields)
    e = result.experiment
    normalizer = make_normalizer(e.normalizer, temperature=e.temperature)
    mixed = 0
    for frame in fig.frames:
        k = int(frame.name)
        u, s, a = result.u[k], result.s[k], result.a[k]
        gap = u - s @ u  # from the saved fitness and scores, not from the panel
        bars = moving_state(fig, frame, "replicator-bars")
        assert bars.type == "bar"  # a frame's trace without a type would be read as a scatter
        largest = np.max(np.abs(gap))
        np.testing.assert_allclose(bars.customdata, gap, rtol=1e-4, atol=1e-12)
        np.testing.assert_allclose(np.asarray(bars.y) * largest, gap, rtol=1e-4, atol=1e-4 * largest)
        assert f"{largest:.2g}" in moving_state(fig, frame, "replicator-scale").text[0]
        # The engine's own da/dt (the normalizer's vector-Jacobian product with the fitness).
        da = normalizer.vjp(a, u)
        clear = np.abs(gap) > 1e-3 * largest
        np.testing.assert_array_equal(np.sign(np.asarray(bars.y)[clear]), np.sign(da[clear]))
        mixed += bool(np.any(clear & (da > 0)) and np.any(clear & (da < 0)))
    assert mixed > 0  # some frames have logits growing and falling at once


def test_the_replicator_mode_keeps_the_token_colours_the_zero_line_and_fixed_axes():
    result, fig = replicator()
    go.Figure(fig.to_dict())  # full validation: bar frames carry bar properties
    bars = trace(fig, "replicator-bars")
    colors = token_colors(4, style.top_tokens(result.s[-1]))
    assert list(bars.marker.color) == list(trace(fig, "scores-now").marker.color) == colors
    assert list(bars.x) == [0, 1, 2, 3]
    assert fig.layout.yaxis4.zeroline and fig.layout.yaxis4.zerolinecolor == style.PALETTE.ink
    assert all(frame.layout.to_plotly_json() == {} for frame in fig.frames)
    low, high = fig.layout.yaxis4.range
    assert all(low < min(moving_state(fig, f, "replicator-bars").y) and
               max(moving_state(fig, f, "replicator-bars").y) < high for f in fig.frames)
    texts = [a.text for a in fig.layout.annotations]
    assert "Replicator: u<sub>i</sub> \u2212 s\u00b7u" in texts and "Fitness vs score" not in texts
    assert {"\u25b2 logit grows", "\u25bc logit falls"} <= set(texts)
    assert not any(t.uid.startswith("repulsion-") for t in fig.data)
    # Only softmax has the replicator form: other normalizers get the bars but not the reading.
    sigmoid = dashboard_figure(run(normalizer="sigmoid", horizon=1e3), repulsion="replicator")
    assert "\u25b2 logit grows" not in [a.text for a in sigmoid.layout.annotations]
    with pytest.raises(ValueError, match="repulsion"):
        dashboard(result, repulsion="bars")


# ---- one renderer for the pages and the paper ----------------------------------------------


def test_a_thinned_line_stays_within_its_tolerance_of_every_point():
    rng = np.random.default_rng(3)
    x = np.logspace(-1, 5, 400)
    lines = [np.zeros(400), np.tanh(np.log(x)), np.cumsum(rng.standard_normal(400)),
             np.where(x < 30, 1.0, 0.0), 1e-3 + np.exp(-x)]
    for y in lines:
        for log_y in (False, True):
            if log_y and np.any(y <= 0):
                continue
            v = np.log10(y) if log_y else y
            span = float(np.ptp(v)) or 1.0
            keep = thinned(x, y, span=span, log_x=True, log_y=log_y)
            assert keep[0] and keep[-1]
            # The line through the kept points, as drawn (log x), at every point: within the tolerance.
            drawn = np.interp(np.log10(x), np.log10(x[keep]), v[keep])
            assert np.max(np.abs(drawn - v)) <= 1e-3 * span * (1 + 1e-9)
    assert thinned(x, np.zeros(400), span=0.0, log_x=True).sum() == 2  # a level line: its two ends


def test_the_normalizers_figure_draws_each_score_to_a_fraction_of_a_pixel_with_few_points():
    e = get_preset("paper-compare-logistic").with_changes(samples=240)
    rows = compare_normalizers(e)
    fig = comparisons.normalizers_figure(rows)
    drawn = sent = 0
    for k, row in enumerate(rows):
        r = row.result
        shown = r.t > 0
        s = r.s[shown]
        # 1e-3 of the panel's height (half a pixel of 500), and the 5 digits a number is sent with.
        tol = 1e-3 * np.ptp(s) + 1e-4 * np.max(np.abs(s))
        for i in range(r.s.shape[1]):
            line = find_trace(fig, trace_uid(k, i))
            on_line = np.interp(np.log10(r.t[shown]), np.log10(line["x"]), line["y"])
            assert np.max(np.abs(on_line - s[:, i])) <= tol, (row.normalizer, i)
            drawn, sent = drawn + shown.sum(), sent + len(line["x"])
    # Most of a score's run is a level line at 0 or 1 on this log time axis: a few points draw it.
    assert sent < drawn / 4
