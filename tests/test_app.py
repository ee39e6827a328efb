"""The Streamlit pages, headless (streamlit.testing.v1.AppTest): every page runs, widgets drive it."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from support.app import charts_drawn, figures, link_note, open_page
from support.controls import control

from polarize import Experiment, simulate
from polarize.clips import animate
from polarize.normalizers import NORMALIZERS, make_normalizer
from polarize.plots.animation import frame_indices
from polarize.web import export

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT = 60  # the first run also starts the simulation workers


def explorer(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def dashboard(at: AppTest) -> dict:
    charts = figures(at)
    assert len(charts) == 1  # the dashboard (its repulsion panel also plays the replicator bars)
    return charts[0]


def metric(at: AppTest, label: str) -> str:
    (found,) = [m for m in at.metric if m.label == label]
    return found.value


@pytest.fixture(scope="module")
def default_app() -> AppTest:
    at = explorer()
    no_exception(at)
    return at


def test_explorer_is_the_default_page(default_app):
    at = default_app
    assert at.title[0].value.startswith("Explorer")
    figure = dashboard(at)
    frames = frame_indices(simulate(Experiment()).t)  # the default run's frames, chosen by the toolkit
    assert figure["layout"]["meta"]["n"] == 8 and len(figure["frames"]) == len(frames)
    assert metric(at, "Polarized?") == "Yes"
    assert metric(at, "Winning token").isdigit()
    assert not at.warning and not at.error
    clip = [f"Make clip ({kind})" for suffix, (kind, _) in export.CLIPS.items()  # needs a browser, the extra
            if animate.available(suffix)]
    assert [b.label for b in at.get("download_button")] == ["Trajectory (CSV)", "Trajectory (JSON)",
                                                           "Configuration (JSON)", "Dashboard (HTML)"]
    assert [b.label for b in at.button if b.label.startswith("Make")] == clip  # made when asked
    preset = control(at, key="explorer_preset")
    assert preset.caption == "Logistic loss, 8 tokens, softmax, from uniform scores."  # its description
    captions = [c.value for c in at.caption]
    assert "Preset **default**. Every setting is in the page's address: copy it to share this exact run." \
        in captions
    for panel in ("Simplex of scores", "Scores s_i(t)", "Fitness vs score", "Entropy H(s(t))", "Loss"):
        assert any(c.startswith(f"**{panel}") for c in captions), panel  # what to notice in each panel


@pytest.mark.skipif(not animate.available(".gif"), reason="needs the animate extra and a browser")
def test_a_clip_is_made_when_asked_and_then_offered_for_download(monkeypatch):
    told = []
    make = animate.clip_bytes

    def clip_bytes(*args, progress, **kwargs):  # the page's own clip; what it tells the page kept
        def tell(fraction, text):
            told.append((fraction, text))
            progress(fraction, text)
        return make(*args, progress=tell, **kwargs)

    monkeypatch.setattr(animate, "clip_bytes", clip_bytes)
    at = explorer({"horizon": "100", "n": "3", "d": "3"})
    (button,) = [b for b in at.button if b.label == "Make clip (GIF)"]
    button.click().run()
    no_exception(at)
    assert [b.label for b in at.get("download_button")][-1] == "Clip (GIF)"
    assert "Make clip (GIF)" not in [b.label for b in at.button]
    fractions = [fraction for fraction, _ in told]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0 and fractions == sorted(fractions)
    assert any(text.startswith("Frame 1 of ") for _, text in told)
    at.run()  # the clip is kept for the same view: no button to make it again
    assert [b.label for b in at.get("download_button")][-1] == "Clip (GIF)"


def test_every_control_has_its_key(default_app):
    at = default_app
    for key in ("preset", "n", "d", "loss", "normalizer", "temperature", "method", "lr", "horizon", "seed",
                "a_init", "a_scale", "a_shift", "V_init", "V_scale"):
        assert f"explorer_{key}" in at.session_state, key
    assert control(at, key="explorer_n").value == 8 and control(at, key="explorer_preset").value == "default"
    assert len(control(at, key="explorer_normalizer").options) == len(NORMALIZERS)  # every one registered


def test_the_url_holds_the_state(default_app):
    params = default_app.query_params
    assert params["n"] == ["8"] or params["n"] == "8"
    assert set(params) >= {"preset", "n", "d", "loss", "normalizer", "temperature", "method", "lr",
                           "horizon", "seed", "a_init", "a_scale", "a_shift", "V_init", "V_scale"}


def test_widgets_change_what_is_shown():
    at = explorer()
    entropy_before = metric(at, "Final entropy")
    control(at, key="explorer_n").set_value(3).run()
    no_exception(at)
    assert dashboard(at)["layout"]["meta"]["n"] == 3
    assert metric(at, "Final entropy") != entropy_before
    assert at.query_params["n"] in (["3"], "3")
    control(at, key="explorer_normalizer").set_value("sigmoid").run()
    no_exception(at)
    assert metric(at, "Polarized?") == "No"
    assert control(at, key="explorer_temperature").disabled
    control(at, key="explorer_method").set_value("gd").run()
    no_exception(at)
    assert not control(at, key="explorer_lr").disabled
    assert at.error  # 1e6 descent steps: refused in words, not a traceback
    control(at, key="explorer_horizon").set_value(1e3).run()
    no_exception(at)
    assert not at.error and dashboard(at)["layout"]["meta"]["n"] == 3


def test_the_repulsion_panel_plays_the_replicator_bars_when_chosen():
    at = explorer({"n": "4", "horizon": "1000"})
    control(at, key="explorer_repulsion").set_value("replicator").run()
    no_exception(at)
    assert at.query_params["repulsion"] in (["replicator"], "replicator")
    figure = dashboard(at)
    (bars,) = [i for i, t in enumerate(figure["data"]) if t["type"] == "bar"]  # Streamlit drops uids
    assert bars in figure["layout"]["meta"]["animated"]
    assert all(f["data"][f["traces"].index(bars)]["type"] == "bar" for f in figure["frames"])
    assert any(c.value.startswith("**Replicator: u_i") for c in at.caption)


def test_a_preset_loads_its_settings():
    at = explorer()
    control(at, key="explorer_preset").set_value("paper-kl").run()
    no_exception(at)
    assert control(at, key="explorer_n").value == 10
    assert control(at, key="explorer_loss").value == "kl"
    assert control(at, key="explorer_horizon").value == 1e6
    assert dashboard(at)["layout"]["meta"]["n"] == 10


def test_a_shared_link_sets_the_widgets():
    at = explorer({"n": "5", "seed": "3", "loss": "square", "horizon": "1000"})
    no_exception(at)
    assert not at.warning
    assert control(at, key="explorer_n").value == 5 and control(at, key="explorer_seed").value == 3
    assert control(at, key="explorer_loss").value == "square"
    assert control(at, key="explorer_horizon").value == 1000
    assert dashboard(at)["layout"]["meta"]["n"] == 5


def test_garbage_link_warns_and_uses_defaults():
    at = explorer({"n": "many", "loss": "hinge", "bogus": "1", "horizon": "-3", "seed": "3"})
    no_exception(at)
    warning = link_note(at)  # one line over the figure, why each value was refused in its help
    for key in ("n", "loss", "horizon"):
        assert f"`{key}=" in warning
    assert "bogus" not in warning  # not a setting of ours: not ours to judge
    assert control(at, key="explorer_n").value == 8 and control(at, key="explorer_loss").value == "logistic"
    assert control(at, key="explorer_seed").value == 3  # the valid part of the link is kept
    assert "bogus" not in at.query_params  # the address is cleaned up
    assert dashboard(at)["layout"]["meta"]["n"] == 8


@pytest.mark.parametrize("normalizer", ["l2", "relu"])
def test_a_link_gives_the_picture_the_menu_gives(normalizer):
    """/?normalizer=l2 ran softmax with a warning that pushed Play off screen, /?normalizer=relu a dead
    run; choosing either from the menu moves the start. The link now opens where the menu goes."""
    at = explorer({"normalizer": normalizer, "seed": "3", "a_scale": "0.5"})
    no_exception(at)
    assert not at.warning and not at.error
    assert [c.value for c in at.caption if "start" in c.value]  # the move is said, as from the menu
    menu = explorer({"seed": "3", "a_scale": "0.5"})
    control(menu, key="explorer_normalizer").set_value(normalizer).run()
    assert dict(at.query_params) == dict(menu.query_params)
    assert at.query_params["normalizer"] in ([normalizer], normalizer)
    assert dashboard(at)["layout"]["meta"] == dashboard(menu)["layout"]["meta"]
    assert [c.value for c in at.caption] == [c.value for c in menu.caption]


def test_a_link_from_a_newsletter_opens_without_a_warning():
    at = explorer({"utm_source": "x", "fbclid": "y", "n": "5"})
    no_exception(at)
    assert not at.warning and control(at, key="explorer_n").value == 5


def test_a_tied_preset_keeps_d_equal_to_n():
    at = explorer({"preset": "paper-tied-10"})
    no_exception(at)
    assert control(at, key="explorer_d").disabled
    control(at, key="explorer_n").set_value(6).run()
    no_exception(at)
    assert control(at, key="explorer_d").value == 6 and at.query_params["d"] in (["6"], "6")


@pytest.mark.parametrize("normalizer", sorted(NORMALIZERS))
def test_every_normalizer_from_the_default_preset_gives_a_figure(normalizer):
    """No dead end in the menu: where a normalizer is undefined (l2, l1, sum) or dead (relu) at
    a(0) = 0, the page moves to a start where it is defined, says so, and the address has it."""
    at = explorer()
    control(at, key="explorer_normalizer").set_value(normalizer).run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert dashboard(at)["layout"]["meta"]["n"] == 8
    values = {key: at.query_params[key] for key in ("normalizer", "a_init", "a_shift", "a_scale", "seed")}
    values = {key: value[-1] if isinstance(value, list) else value for key, value in values.items()}
    assert values["normalizer"] == normalizer and values["seed"] == "0"
    a0 = Experiment(a_init=values["a_init"], a_shift=float(values["a_shift"]),
                    a_scale=float(values["a_scale"])).resolved().a0
    sigma = make_normalizer(normalizer)
    scores = sigma.forward(np.asarray(a0))  # an independent look at the start
    assert np.all(np.isfinite(scores)) and (np.any(scores) or not sigma.on_simplex)  # linear's s = a moves
    moved = normalizer in ("l2", "l1", "sum", "relu")
    assert (values["a_init"] == "shifted") == moved
    notes = [c.value for c in at.caption if "now start" in c.value]
    assert len(notes) == int(moved) and all(len(note.splitlines()) == 1 for note in notes)
    if moved:
        control(at, key="explorer_loss").set_value("square").run()  # the note goes once the user moves on
        assert not [c.value for c in at.caption if "now start" in c.value]


def _in_order(node, figures: tuple[int, ...] = ()) -> list[str]:
    """The element types of an AppTest tree's main area, in the order they are drawn ("figure": a
    chart element drawing a figure, ``figures``: their ids)."""
    children = getattr(node, "children", None)
    if not children:
        return ["figure" if id(node) in figures else node.type]
    return [kind for key in sorted(children) for kind in _in_order(children[key], figures)]


def test_the_note_on_a_moved_start_is_one_line_just_above_the_figure():
    """Under the figure it sat at 1141 px of a 1280 x 720 window, out of view (issue 45); an info box
    above squeezed the dashboard: it is one caption line over the figure, in no box
    (tests/browser/test_first_screen_browser.py measures it and Play in the window)."""
    at = explorer()
    control(at, key="explorer_normalizer").set_value("l2").run()
    (note,) = [c.value for c in at.main.caption if "now start" in c.value]
    assert "\n" not in note and len(note) < 160, note
    order = _in_order(at.main, tuple(id(e) for e in charts_drawn(at)))
    assert "alert" not in order and "info" not in order, order
    assert "caption" in order[:order.index("figure")], order  # the note's line, over the figure


def test_a_start_the_normalizer_cannot_use_is_an_error_message_not_a_traceback():
    at = explorer({"normalizer": "l2", "a_init": "gaussian", "a_scale": "0.5"})
    control(at, key="explorer_a_init").set_value("zeros").run()  # the user's own choice: said, not undone
    no_exception(at)
    assert at.error and "undefined" in at.error[0].value
    assert not figures(at)


def test_a_run_that_stops_early_is_a_warning_with_what_was_saved():
    # Gradient descent with too large a step diverges at t = 1.59e3. (The sum normalizer from a gaussian
    # start, seed 5, cross-entropy, used here before, only looked stuck: over a thousand steps near t = 0,
    # then on to the horizon, as an independent DOP853 agrees; issue 42 lifted that stall rule.)
    at = explorer({"method": "gd", "lr": "10", "loss": "square", "V_scale": "3"})
    no_exception(at)
    assert any("stopped" in w.value for w in at.warning)
    assert dashboard(at)["layout"]["meta"]["n"] == 8
    assert metric(at, "Time reached") != "1e5"


def test_the_maths_page_runs():
    at = explorer()
    open_page(at, "maths").run()
    no_exception(at)
    assert at.title[0].value == "About the maths"
    assert len(figures(at)) == 4
    assert [h.value for h in at.header] == ["1. The value-softmax model",
                                            "2. The replicator form: rich get richer",
                                            "3. Polarization, and how slow it is",
                                            "4. Only softmax polarizes like this",
                                            "5. What to look for in the Explorer"]
    formulas = [f.value for f in at.latex]
    assert any(r"\operatorname{softmax}(a / T)" in f for f in formulas)
    assert any(r"\dot a_i = \frac{s_i}{T} \,\bigl(u_i - s \cdot u\bigr)" in f for f in formulas)  # replicator
    assert any("One logistic run (n = 5, seed 1)" in c.value for c in at.caption)
    # Back on the Explorer, the settings are still there.
    open_page(at, "explorer").run()
    no_exception(at)
    assert dashboard(at)["layout"]["meta"]["n"] == 8


def test_a_queued_run_says_so_and_the_cache_does_not_repeat_it(monkeypatch):
    from polarize.serve import runner

    monkeypatch.delenv("POLARIZE_APP_INPROCESS", raising=False)
    admission = runner._POOL.admission
    monkeypatch.setattr(admission, "heavy_after", float("inf"))  # no spare worker: this run must queue
    told: list[int] = []
    monkeypatch.syspath_prepend(str(ROOT))
    import ui.renderer  # the renderer the app's pages run

    monkeypatch.setattr(ui.renderer, "queue_notice", lambda place: told.append(place) or f"queued {place}")
    busy = [threading.Thread(target=runner.call_with_timeout, args=(time.sleep, 3.0), kwargs={"timeout": 60})
            for _ in range(admission.size)]
    for thread in busy:
        thread.start()
    while admission.counts()[0] < admission.size:
        time.sleep(0.02)
    first = explorer({"seed": "918273"})
    for thread in busy:
        thread.join()
    again = explorer({"seed": "918273"})  # from the cache: nothing of the first session's queue
    for at in (first, again):
        no_exception(at)
        assert dashboard(at) and not [i for i in at.info if "queued" in i.value]
    assert told == [1]


def test_a_busy_server_is_said_and_not_remembered_for_the_next_visit(monkeypatch):
    from polarize.serve import runner

    monkeypatch.delenv("POLARIZE_APP_INPROCESS", raising=False)
    monkeypatch.setattr(runner._POOL.admission, "most_waiting", 0)  # refuse every run
    at = explorer({"seed": "918274"})
    no_exception(at)
    assert [e.value for e in at.error] == ["The server is too busy to queue this run just now. "
                                           "Try again in a minute."]
    monkeypatch.setattr(runner._POOL.admission, "most_waiting", 64)
    again = explorer({"seed": "918274"})  # the same link a moment later: run, not the cached refusal
    no_exception(again)
    assert not again.error and dashboard(again)


def test_a_figure_dict_reaches_the_chart_element_without_plotly_objects_and_unchanged(monkeypatch):
    """``ui.charts``: a cached figure dict is sent as it is (no frame objects built, encoded once),
    stays intact, and says by its revision whether the browser has it drawn already."""
    import plotly.graph_objects as go

    from polarize.plots.dashboard import dashboard
    from ui import charts

    spec = dashboard(simulate(Experiment(n=3, d=3)), frames=4)
    before = json.dumps(spec, sort_keys=True)

    def no_frames(*args, **kwargs):
        raise AssertionError("the chart built plotly objects of the figure dict (validated it)")

    monkeypatch.setattr(go.Frame, "__init__", no_frames)
    head, body = charts.payload(spec, config={"displayModeBar": False}).split(b"\n", 1)
    assert json.dumps(spec, sort_keys=True) == before  # the traces keep their uid
    assert json.loads(body) == json.loads(before)  # the figure as it is, frames and uids included
    with pytest.raises(AssertionError, match="validated"):  # the check can fail: a go.Figure validates
        go.Figure(spec)

    def encode_again(*args, **kwargs):
        raise AssertionError("encoded again")

    monkeypatch.setattr(charts.plotly_json, "to_json_plotly", encode_again)
    again = charts.payload(spec, config={"displayModeBar": False})  # the same dict: its bytes, kept
    assert again.split(b"\n", 1) == [head, body]
    revision = json.loads(head)["revision"]
    assert json.loads(charts.payload(spec, config={}).split(b"\n", 1)[0])["revision"] != revision
    monkeypatch.undo()
    other = dashboard(simulate(Experiment(n=3, d=3, seed=1)), frames=4)
    assert json.loads(charts.payload(other, config={"displayModeBar": False}).split(b"\n", 1)[0])[
        "revision"] != revision

