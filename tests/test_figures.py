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

from polarize import Experiment, simulate
from polarize.losses import KL, entropy
from polarize.normalizers import make_normalizer
from polarize.plots import (
    Palette,
    comparison_figure,
    dashboard,
    find_trace,
    frame_indices,
    gap_figure,
    grid,
    paper,
    project_to_polygon,
    round_significant,
    scores_figure,
    set_palette,
    simplex_vertices,
    style,
    token_colors,
    trace_index,
)
from polarize.plots.numbers import rounded
from polarize.presets import paper_regression, paper_tied
from polarize.science import format_time, kl_floor, polarization_rate, simplex_shares


@cache
def run(**fields):
    return simulate(Experiment(**fields))


@cache
def figure(**fields) -> go.Figure:
    return dashboard(run(**fields))


def trace(fig: go.Figure, uid: str):
    return find_trace(fig, uid)


def moving_state(fig: go.Figure, frame: go.Frame, uid: str):
    """The state of the moving trace ``uid`` in ``frame``."""
    return frame.data[list(frame.traces).index(trace_index(fig, uid))]


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
    assert fig.layout.meta["animated"] == [trace_index(fig, uid) for uid in moving]


def test_trace_uids_are_css_safe_and_unique():
    # plotly.js builds CSS selectors from uids: a space or a dot in one breaks the static export.
    figures = [figure(), grid.tied_figure({10: run(model="tied", n=4, d=4, horizon=10.0)}, frames=5)]
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
        fig = dashboard(run(n=3, d=3))
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
    fig = dashboard(result)
    assert [f.name for f in fig.frames] == [str(k) for k in frame_indices(result.t)]
    go.Figure(fig.to_dict())


# ---- the repulsion panel's replicator mode ---------------------------------------------------


@cache
def replicator(**fields) -> tuple[object, go.Figure]:
    result = simulate(Experiment(**({"n": 4, "d": 4, "seed": 6, "horizon": 1e3, "a_init": "gaussian",
                                     "a_scale": 1.0} | fields)))
    return result, dashboard(result, repulsion="replicator")


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
    assert "Replicator: u<sub>i</sub> \u2212 s\u00b7u" in texts and "Repulsion: fitness vs score" not in texts
    assert {"\u25b2 logit grows", "\u25bc logit falls"} <= set(texts)
    assert not any(t.uid.startswith("repulsion-") for t in fig.data)
    # Only softmax has the replicator form: other normalizers get the bars but not the reading.
    sigmoid = dashboard(run(normalizer="sigmoid", horizon=1e3), repulsion="replicator")
    assert "\u25b2 logit grows" not in [a.text for a in sigmoid.layout.annotations]
    with pytest.raises(ValueError, match="repulsion"):
        dashboard(result, repulsion="bars")


# ---- one renderer for the pages and the paper ----------------------------------------------


def curves(fig: go.Figure) -> dict[tuple[str, str], tuple[list, list]]:
    """(subplot title, curve name) -> its points, for the curves (not the riding markers)."""
    titles = {f"x{'' if i == 0 else i + 1}": a.text for i, a in enumerate(fig.layout.annotations)
              if a.xref == "paper"}
    return {(titles[t.xaxis], t.name): (list(t.x), list(t.y)) for t in fig.data if t.name != "now"}


@cache
def tied_runs() -> dict[int, object]:
    return {D: simulate(paper_tied(D).varied(horizon=20.0, samples=30)) for D in (10, 20)}


def test_the_papers_tied_figure_is_the_pages_drawn_static():
    runs = tied_runs()
    page = grid.tied_figure(runs, frames=12)
    exported = paper.tied_figure({f"D = {D}": r for D, r in runs.items()})
    assert page.frames and not exported.frames and not exported.layout.updatemenus
    assert curves(exported) == curves(page)
    assert ("D = 20: loss", "loss") in curves(page)
    assert exported.layout.width == paper.WIDTH


def test_the_papers_regression_figure_is_the_pages_with_the_kappa_summary():
    runs = {k: simulate(paper_regression(k).varied(horizon=5.0, samples=20)) for k in (1.0, 4.0)}
    page = curves(grid.regression_figure(runs, frames=12))
    exported = curves(paper.regression_figure({f"kappa = {k:g}": r for k, r in runs.items()}))
    assert {key: exported[key] for key in page} == page
    summary = {name: points for (title, name), points in exported.items() if title.startswith("final")}
    assert summary["entropy H(s)"] == ([1.0, 4.0], rounded([r.entropy[-1] for r in runs.values()]))
    assert summary["max s"][1] == rounded([r.s[-1].max() for r in runs.values()])


def test_a_static_grid_has_no_markers_frames_or_controls():
    t = np.array([0.0, 0.1, 1.0, 10.0])
    panels = [grid.Panel(title="a", lines=(grid.Line(x=t, y=t + 1, name="u"),))]
    animated = grid.animated_grid(panels, cols=1, frames=4)
    static = grid.animated_grid(panels, cols=1, animated=False)
    assert [tr.uid for tr in animated.data] == ["panel0-line0", "panel0-now"]
    assert [tr.uid for tr in static.data] == ["panel0-line0"]
    assert not static.frames and not static.layout.updatemenus and static.layout.meta["animated"] == []
    assert list(static.data[0].y) == list(animated.data[0].y) == [1.1, 2.0, 11.0]  # t = 0 left out


