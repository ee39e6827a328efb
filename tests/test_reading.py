"""How experiments, results and ensembles read in a notebook: reprs, HTML tables, tidy frames, figures.

They display whatever happened (an ensemble with no start finished, a run cut off at once), and a
figure's options are validated naming the field."""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from polarize import Ensemble, Experiment, simulate, simulate_many
from polarize.fields import ConfigError
from polarize.plots.style import token_colors

SHORT = 500


@pytest.fixture(scope="module")
def run():
    return simulate(Experiment(n=4, d=3, horizon=100, samples=40))


@pytest.fixture(scope="module")
def many():
    starts = np.random.default_rng(3).normal(scale=2.0, size=(24, 3))
    return simulate_many(Experiment(n=3, d=3, horizon=1e3, samples=30), starts, trajectories=True)


def test_experiment_repr_names_only_the_changed_settings():
    text = repr(Experiment(n=4, d=3, horizon=100, loss="square"))
    assert text == "Experiment(n=4, d=3, loss='square', horizon=100)"
    assert repr(Experiment()) == "Experiment()"


def test_reprs_stay_short_even_with_large_arrays_and_every_field_changed():
    e = Experiment(n=60, d=60, loss="square", normalizer="l1", eps=1e-6, method="gd", lr=0.05, horizon=1.0,
                   samples=17, seed=9, a_init="vertex", a_scale=0.3, a_shift=2.0, a_vertex=5,
                   V_init="identity", V_scale=0.7, kappa=30.0, m=40)
    resolved = e.resolved()
    assert len(repr(resolved)) < SHORT
    assert "V0 (60, 60)" in repr(resolved)  # by shape, never by value
    result = simulate(resolved)
    assert len(repr(result)) < SHORT
    ensemble = simulate_many(resolved, np.zeros((5, 60)))
    assert len(repr(ensemble)) < SHORT


def test_result_repr_says_how_far_it_ran_and_who_won(run):
    text = repr(run)
    assert len(text) < SHORT
    assert "finished at t = 100" in text
    winner = int(np.argmax(run.s[-1]))
    assert f"winner token {winner}" in text
    gap = 1 - float(np.max(run.s[-1]))
    assert f"1 - max s = {gap:.4g}" in text


def test_stopped_result_says_where_it_stopped():
    result = simulate(Experiment(n=3, d=3, horizon=1e6, samples=30), budget=1e-9)
    assert result.status != "finished"
    assert f"of {1e6:.4g}" in repr(result)
    assert result.status in repr(result)


def test_ensemble_repr_counts_the_winners(many):
    text = repr(many)
    assert len(text) < SHORT
    assert "24 starts" in text
    counts = np.bincount(np.argmax(many.s, axis=1), minlength=3)
    for token, count in enumerate(counts):
        if count:
            assert f"token {token}: {count}" in text


def test_html_tables_escape_text():
    e = Experiment(n=3, d=3, horizon=10.0, samples=10)
    result = simulate(e)
    hostile = "<script>alert(1)</script> & <b>"
    table = type(result)(**{**{f: getattr(result, f) for f in result.__dataclass_fields__},
                            "message": hostile, "status": "stopped"})._repr_html_()
    assert "<script>" not in table
    assert html.escape(hostile) in table
    assert table.startswith("<table>") and "winner" in table


def test_result_frame_is_tidy_and_matches_the_series(run):
    frame = run.to_pandas()
    K, n = run.s.shape
    assert isinstance(frame, pd.DataFrame) and len(frame) == K * n
    assert {"t", "token", "s", "a", "u", "p", "ratio", "column_norm"} <= set(frame.columns)
    # Read back row by row: the score of token 2 at saved time 7.
    row = frame[(frame.step == 7) & (frame.token == 2)].iloc[0]
    assert row.t == run.t[7] and row.s == run.s[7, 2] and row.u == run.u[7, 2]
    # Scores at each time sum to one (softmax), recomputed from the tidy rows alone.
    np.testing.assert_allclose(frame.groupby("step").s.sum(), 1.0, rtol=1e-12)
    times = run.to_pandas("time")
    assert len(times) == K
    np.testing.assert_allclose(times.one_minus_max, 1 - np.max(np.asarray(run.s), axis=1))
    np.testing.assert_array_equal(times.leader, np.argmax(run.s, axis=1))
    with pytest.raises(ValueError, match="per"):
        run.to_pandas("start")


def test_ensemble_frames(many):
    starts = many.to_pandas()
    assert len(starts) == len(many)
    np.testing.assert_array_equal(starts.winner, np.argmax(many.s, axis=1))
    np.testing.assert_array_equal(starts[["a0_0", "a0_1", "a0_2"]].to_numpy(), many.a0)
    tokens = many.to_pandas("token")
    assert len(tokens) == 3 * len(many)
    assert (tokens.groupby("start").won.sum() == 1).all()
    path = many.to_pandas("path")
    assert len(path) == many.s_path.size
    last = path[path.step == path.step.max()].pivot(index="start", columns="token", values="s").to_numpy()
    np.testing.assert_allclose(last, many.s)
    no_path = simulate_many(many.experiment, many.a0[:2])
    with pytest.raises(ValueError, match="trajectories=True"):
        no_path.to_pandas("path")


def test_to_dict_round_trips_through_json(run, many):
    import json

    assert json.loads(json.dumps(run.to_dict()))["s"] == run.s.tolist()
    data = json.loads(json.dumps(many.to_dict()))
    assert data["winner"] == many.winner.tolist()
    assert Experiment.from_dict(data["config"]) == many.experiment


