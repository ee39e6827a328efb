"""The Explorer's logic without Streamlit: links, experiments, verdicts, runs, downloads."""

from __future__ import annotations

import csv
import io
import json
import math
from functools import cache

import numpy as np
import pytest

from polarize import ConfigError, Experiment, export, simulate
from polarize import explorer as ex
from polarize.cli import main as cli_main
from polarize.presets import PRESETS
from polarize.runner import RunTimeout, run_with_timeout

DEFAULTS = ex.preset_values("default")


@cache
def run(**fields):
    return simulate(Experiment(**fields))


# ---- links ---------------------------------------------------------------------------------


def test_empty_link_gives_the_default_preset():
    state = ex.parse_query({})
    assert state.preset == "default" and state.ignored == {}
    assert state.values == DEFAULTS
    assert ex.build_experiment(state.preset, state.values) == Experiment()


def test_a_shared_link_is_read_back():
    state = ex.parse_query({"n": "5", "seed": "3", "loss": "square", "horizon": "1e3", "lr": "0.5",
                            "method": "gd", "normalizer": "softmax", "temperature": "2"})
    assert state.ignored == {}
    assert state.values == {**DEFAULTS, "n": 5, "seed": 3, "loss": "square", "horizon": 1e3, "lr": 0.5,
                            "method": "gd", "temperature": 2.0}
    e = ex.build_experiment(state.preset, state.values)
    assert (e.n, e.seed, e.loss, e.method, e.lr, e.horizon) == (5, 3, "square", "gd", 0.5, 1e3)


def test_garbage_is_reported_and_replaced_by_defaults():
    query = {"n": "abc", "loss": "hinge", "zzz": "1", "horizon": "3e4", "seed": "-1", "d": "1e9",
             "temperature": "2", "normalizer": "sigmoid", "preset": "nope", "a_scale": "nan"}
    state = ex.parse_query(query)
    assert set(state.ignored) == {"n", "loss", "zzz", "horizon", "seed", "d", "temperature", "preset",
                                  "a_scale"}
    assert "not a setting" in state.ignored["zzz"]
    assert "softmax" in state.ignored["temperature"]  # the clash, in words
    assert state.preset == "default"
    assert state.values == {**DEFAULTS, "normalizer": "sigmoid"}
    ex.build_experiment(state.preset, state.values)  # what remains is a valid run


def test_repeated_keys_use_the_last_value():
    assert ex.parse_query({"n": ["3", "4"]}).values["n"] == 4


def test_runs_the_explorer_refuses_are_dropped_from_a_link():
    state = ex.parse_query({"method": "gd", "horizon": "1e12"})
    assert "horizon" in state.ignored
    assert ex.check_experiment(ex.build_experiment(state.preset, state.values)) is None
    state = ex.parse_query({"normalizer": "l2"})  # undefined at a(0) = 0
    assert "normalizer" in state.ignored and state.values["normalizer"] == "softmax"


@pytest.mark.parametrize("name", ["default", "paper-kl", "paper-tied-10", "paper-regression-kappa-3"])
def test_links_round_trip(name):
    values = {**ex.preset_values(name), "seed": 7, "horizon": 1e3, "a_scale": 0.25}
    query = ex.to_query(name, values)
    assert all("+" not in text for text in query.values())  # a + in a query string reads as a space
    state = ex.parse_query(query)
    assert state.ignored == {} and state.preset == name and state.values == values


def test_format_value():
    assert [ex.format_value(v) for v in (1e12, 0.1, 1e5, 8, 0.002, 1.5e-7, "kl")] == \
        ["1e12", "0.1", "100000", "8", "0.002", "1.5e-07", "kl"]
    for value in (1e12, 0.1, 0.123456789, 2.5e-7, 123456.5):
        assert float(ex.format_value(value)) == value


def test_every_preset_is_offered_and_loads():
    assert ex.CONTROLS["preset"].options == tuple(PRESETS)
    for name in PRESETS:
        values = ex.preset_values(name)
        assert values["horizon"] in ex.HORIZONS
        assert ex.CONTROLS["n"].low <= values["n"] <= ex.CONTROLS["n"].high
        ex.build_experiment(name, values)


# ---- experiments from controls --------------------------------------------------------------


def test_preset_arrays_kept_until_their_settings_change():
    name = "paper-compare-logistic"
    base = PRESETS[name].experiment
    kept = ex.build_experiment(name, {**ex.preset_values(name), "horizon": 1e3})
    assert kept.a0 == base.a0 and kept.V0 == base.V0
    assert ex.init_note(name, ex.preset_values(name)).startswith("Starting from the preset's own arrays")
    # Changing the logits' init drops a0 only (the engine's with_changes would have kept it).
    fresh_a = ex.build_experiment(name, {**ex.preset_values(name), "a_init": "gaussian"})
    assert fresh_a.a0 is None and fresh_a.V0 == base.V0
    fresh_v = ex.build_experiment(name, {**ex.preset_values(name), "V_scale": 0.5})
    assert fresh_v.V0 is None and fresh_v.a0 == base.a0
    reseeded = ex.build_experiment(name, {**ex.preset_values(name), "seed": 1})
    assert reseeded.a0 is None and ex.init_note(name, {**ex.preset_values(name), "seed": 1}) == ""


def test_tied_model_d_follows_n():
    name = "paper-tied-10"
    assert ex.is_tied(name) and not ex.is_tied("default")
    e = ex.build_experiment(name, {**ex.preset_values(name), "n": 6, "d": 3})
    assert e.model == "tied" and e.n == e.d == 6


