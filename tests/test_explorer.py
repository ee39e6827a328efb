"""The Explorer's logic without Streamlit: its link, experiments, run policy, view and downloads."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from functools import cache
from html import escape as html_escape

import numpy as np
import plotly.graph_objects as go
import pytest

from polarize import ConfigError, Experiment, simulate
from polarize.cli import main as cli_main
from polarize.clips import animate
from polarize.normalizers import NORMALIZERS, make_normalizer
from polarize.presets import PRESETS
from polarize.science import judge, title_lines
from polarize.serve.runner import RunTimeout, run_with_timeout
from polarize.web import export, text
from polarize.web.controls import format_value
from polarize.web.links import mend, open_link, read_link, to_query
from polarize.web.page import Problem, selected_values
from polarize.web.pages import explorer as ex
from polarize.web.view import Folded, Metric, Plot, Text

PAGE = ex.EXPLORER
DEFAULTS = ex.preset_values("default")


@cache
def run(**fields):
    return simulate(Experiment(**fields))


def link(query):
    return read_link(PAGE, query)


# ---- links ---------------------------------------------------------------------------------


def test_empty_link_gives_the_default_preset():
    values, ignored = link({})
    assert ignored == {} and values == DEFAULTS
    assert ex.build_experiment(values) == Experiment()


def test_a_shared_link_is_read_back():
    values, ignored = link({"n": "5", "seed": "3", "loss": "square", "horizon": "1e3", "lr": "0.5",
                            "method": "gd", "normalizer": "softmax", "temperature": "2"})
    assert ignored == {}
    assert values == {**DEFAULTS, "n": 5, "seed": 3, "loss": "square", "horizon": 1e3, "lr": 0.5,
                      "method": "gd", "temperature": 2.0}
    e = ex.build_experiment(values)
    assert (e.n, e.seed, e.loss, e.method, e.lr, e.horizon) == (5, 3, "square", "gd", 0.5, 1e3)


@pytest.mark.parametrize("normalizer", ["l2", "l1", "sum", "relu"])
def test_a_link_mends_exactly_as_the_menu_does(normalizer):
    """/?normalizer=l2 ran softmax (the link's l2 dropped, with a warning) and /?normalizer=relu a dead
    run, while choosing either from the menu moves the start: now both take the menu's one path."""
    query = {"normalizer": normalizer, "seed": "3", "a_scale": "0.5"}
    opened = open_link(PAGE, query)
    menu, moved = mend(PAGE, {**DEFAULTS, "seed": 3, "a_scale": 0.5, "normalizer": normalizer}, "normalizer")
    assert opened == (menu, {}, moved.note) and opened.note
    assert opened.values["normalizer"] == normalizer and opened.values["a_init"] == "shifted"
    assert (opened.values["seed"], opened.values["a_scale"]) == (3, 0.5)  # the link's own values kept
    a0 = ex.build_experiment(opened.values).resolved().a0
    sigma = make_normalizer(normalizer)
    scores = sigma.forward(np.asarray(a0))  # an independent look at the start: defined, and alive
    assert np.all(np.isfinite(scores)) and np.any(scores)


def test_a_link_that_sets_the_start_itself_is_not_moved():
    values, ignored = link({"normalizer": "l2", "a_init": "zeros"})  # the user's own dead end: said
    assert set(ignored) == {"normalizer"} and "undefined at the starting logits" in ignored["normalizer"]
    assert values["normalizer"] == "softmax"
    assert open_link(PAGE, {"normalizer": "l2", "a_init": "zeros"}).note == ""
    assert link({"normalizer": "softmax"}) == (DEFAULTS, {}) and open_link(PAGE, {}).note == ""


def test_l2_with_a_start_where_it_is_defined_is_kept():
    values, ignored = link({"normalizer": "l2", "a_init": "gaussian", "a_scale": "0.5"})
    assert ignored == {} and values["normalizer"] == "l2"


def test_parameters_that_are_not_ours_are_ignored_silently():
    query = {"utm_source": "x", "fbclid": "abc", "lti_message_hint": "1", "n": "5"}
    values, ignored = link(query)
    assert ignored == {} and values == {**DEFAULTS, "n": 5}


def test_garbage_is_reported_field_by_field_and_replaced_by_defaults():
    query = {"n": "abc", "loss": "hinge", "zzz": "1", "horizon": "3e4", "seed": "-1", "d": "1e9",
             "temperature": "2", "normalizer": "sigmoid", "preset": "nope", "a_scale": "nan"}
    values, ignored = link(query)
    assert set(ignored) == {"n", "loss", "horizon", "seed", "d", "temperature", "preset", "a_scale"}
    assert ignored["n"] == "must be a number" and ignored["a_scale"] == "must be a finite number"
    assert "softmax" in ignored["temperature"]  # the clash, in words
    assert values == {**DEFAULTS, "normalizer": "sigmoid"}
    assert ex.check(values) is None  # what remains is a valid run


@pytest.mark.parametrize(
    ("query", "dropped", "kept"),
    [({"n": "abc"}, {"n"}, {}), ({"n": "2.5", "seed": "7"}, {"n"}, {"seed": 7}),
     ({"lr": "fast", "method": "gd", "horizon": "100"}, {"lr"}, {"method": "gd"}),
     ({"horizon": "1e305"}, {"horizon"}, {}),
     ({"normalizer": "tanh", "lr": "0.05"}, {"normalizer"}, {"lr": 0.05}),
     ({"method": "gd", "lr": "1e-9", "horizon": "100"}, {"lr"}, {"method": "gd"}),
     ({"bogus": "1", "utm_source": "x", "seed": "4"}, set(), {"seed": 4})],
)
def test_a_link_loses_exactly_the_values_it_cannot_use_and_names_them(query, dropped, kept):
    values, ignored = link(query)
    assert set(ignored) == dropped
    assert all(values[key] == DEFAULTS[key] for key in dropped)
    assert all(values[key] == value for key, value in kept.items())
    ex.build_experiment(values)  # what is left runs


@pytest.mark.parametrize(("typed", "taken"), [
    ({"normalizer": "L2"}, {"normalizer": "l2"}),
    ({"normalizer": " Sparsemax "}, {"normalizer": "sparsemax"}),
    ({"normalizer": "ReLU / Sum"}, {"normalizer": "relu"}), ({"loss": "SQUARE"}, {"loss": "square"}),
    ({"method": "GD", "horizon": "100"}, {"method": "gd"}), ({"a_init": "Vertex"}, {"a_init": "vertex"})])
def test_a_link_s_choices_are_read_as_people_type_them(typed, taken):
    """Case, spacing and punctuation forgiven, by key or display name (issue 45: ``normalizer=L2`` ran
    softmax and said the link could not be used)."""
    values, ignored = link(typed)
    assert ignored == {} and {key: values[key] for key in taken} == taken


@pytest.mark.parametrize("typed", ["l", "", "-", "tanh", "softmax2", "L 2 x"])
def test_a_choice_a_link_does_not_name_alone_is_refused(typed):
    values, ignored = link({"normalizer": typed})
    assert set(ignored) == {"normalizer"} and values["normalizer"] == DEFAULTS["normalizer"]


def test_messages_do_not_repeat_what_the_link_said():
    _, ignored = link({"n": "**bold** `x`", "loss": "<b>hi</b>"})
    assert "bold" not in ignored["n"] and "<b>" not in ignored["loss"]


def test_repeated_keys_use_the_last_value():
    assert link({"n": ["3", "4"]})[0]["n"] == 4


def test_runs_the_explorer_refuses_lose_one_field_of_the_link():
    values, ignored = link({"method": "gd", "horizon": "1e12"})
    assert set(ignored) == {"method"} and values["horizon"] == 1e12  # the flow reaches 1e12
    assert "200,000" in ignored["method"]
    values, ignored = link({"method": "gd", "horizon": "1e6", "lr": "0.5"})
    assert set(ignored) == {"horizon"} and (values["method"], values["lr"]) == ("gd", 0.5)
    values, ignored = link({"normalizer": "l2", "a_init": "zeros"})  # undefined at a(0) = 0
    assert set(ignored) == {"normalizer"} and values["normalizer"] == "softmax"


@pytest.mark.parametrize("name", ["default", "paper-kl", "paper-tied-10", "paper-regression-kappa-3"])
def test_links_round_trip(name):
    values = {**ex.preset_values(name), "seed": 7, "horizon": 1e3, "a_scale": 0.25}
    query = to_query(PAGE, values)
    assert next(iter(query)) == "preset" and set(query) == set(PAGE.keys)
    assert all("+" not in t for t in query.values())  # a + in a query string reads as a space
    assert link(query) == (values, {})


def test_old_links_still_open_the_same_view():
    values, ignored = link({"preset": "paper-kl", "horizon": "1e6"})
    assert ignored == {} and values == {**ex.preset_values("paper-kl"), "horizon": 1e6}


def test_format_value():
    assert [format_value(v) for v in (1e12, 0.1, 1e5, 8, 0.002, 1.5e-7, "kl")] == \
        ["1e12", "0.1", "100000", "8", "0.002", "1.5e-07", "kl"]
    for value in (1e12, 0.1, 0.123456789, 2.5e-7, 123456.5):
        assert float(format_value(value)) == value


def test_every_preset_is_offered_and_loads():
    assert PAGE.control("preset").options == tuple(PRESETS)
    n = PAGE.control("n")
    for name in PRESETS:
        values = ex.preset_values(name)
        assert values["horizon"] in ex.HORIZONS
        assert n.low <= values["n"] <= n.high
        assert isinstance(ex.job(values).experiment, Experiment)


# ---- controls' rules --------------------------------------------------------------------------


def test_rules_say_when_a_control_applies():
    def enabled(key, **changes):
        return PAGE.control(key).enabled({**DEFAULTS, **changes})

    assert enabled("temperature") and not enabled("temperature", normalizer="sigmoid")
    assert not enabled("lr") and enabled("lr", method="gd")
    assert not enabled("a_scale") and enabled("a_scale", a_init="gaussian")
    assert not enabled("a_shift", a_init="gaussian") and enabled("a_shift", a_init="vertex")
    assert enabled("V_scale") and not enabled("V_scale", V_init="zeros")
    assert enabled("d") and not enabled("d", preset="paper-tied-10")
    assert PAGE.control("d").derive({**ex.preset_values("paper-tied-10"), "n": 6}) == 6
    assert PAGE.control("temperature").derive({**DEFAULTS, "normalizer": "relu"}) == 1.0


def test_a_value_from_a_figure_is_fitted_to_its_control():
    seed, loss, lr = PAGE.control("seed"), PAGE.control("loss"), PAGE.control("lr")
    assert seed.fit(3.7) == 3 and isinstance(seed.fit(3.7), int)  # taken down to a multiple of the step
    assert seed.fit(-5) == seed.low and seed.fit(1e30) == seed.high  # clipped to the range
    assert loss.fit("square") == "square" and loss.fit("nope") is None
    assert seed.fit("x") is None and seed.fit(math.nan) is None and seed.fit(None) is None
    assert math.isclose(lr.fit(2.57 * lr.step), 2 * lr.step) and lr.fit(lr.low / 10) == lr.low


def test_a_click_sets_only_the_controls_that_apply():
    plot = Plot("any", go.Figure(), selects={"seed": 0, "lr": 1})
    point = {"customdata": [7, 0.05]}
    assert selected_values(plot, [point], PAGE, {**DEFAULTS, "method": "flow"}) == {"seed": 7}  # lr: gd only
    assert selected_values(plot, [point], PAGE, {**DEFAULTS, "method": "gd"}) == {"seed": 7, "lr": 0.05}


# ---- experiments from controls --------------------------------------------------------------


def test_preset_arrays_kept_until_their_settings_change():
    name = "paper-compare-logistic"
    base, values = PRESETS[name].experiment, ex.preset_values(name)
    kept = ex.build_experiment({**values, "horizon": 1e3})
    assert kept.a0 == base.a0 and kept.V0 == base.V0
    assert text.init_note(kept).startswith("Starting from the preset's own arrays")
    fresh_a = ex.build_experiment({**values, "a_init": "gaussian"})
    assert fresh_a.a0 is None and fresh_a.V0 == base.V0
    fresh_v = ex.build_experiment({**values, "V_scale": 0.5})
    assert fresh_v.V0 is None and fresh_v.a0 == base.a0
    reseeded = ex.build_experiment({**values, "seed": 1})
    assert reseeded.a0 is None and text.init_note(reseeded) == ""


def test_tied_model_d_follows_n():
    e = ex.build_experiment({**ex.preset_values("paper-tied-10"), "n": 6, "d": 3})
    assert e.model == "tied" and e.n == e.d == 6


def test_the_caption_says_what_changed():
    assert "changed" not in ex.caption(DEFAULTS)
    assert "(changed from the preset: tokens n)" in ex.caption({**DEFAULTS, "n": 3})


def test_the_explorer_refuses_what_a_page_should_not_run():
    problem = ex.job({**DEFAULTS, "method": "gd", "horizon": 1e5, "lr": 0.1})
    assert isinstance(problem, Problem) and problem.fields[0] == "horizon" and "steps" in problem.message
    assert isinstance(ex.job({**DEFAULTS, "method": "gd", "horizon": 1e3}).experiment, Experiment)
    problem = ex.check({**DEFAULTS, "normalizer": "l2"})
    assert problem.fields[0] == "normalizer" and "undefined" in problem.message
    clash = ex.job({**DEFAULTS, "normalizer": "relu", "temperature": 2.0})
    assert clash.fields == ("temperature",) and clash.message.startswith("Temperature:")


# ---- the view of a run ------------------------------------------------------------------------


def test_a_lecturer_can_keep_the_verdict_for_after_play():
    values, ignored = link({"verdict": "after"})
    assert ignored == {} and to_query(PAGE, values)["verdict"] == "after"  # kept in the link
    assert link({})[0]["verdict"] == "now"  # by default, as before
    kept = ex.explore(*ex.job(values))
    shown = ex.explore(*ex.job(DEFAULTS))
    (folded,) = kept.blocks[0].columns[1]
    assert isinstance(folded, Folded) and folded.label == ex.AFTER_PLAY and not folded.expanded
    assert folded.blocks == shown.blocks[0].columns[1]  # the same numbers, folded until asked
    assert ex.build_experiment(values) == ex.build_experiment(DEFAULTS)  # the same run


def test_a_verdict_kept_for_after_play_keeps_the_curves_too():
    """Before Play the time panels drew the whole run (the scores settling on their winner, the entropy
    falling to its end) beside the folded verdict: with the verdict kept, each curve reaches only as far
    as the frame shown, and the last frame draws it whole. Read against the run's own times and scores."""
    values = {**DEFAULTS, "verdict": "after"}
    kept, shown = ex.explore(*ex.job(values)), ex.explore(*ex.job(DEFAULTS))
    figure, whole = kept.plots()[0].figure, shown.plots()[0].figure
    go.Figure(figure)  # still a valid plotly figure
    result = kept.data
    t, s = np.asarray(result.t, dtype=float), np.asarray(result.s, dtype=float)
    first, last = int(figure["frames"][0]["name"]), int(figure["frames"][-1]["name"])
    scores = [(i, tr) for i, tr in enumerate(figure["data"]) if tr.get("uid", "").startswith("scores-token")]
    assert len(scores) == s.shape[1]
    for i, trace in scores:  # before Play: nothing past the first frame's time
        assert all(x <= t[first] * 1.001 + 1e-12 for x in trace["x"]), trace["x"][-3:]
        token = int(trace["uid"].removeprefix("scores-token"))
        drawn = whole["data"][i]
        assert len(drawn["x"]) > 10 and np.isclose(drawn["y"][-1], s[-1, token], rtol=1e-3)
    for frame in figure["frames"][1:-1]:
        k = int(frame["name"])
        for i, _ in scores:
            state = frame["data"][frame["traces"].index(i)]
            assert state["x"] and max(state["x"]) <= t[k] * 1.001 and min(state["x"]) >= 0
    end = figure["frames"][-1]
    for i, _ in scores:  # the last frame: the whole curve, to the run's end
        state = end["data"][end["traces"].index(i)]
        assert state["x"] == whole["data"][i]["x"] and np.isclose(max(state["x"]), t[last], rtol=1e-3)
    assert [tr["uid"] for tr in figure["data"]] == [tr["uid"] for tr in whole["data"]]
    # Nor does a legend tell it (one ranked by the end scores led with the winner): the tokens have none.
    keyed = [tr for tr in figure["data"] if tr.get("showlegend") and tr.get("legend", "legend") == "legend"]
    assert not keyed


def test_the_view_shows_the_run():
    view = ex.explore(Experiment(n=5, d=5))
    assert view.error is None and view.warnings == ()
    assert view.data.s.shape[1] == 5
    (plot,) = view.plots()
    # Built as a plain dict for the browser; a valid plotly figure (go.Figure of a dict validates it all).
    dashboard = go.Figure(plot.figure)
    assert dashboard.layout.meta["n"] == 5 and dashboard.frames
    numbers = view.blocks[0].columns[1]
    # The verdict is said to be the run's end before it is given (the figure opens at the start).
    assert numbers[0] == Text(ex.END_OF_RUN) and "end of the run" in numbers[0].text.lower()
    assert numbers[1] == Metric("Polarized?", "Yes", numbers[1].help)
    assert [m.label for m in numbers[3:]] == ["Final entropy", "Winning token", "1 \u2212 max s",
                                              "Final loss", "Time reached"]
    captions = [c.text for column in view.blocks[1].columns for c in column]
    assert [c.split(".**")[0] for c in captions] == ["**Simplex of scores", "**Scores s_i(t)",
                                                     "**Fitness vs score", "**Entropy H(s(t))", "**Loss"]
    clip = [f"Clip ({kind})" for suffix, (kind, _) in export.CLIPS.items()  # a browser and the extra
            if animate.available(suffix)]
    assert [d.label for d in view.downloads] == ["Trajectory (CSV)", "Trajectory (JSON)",
                                                 "Configuration (JSON)", "Dashboard (HTML)", *clip]


def test_captions_follow_the_loss():
    assert "p_i" in text.panel_captions(Experiment())[2]
    assert "p_i" not in text.panel_captions(Experiment(loss="square"))[2]


def test_the_repulsion_panel_mode_is_a_control_that_changes_the_view_not_the_run():
    bars = {**DEFAULTS, "n": 4, "horizon": 1e3, "repulsion": "replicator"}
    points = {**bars, "repulsion": "fitness"}
    shown, plain = ex.job(bars), ex.job(points)
    assert shown.experiment == plain.experiment and shown.repulsion == "replicator" and shown != plain
    assert ex.caption(bars) == ex.caption(points)  # a way of showing, not a change from the preset
    assert link(to_query(PAGE, bars)) == (bars, {})
    assert link({"repulsion": "bars"})[1].keys() == {"repulsion"}
    view = PAGE.view(shown)
    assert view.error is None and view.data.s.shape[1] == 4
    (plot,) = view.plots()
    uids = {t["uid"] for t in plot.figure["data"]}
    assert "replicator-bars" in uids and not any(uid.startswith("repulsion-") for uid in uids)
    repulsion = view.blocks[1].columns[1][1].text
    assert repulsion.startswith("**Replicator: u_i \u2212 s\u00b7u.**") and "gain logit" in repulsion
    assert "replicator-bars" not in {t["uid"] for t in PAGE.view(plain).plots()[0].figure["data"]}
    sigmoid = text.panel_captions(Experiment(normalizer="sigmoid"), "replicator")[2]
    assert "need not be the direction" in sigmoid


def test_the_view_reports_errors_in_words():
    view = ex.explore(Experiment(normalizer="l2"))
    assert view.data is None and "undefined" in view.error and not view.blocks


def test_slow_runs_are_stopped():
    run_with_timeout(Experiment(n=3, d=3), timeout=30)  # a warm worker, so that only the slow run times out
    slow = Experiment(n=64, d=64, method="gd", lr=0.1, horizon=2e4)  # 200,000 descent steps
    with pytest.raises(RunTimeout):
        run_with_timeout(slow, timeout=0.3)
    # (The Explorer's own runs stop themselves before the limit: tests/test_transport_overtime.py.)
    assert run_with_timeout(Experiment(n=3, d=3), timeout=30).finished  # a fresh worker takes over


def test_engine_errors_cross_the_process_boundary():
    with pytest.raises(ConfigError) as caught:
        run_with_timeout(Experiment(normalizer="l2"), timeout=30)
    assert caught.value.field == "a_init"


# ---- verdicts -------------------------------------------------------------------------------


def test_verdict_words():
    assert judge(run()).status.answer == "Yes"
    assert judge(run(normalizer="sigmoid")).status.answer == "No"
    assert math.isclose(judge(run()).entropy, float(run().entropy[-1]))


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


def test_configuration_runs_again_with_the_cli(tmp_path):
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
    html = view.downloads[3].data()
    assert html.lstrip().lower().startswith("<!doctype html>")
    assert "<title>polarize-n3-logistic-softmax-flow-seed0</title>" in html
    settings, verdict = title_lines(view.data)
    assert html.index(html_escape(settings)) < html.index(html_escape(verdict)) < html.index("Plotly.newPlot")
    assert "* plotly.js v" in html and "<script src=" not in html  # plotly.js embedded: plays offline
    # The frames, not auto-playing (plotly's auto-play is a call on the figure's id after its frames).
    assert html.count("Plotly.addFrames") == 1 and "Plotly.animate('" not in html
    assert export.file_stem(Experiment()) == "polarize-n8-logistic-softmax-flow-seed0"


@pytest.mark.skipif(not animate.available(".mp4"), reason="needs the animate extra and a browser")
def test_the_explorer_offers_its_dashboard_as_an_mp4_clip_for_slides():
    view = ex.explore(Experiment(n=3, d=3, horizon=1e2))
    clip = {d.key: d for d in view.downloads}["mp4"]
    assert clip.filename == "polarize-n3-logistic-softmax-flow-seed0.mp4" and clip.mime == "video/mp4"
    data = clip.data()  # made on click
    assert data[4:8] == b"ftyp" and len(data) > 10_000  # an MP4 container with frames in it


@pytest.mark.parametrize("normalizer", list(NORMALIZERS))
def test_the_title_and_lead_name_the_chosen_normalizer_by_its_label(normalizer):
    """It said "watch softmax polarize" whatever the normalizer, then "does l2 polarize?" (its internal
    name) under a lead about softmax(a); whether it polarizes is the verdict's to say."""
    values = {**ex.EXPLORER.defaults(None), "normalizer": normalizer}
    label = NORMALIZERS[normalizer].label
    heading, lead = ex.EXPLORER.heading(values), ex.EXPLORER.leading(values)
    others = [NORMALIZERS[name].label for name in NORMALIZERS if name != normalizer]
    assert label in heading and not [other for other in others if other in heading]
    assert label in lead and len(re.findall(r"[.!?](?:\s|$)", lead)) == 2
    assert ("softmax(a)" in lead) == (normalizer == ex.EXPLORER.defaults(None)["normalizer"])