def test_result_figure_is_the_dashboard_of_this_run(run):
    figure = run.figure()
    assert isinstance(figure, go.Figure) and len(figure.frames) > 1
    # The scores panel ends where the run ends.
    for token in range(run.experiment.n):
        trace = next(t for t in figure.data if t.uid == f"scores-token{token}")
        assert math.isclose(trace.y[-1], run.s[-1, token], rel_tol=1e-3)
    assert isinstance(run.figure("paper"), go.Figure)
    with pytest.raises(ValueError, match="kind"):
        run.figure("pie")


def test_rate_figure_shows_the_gap():
    result = simulate(Experiment(n=3, d=3, horizon=1e8, samples=60))
    figure = result.figure("rate")
    gap = next(t for t in figure.data if t.name == "1 \u2212 max s (run)")
    late = result.t > 1
    np.testing.assert_allclose(np.asarray(gap.y, dtype=float), result.one_minus_max[late], rtol=1e-3)


def test_ensemble_figure_places_each_start_by_its_scores_and_colours_its_winner(many: Ensemble):
    figure = many.figure()
    starts = next(t for t in figure.data if t.uid == "ensemble-starts")
    # Independently: softmax of each start, then the triangle's corners at 90, 210 and 330 degrees.
    s0 = np.exp(many.a0) / np.exp(many.a0).sum(axis=1, keepdims=True)
    angles = np.radians([90, 210, 330])
    corners = np.column_stack([np.cos(angles), np.sin(angles)])
    np.testing.assert_allclose(np.column_stack([starts.x, starts.y]), s0 @ corners, atol=1e-3)
    # Each start's colour is its winner's, the winner checked against simulate on that start alone.
    colors = token_colors(3)
    for k in (0, 5, 11):
        alone = simulate(Experiment(**{**many.experiment.to_dict(), "a0": many.a0[k].tolist()}))
        assert starts.marker.color[k] == colors[int(np.argmax(alone.s[-1]))]
    with pytest.raises(ValueError, match="tokens"):
        many.figure(tokens=(0, 0, 1))


def test_basins_read_as_a_line_and_draw_their_map():
    import polarize

    e = Experiment(n=3, d=3, horizon=1e3, samples=20, seed=4)
    grid = polarize.basins(e, 8)
    resolved = e.resolved()
    naive = int(np.argmax(np.asarray(resolved.V0).T @ np.asarray(resolved.target)))  # largest p_i(0)
    held = np.mean(grid.ensemble.winner == naive)
    text = repr(grid)
    assert len(text) < SHORT
    assert f"token {naive}, wins from {held:.0%} of 64 starts" in text
    starts = next(t for t in grid.figure().data if t.uid == "basin-starts")
    assert list(starts.marker.color) == [token_colors(3)[w] for w in grid.ensemble.winner]
    odds = polarize.naive_odds(e, [0.01, 3.0], 30)
    band = next(t for t in odds.figure().data if t.uid == "odds-line")
    np.testing.assert_allclose(np.asarray(band.y, dtype=float), odds.odds, atol=1e-3)


# ---- objects that always display: nothing finished, a run cut at once, options named -----------------


@pytest.fixture(scope="module")
def nothing_done():
    """An ensemble whose budget ran out before any start finished."""
    import numpy as np

    from polarize import Experiment, simulate_many

    many = simulate_many(Experiment(n=3, d=3, horizon=1e4), np.random.default_rng(0).normal(size=(500, 3)),
                         budget=1e-9)
    assert len(many) == 0
    return many


def _figure_text(figure) -> str:
    return " ".join(a.text or "" for a in figure.layout.annotations) + " " + (figure.layout.title.text or "")


def test_an_ensemble_that_finished_no_start_displays_and_says_so(nothing_done):
    import plotly.graph_objects as go

    text, page = repr(nothing_done), nothing_done._repr_html_()
    assert "all finished" not in text and "nan" not in text and "out of time" in text
    assert "out of time" in page and "nan" not in page
    figure = nothing_done.figure()
    assert isinstance(figure, go.Figure) and "no start" in _figure_text(figure).lower()


def test_a_rate_figure_of_a_run_cut_off_at_once_says_so():
    import plotly.graph_objects as go

    from polarize import Experiment, simulate

    cut = simulate(Experiment(n=3, d=3, horizon=1e4), budget=1e-9)
    assert len(cut.t) == 1
    figure = cut.figure("rate")
    assert isinstance(figure, go.Figure) and "too little" in _figure_text(figure).lower()


@pytest.mark.parametrize(("options", "field"), [
    ({"frames": "x"}, "frames"), ({"frames": -1}, "frames"), ({"frames": 10**9}, "frames"),
    ({"height": -5}, "height"), ({"height": 1e9}, "height"), ({"height": True}, "height"),
    ({"colour": "red"}, "colour"), ({"kind": "pie"}, "kind")])
def test_result_figure_options_are_validated_naming_the_field(options, field):
    from polarize import Experiment, simulate

    run = simulate(Experiment(n=3, d=3, horizon=100))
    with pytest.raises(ConfigError) as info:
        run.figure(**options)
    assert info.value.field == field and "\n" not in str(info.value)


@pytest.mark.parametrize(("options", "field"), [
    ({"tokens": "abc"}, "tokens"), ({"tokens": None}, "tokens"), ({"tokens": (0, 1, 7)}, "tokens"),
    ({"tokens": (0, 1, 2.5)}, "tokens"), ({"height": -1}, "height"), ({"title": 5}, "title")])
def test_ensemble_figure_options_are_validated_naming_the_field(options, field):
    import numpy as np

    from polarize import Experiment, simulate_many

    many = simulate_many(Experiment(n=3, d=3, horizon=100), np.eye(3))
    with pytest.raises(ConfigError) as info:
        many.figure(**options)
    assert info.value.field == field and "\n" not in str(info.value)