def test_the_kl_floor_comes_from_the_loss():
    result = run(loss="kl")
    target = np.asarray(result.experiment.target)
    assert kl_floor(result.experiment) == KL(target).floor == pytest.approx(float(entropy(target)))
    assert kl_floor(run().experiment) is None
    fig = grid.losses_figure({"logistic": run(), "kl": result}, frames=5)
    (floor,) = [t for t in fig.data if t.name.startswith("H(p*)")]
    assert list(floor.y) == rounded([KL(target).floor] * 2)


# ---- helpers and static figures ------------------------------------------------------------


def test_round_significant_gives_short_numbers():
    x = np.array([0.123456789, 123456.789, -9.87654321e-12, 0.0, np.inf])
    r = round_significant(x, 5)
    assert [repr(v) for v in r.tolist()[:4]] == ["0.12346", "123460.0", "-9.8765e-12", "0.0"]
    assert np.isinf(r[4])


def test_format_time():
    assert [format_time(v) for v in (0, 0.1, 250, 1000, 1e4, 1.25e12, 2e-3)] == \
        ["0", "0.1", "250", "1000", "1e4", "1.25e12", "2e-3"]


def test_scores_figure_draws_each_score():
    result = run()
    fig = scores_figure(result, log_y=True)
    assert [t.name for t in fig.data] == [f"token {i}" for i in range(8)]
    assert [t.line.color for t in fig.data] == token_colors(8)
    keep = result.t > 0
    (third,) = [t for t in fig.data if t.name == "token 3"]
    assert list(third.y) == rounded(result.s[keep, 3]) and list(third.x) == rounded(result.t[keep])
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "log"


def test_comparison_figure_draws_each_run_and_the_references():
    a, b = run(), run(loss="square")
    fig = comparison_figure({"a": a, "b": b}, "entropy", reference=[math.log(8)])
    assert [t.name for t in fig.data] == ["a", "b", f"{math.log(8):.3g}"]
    b_line, reference = fig.data[1:]
    assert list(b_line.y) == rounded(b.entropy[b.t > 0])
    assert list(reference.y) == rounded([math.log(8)] * 2) and reference.line.dash == "dash"
    assert fig.layout.xaxis.type == "log"
    empty = comparison_figure({}, "one_minus_max", log_y=True)  # the maths page adds its own curves
    assert not empty.data and empty.layout.xaxis.range is None


def test_gap_figure_for_the_maths_page():
    result = run(n=5, d=5, horizon=1e8, seed=1)
    rate = polarization_rate(result)
    fig = gap_figure(rate)
    gap, sharp, theorem = fig.data
    assert list(gap.y) == rounded(rate.gap) and sharp.line.dash == "dash" and theorem.line.dash == "dot"
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.range[1] == 0.3
    assert fig.layout.yaxis.range[0] == pytest.approx(math.log10(rate.gap.min()) - 0.3)


def test_rate_figure_draws_the_corrected_asymptotics_and_it_meets_the_run():
    result = run(n=5, d=5, horizon=1e12, seed=1, a_init="zeros", a_scale=1.0)  # the Rates page's default
    rate = polarization_rate(result)
    fig = grid.rate_figure(result, rate, animated=False)
    gap, corrected = (next(tr for tr in fig.data if tr.name == name and tr.xaxis == "x")
                      for name in ("1 \u2212 max s (run)", "2(n\u22121)/(n (z \u2212 q\u0304)\u00b2)"))
    past = (rate.margin > rate.qbar) & (rate.corrected < 10)
    assert past.sum() > len(rate.t) // 2 and corrected.line.dash == "longdash"
    # The drawn curve is the science's numbers, at the science's times.
    assert list(corrected.x) == rounded(rate.t[past]) and list(corrected.y) == rounded(rate.corrected[past])
    # ... and it meets the run's own 1 - max s within 2.5% from t = 1e6 on (2.1% here; the issue measured
    # 1.8% on its run), where the uncorrected 2(n-1)/(n z^2) is still 30% off at t = 1e12.
    x, y_run, y_fit = (np.asarray(v, dtype=float) for v in (gap.x, gap.y, corrected.y))
    late = np.asarray(corrected.x) >= 1e6
    at = np.searchsorted(x, np.asarray(corrected.x)[late])
    assert np.allclose(x[at], np.asarray(corrected.x)[late])
    assert np.max(np.abs(y_run[at] / y_fit[late] - 1)) < 0.025
    assert rate.gap[-1] / rate.sharp[-1] > 1.3


def test_a_dead_relu_run_has_no_entropy_curve_rather_than_zero():
    """Every score 0 is no distribution: the entropy panel draws a gap there, not the 0 of a one-hot s."""
    from polarize.plots.dashboard import dashboard_spec

    dead = simulate(Experiment(n=3, d=3, normalizer="relu", a0=[-1.0, -2.0, -0.5], horizon=10.0))
    assert not np.any(dead.s)  # independent of the figure: relu of negative logits is 0 throughout
    spec = dashboard_spec(dead, frames=4)
    json.dumps(spec, allow_nan=False)  # the gaps are nulls, not NaN
    go.Figure(spec)  # and valid for plotly
    (curve,) = [t for t in spec["data"] if t.get("uid") == "entropy-curve"]
    assert curve["y"] and all(y is None for y in curve["y"])
    (index,) = [k for k, t in enumerate(spec["data"]) if t.get("uid") == "entropy-now"]
    now = [frame["data"][frame["traces"].index(index)] for frame in spec["frames"]]
    assert now and all(t["y"] == [None] for t in now)

    live = simulate(Experiment(n=3, d=3, normalizer="relu", a0=[0.3, -2.0, -0.5], horizon=100.0, seed=1))
    (curve,) = [t for t in dashboard_spec(live, frames=4)["data"] if t.get("uid") == "entropy-curve"]
    assert None not in curve["y"]