def test_changes_are_described():
    assert ex.describe_changes("default", DEFAULTS) == ""
    assert "tokens n" in ex.describe_changes("default", {**DEFAULTS, "n": 3})


def test_the_explorer_refuses_what_a_page_should_not_run():
    assert "steps" in ex.check_experiment(Experiment(method="gd", horizon=1e5, lr=0.1))
    assert ex.check_experiment(Experiment(method="gd", horizon=1e3, lr=0.1)) is None
    assert "undefined" in ex.check_experiment(Experiment(normalizer="l2"))


# ---- verdicts -------------------------------------------------------------------------------


def test_softmax_logistic_polarizes():
    v = ex.judge(run())
    assert v.status == "yes" and v.headline == "Polarized"
    assert v.winner == run().winner and v.share > 0.95
    assert f"Token {v.winner}" in v.sentence


def test_sigmoid_does_not_polarize():
    v = ex.judge(run(normalizer="sigmoid"))
    assert v.status == "no" and "spread" in v.sentence and "shares" in v.sentence


def test_partial_polarization_is_said_so():
    v = ex.judge(run(loss="kl"))
    assert v.status == "partly" and v.sentence.startswith("Partly")


def test_all_zero_scores():
    v = ex.judge(run(normalizer="relu"))
    assert v.status == "no" and "zero" in v.sentence


def test_summary_metrics_and_captions():
    labels = [label for label, _, _ in ex.summary_metrics(run())]
    assert labels[:3] == ["Final entropy", "Winning token", "1 \u2212 max s"]
    captions = ex.panel_captions(Experiment())
    assert set(captions) == {"simplex", "scores", "entropy", "repulsion", "loss"}
    assert "p_i" in captions["repulsion"]
    assert "p_i" not in ex.panel_captions(Experiment(loss="square"))["repulsion"]


# ---- runs with a time limit ------------------------------------------------------------------


def test_explore_gathers_what_the_page_shows():
    view = ex.explore(Experiment(n=5, d=5))
    assert view.error is None and view.warning is None
    assert view.result.s.shape[1] == 5 and view.verdict.status == "yes"
    assert view.figure.layout.meta["n"] == 5 and view.figure.frames


def test_explore_reports_errors_in_words():
    view = ex.explore(Experiment(normalizer="l2"))
    assert view.result is None and "undefined" in view.error


def test_slow_runs_are_stopped():
    run_with_timeout(Experiment(n=3, d=3), timeout=30)  # a warm worker, so that only the slow run times out
    slow = Experiment(n=64, d=64, method="gd", lr=0.1, horizon=2e4)  # 200,000 descent steps
    with pytest.raises(RunTimeout):
        run_with_timeout(slow, timeout=0.3)
    view = ex.explore(slow, timeout=0.3)
    assert "took longer than 0.3 s" in view.error
    assert run_with_timeout(Experiment(n=3, d=3), timeout=30).finished  # a fresh worker takes over


def test_engine_errors_cross_the_process_boundary():
    with pytest.raises(ConfigError) as caught:
        run_with_timeout(Experiment(normalizer="l2"), timeout=30)
    assert caught.value.field == "a_init"


# ---- downloads --------------------------------------------------------------------------------


def test_trajectory_csv():
    result = run(n=3, d=3)
    rows = list(csv.reader(io.StringIO(export.trajectory_csv(result))))
    header, body = rows[0], np.array(rows[1:], dtype=float)
    assert header[:4] == ["t", "loss", "entropy", "one_minus_max"]
    assert header[4:7] == ["s_0", "s_1", "s_2"] and header[-1] == "p_2"
    assert body.shape == (len(result.t), 4 + 4 * 3)
    assert np.array_equal(body[:, 4:7], result.s)  # full precision
    assert "p_0" not in export.trajectory_columns(run(n=3, d=3, loss="square"))[0]


def test_trajectory_json():
    result = run(n=3, d=3)
    data = json.loads(export.trajectory_json(result))
    assert data["s"] == result.s.tolist() and data["config"]["n"] == 3


def test_configuration_runs_again_with_the_cli(tmp_path, capsys):
    result = run(n=4, d=4, seed=5)
    config = tmp_path / "config.json"
    config.write_text(export.config_json(result))
    assert Experiment.from_json(config.read_text()) == result.experiment
    out = tmp_path / "result.json"
    assert cli_main(["run", str(config), "-o", str(out)]) == 0
    again = json.loads(out.read_text())
    assert np.allclose(again["s"], result.s)


def test_dashboard_html_plays_offline():
    view = ex.explore(Experiment(n=3, d=3))
    html = export.dashboard_html(view.figure, title="test")
    assert html.lstrip().lower().startswith("<!doctype html>") and "<title>test</title>" in html
    assert "* plotly.js v" in html and "<script src=" not in html  # plotly.js embedded: plays offline
    assert html.count("Plotly.addFrames") == 1 and "Plotly.animate" not in html  # frames, not auto-playing
    assert export.file_stem(Experiment()) == "polarize-n8-logistic-softmax-flow-seed0"


def test_log_n_reference():
    assert math.isclose(ex.judge(run()).entropy, float(run().entropy[-1]))


def test_no_streamlit_in_the_package():
    import pathlib

    import polarize

    for path in pathlib.Path(polarize.__file__).parent.glob("*.py"):
        text = path.read_text()
        assert "import streamlit" not in text and "from streamlit" not in text, path.name
