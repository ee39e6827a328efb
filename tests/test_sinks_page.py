"""The Attention sinks page with the shipped runs: its view, its figures, headless, and without JAX."""

from __future__ import annotations

import concurrent.futures
import json
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from support.app import figures
from support.app import page as app_page
from support.controls import control

from polarize.integrate import simulate
from polarize.plots.transformer import attention_figure, massive_figure, token_labels, training_figure
from polarize.presets import paper_tied
from polarize.sinks.runs import read_run, shipped_runs
from polarize.web import pages
from polarize.web.pages import sinks as sinks_page
from polarize.web.progress import progress_notices

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60

pytestmark = pytest.mark.skipif(not shipped_runs(), reason="no shipped runs in this checkout")


def test_shipped_runs_read_and_show_the_papers_claim():
    for name, path in shipped_runs().items():
        record = read_run(path)
        scores = np.asarray(record["sink_scores"])
        assert scores.shape == (2, 4), name
        if record["config"].attention != "raw":  # raw weights are signed: their share is not in [0, 1]
            assert np.all((scores >= 0) & (scores <= 1 + 1e-6)), name
        if record["config"].attention == "softmax" and record["accuracy"] > 0.95:
            assert scores[1].max() > 0.9, name  # a layer-1 sink head


def _softmax_run() -> dict:
    name = next(n for n in shipped_runs() if "softmax" in n)
    return read_run(shipped_runs()[name])


def test_attention_figure_opens_at_the_end_plays_the_checkpoints_and_marks_sinks_as_they_appear():
    record = _softmax_run()
    figure = go.Figure(attention_figure(record))
    assert len(figure.data) == 8
    assert [frame.name for frame in figure.frames] == [str(m["step"]) for m in record["maps"]]
    for frame, snapshot, entry in zip(figure.frames, record["maps"], record["history"], strict=True):
        assert len(frame.data) == 8
        np.testing.assert_allclose(frame.data[4].z, np.asarray(snapshot["weights"])[0][1, 0])
        marked = any("SINK" in a.text for a in frame.layout.annotations)
        assert marked == bool(entry["accuracy"] > 0.95 and np.max(entry["sink_scores"]) > 0.9)
    # It opens at the end of training, where the page's numbers are (not at step 0, where the heads
    # showed sink scores of 0.2 under a headline of 0.99): the last checkpoint's maps and titles.
    last = record["maps"][-1]
    np.testing.assert_allclose(figure.data[4].z, np.asarray(last["weights"])[0][1, 0])
    titles = [a.text for a in figure.frames[-1].layout.annotations]
    assert [a.text for a in figure.layout.annotations][:len(titles)] == titles
    assert figure.layout.sliders[0].active == len(figure.frames) - 1
    # Heatmaps change only when redrawn: every play button and slider step must redraw.
    steps = figure.layout.sliders[0].steps
    assert [s.label for s in steps] == [frame.name for frame in figure.frames]
    assert all(s.args[1]["frame"]["redraw"] for s in steps)
    assert all(b.args[1]["frame"]["redraw"] for menu in figure.layout.updatemenus for b in menu.buttons
               if b.method == "animate")


def test_a_phone_keeps_neighbouring_head_titles_apart():
    """Two heads a row in a phone's column (the colour bar and the query labels beside them): a title's
    line of 16 characters ("sink 0.98 \u2605 SINK") ran into its neighbour's; the star alone marks a
    sink head there, the same heads as on a desktop."""
    record = _softmax_run()
    desktop, phone = go.Figure(attention_figure(record)), go.Figure(attention_figure(record, narrow=True))
    for wide, narrow in zip(desktop.frames, phone.frames, strict=True):
        lines = [line for a in narrow.layout.annotations for line in a.text.split("<br>")]
        assert max(map(len, lines)) <= len("layer 0, head 0")
        assert ["SINK" in a.text for a in wide.layout.annotations] == \
            ["\u2605" in a.text for a in narrow.layout.annotations]


def test_training_and_massive_figures():
    record = _softmax_run()
    assert len(go.Figure(training_figure(record)).data) == 8 + 1
    tied = simulate(paper_tied(10))
    figure = go.Figure(massive_figure(record, tied))
    bos = [trace for trace in figure.data if trace.name and trace.name.startswith("BOS")]
    assert len(bos) == 2
    np.testing.assert_allclose(bos[1].y, [h["bos_norms"][1] for h in record["history"]], rtol=1e-4)
    toy = [trace for trace in figure.data if trace.name == "column at argmax \u03b1"]
    assert len(toy) == 1 and toy[0].y[-1] > 2 * toy[0].y[0]  # the toy's column grows


def test_token_labels_mark_bos_and_the_query():
    assert token_labels([0, 7, 57], 50) == ["0:BOS", "1:7", "2:7\u2032"]


def test_the_view_at_its_defaults():
    spec = pages.by_name("sinks")
    view = spec.view(spec.make_job(spec.defaults(None)))
    assert view.error is None and len(view.plots()) == 3
    assert all(plot.caption for plot in view.plots())


def test_a_seed_not_shipped_says_which_are():
    spec = pages.by_name("sinks")
    view = spec.view(spec.make_job({**spec.defaults(None), "seed": 57}))
    assert "seed 57" in view.error and "shipped seeds: 0" in view.error and "live" in view.error
    view = spec.view(spec.make_job({**spec.defaults(None), "size": "paper", "seed": 57}))
    assert "paper size" in view.error and "classroom size" in view.error


def test_live_training_is_classroom_size_only():
    spec = pages.by_name("sinks")
    view = spec.view(spec.make_job({**spec.defaults(None), "size": "paper", "source": "live"}))
    assert "classroom size only" in view.error and "polarize sinks train --size paper" in view.error


@pytest.mark.skipif(not any(name.startswith("paper-") for name in shipped_runs()), reason="no paper runs")
def test_the_shipped_paper_runs_have_the_papers_settings_and_show_its_claim():
    from polarize.sinks.config import variant_config

    spec = pages.by_name("sinks")
    for name in (n for n in shipped_runs() if n.startswith("paper-")):
        record = read_run(shipped_runs()[name])
        config = record["config"]
        assert record["size"] == "paper"
        assert config == variant_config("paper", config.variant, seed=config.seed)
        scores = np.asarray(record["sink_scores"])
        learned = record["accuracy"] > 0.95
        if config.variant == "softmax":
            assert learned and scores[1].max() > 0.9, name  # a layer-1 sink head at the paper's size
        elif config.variant == "sigmoid-unnormalized" and scores[1].max() > 0.9:
            # What the page says of it: the top head puts 0.6 to 0.9 on BOS, the layer's others almost off.
            last = np.asarray(record["maps"][-1]["weights"])[:, 1, :, 1:10, :]  # layer 1, queries 1..9
            top = int(np.argmax(scores[1]))
            assert 0.6 <= last[:, top, :, 0].mean() <= 0.9, name
            assert np.delete(last.sum(axis=-1).mean(axis=(0, 2)), top).max() < 0.2, name
        values = {**spec.defaults(None), "size": "paper", "variant": config.variant, "seed": config.seed}
        assert spec.view(spec.make_job(values)).error is None


def test_the_page_runs_headless_and_the_sequence_changes_the_maps():
    at = app_page("sinks", timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Attention sinks"
    assert len(figures(at)) == 3
    before = figures(at)[0]
    control(at, key="sinks_sequence").set_value(1).run()
    assert not at.exception
    assert figures(at)[0] != before


def test_live_training_without_the_extra_names_it(monkeypatch):
    monkeypatch.setattr(sinks_page, "available", lambda: False)
    at = app_page("sinks", timeout=TIMEOUT).run()
    control(at, key="sinks_source").set_value("live").run()
    assert not at.exception
    (error,) = at.error
    assert "polarize[sinks]" in error.value and not figures(at)


def test_the_page_needs_no_jax():
    code = ("import sys; sys.modules['jax'] = None; sys.modules['optax'] = None\n"
            "from polarize.web import pages\n"
            "spec = pages.by_name('sinks')\n"
            "view = spec.view(spec.make_job(spec.defaults(None)))\n"
            "assert view.error is None and len(view.plots()) == 3, view.error\n"
            "print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "ok", out.stderr


def _fake_trainer(monkeypatch) -> list:
    """Stand in for the trainer (which test_sinks_training runs for real, in a child): a shipped record."""
    raw = json.loads(shipped_runs()["classroom-softmax-seed0"].read_text())
    calls = []

    def trainer(config, progress):
        calls.append(config)
        progress(config.steps // 2, config.steps)
        progress(config.steps, config.steps)
        return {key: value for key, value in raw.items() if key != "size"}

    monkeypatch.setattr(sinks_page, "available", lambda: True)
    monkeypatch.setattr(sinks_page, "train_live", trainer)
    sinks_page.LIVE.clear()
    return calls


def test_a_live_run_reports_its_progress_and_is_shown_like_a_shipped_one(monkeypatch):
    calls = _fake_trainer(monkeypatch)
    heard = []
    spec = pages.by_name("sinks")
    job = spec.make_job({**spec.defaults(None), "source": "live", "seed": 7})
    try:
        with progress_notices(lambda fraction, text: heard.append(fraction)):
            view = spec.view(job)
            again = spec.view(job)  # trained once per variant and seed
    finally:
        sinks_page.LIVE.clear()
    assert view.error is None and again.error is None and len(view.plots()) == 3
    assert len(calls) == 1 and calls[0].seed == 7 and calls[0].attention == "softmax"
    assert heard == [0.0, 0.5, 1.0]


def test_two_visitors_asking_for_the_same_live_run_train_it_once(monkeypatch):
    """The second visitor waits for the training under way (serve.cache.SharedCache), not training too."""
    calls = _fake_trainer(monkeypatch)
    trainer, asked = sinks_page.train_live, threading.Semaphore(0)

    class Watched(type(sinks_page.LIVE)):
        def get(self, key, compute):
            asked.release()
            return super().get(key, compute)

    def slow_trainer(config, progress):
        assert asked.acquire(timeout=60) and asked.acquire(timeout=60)  # both visitors have asked
        return trainer(config, progress)

    monkeypatch.setattr(sinks_page, "LIVE", Watched(8))
    monkeypatch.setattr(sinks_page, "train_live", slow_trainer)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        records = list(pool.map(lambda _: sinks_page._live("softmax", 9), range(2)))
    assert len(calls) == 1 and records[0] is records[1]


def test_the_page_draws_a_live_runs_progress(monkeypatch):
    calls = _fake_trainer(monkeypatch)
    try:
        at = app_page("sinks", timeout=TIMEOUT).run()
        at.session_state["sinks_source"] = "live"  # two changes, one run: the first straight into the session
        control(at, key="sinks_seed").set_value(8).run()
    finally:
        sinks_page.LIVE.clear()
    assert not at.exception, [e.value for e in at.exception]
    assert len(calls) == 1 and calls[0].seed == 8
    assert len(figures(at)) == 3 and not at.error


def test_the_downloads_are_the_run_and_its_attention_titled_with_settings_and_verdict(tmp_path):
    from polarize.clips import animate
    from polarize.sinks.metrics import sink_heads

    spec = pages.by_name("sinks")
    view = spec.view(spec.make_job(spec.defaults(None)))
    downloads = {download.key: download for download in view.downloads}
    stem = "polarize-sinks-classroom-softmax-seed0"
    assert downloads["run"].filename == f"{stem}.json"
    assert downloads["attention-html"].filename == f"{stem}-attention0.html"  # evaluation sequence 0
    for suffix in (".gif", ".mp4"):
        key = f"attention-{suffix[1:]}"
        assert (key in downloads) == animate.available(suffix)
        if key in downloads:
            assert downloads[key].filename == f"{stem}-attention0{suffix}"
    path = tmp_path / downloads["run"].filename
    path.write_text(downloads["run"].data())
    shipped = read_run(shipped_runs()["classroom-softmax-seed0"])
    again = read_run(path)  # the file polarize sinks train writes
    assert again["config"] == shipped["config"] and again["history"] == shipped["history"]
    assert again["maps"] == shipped["maps"] and again["size"] == "classroom"
    page = downloads["attention-html"].data()
    count = int(sink_heads(np.asarray(shipped["sink_scores"]), shipped["accuracy"]).sum())
    assert count > 0 and f"{count} sink heads: induction accuracy {shipped['accuracy']:.3f}" in page
    top = float(np.max(shipped["sink_scores"][1]))
    assert f"top sink score in layer 1 {top:.3f}" in page
    steps = shipped["config"].steps
    assert f"softmax attention, classroom size, seed 0, {steps:,} steps, evaluation sequence 0" in page


def _readme_paper_table() -> dict[tuple[str, int], tuple[str, str]]:
    """The README's table of paper-size runs: (variant, seed) -> (accuracy, top score) as printed."""
    rows = {}
    for line in (ROOT / "README.md").read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[1].isdigit():
            kind, _, rows_kind = cells[0].partition(", ")
            variant = f"{kind}-{rows_kind}" if rows_kind else kind
            rows[(variant, int(cells[1]))] = (cells[2], cells[3])
    return rows


def test_the_readme_table_lists_every_shipped_paper_run_as_it_is():
    table = _readme_paper_table()
    shipped = {}
    for name in (n for n in shipped_runs() if n.startswith("paper-")):
        record = read_run(shipped_runs()[name])
        top = float(np.max(np.asarray(record["sink_scores"])[1]))
        config = record["config"]
        shipped[(config.variant, config.seed)] = (f"{record['accuracy']:.3f}", f"{top:.3f}")
    assert table == shipped


def test_the_sinks_page_explains_right_after_its_main_figure():
    """Its 12-line "Why a sink?" before the figure put Play at about 1,070 px of a 720 px window."""
    from polarize.web.fit import main_block
    from polarize.web.pages import by_name
    from polarize.web.view import Text

    spec = by_name("sinks")
    blocks = spec.view(spec.make_job(spec.defaults(None))).blocks
    why = next(i for i, b in enumerate(blocks) if isinstance(b, Text) and "Why a sink?" in b.text)
    assert why == main_block(blocks) + 1 and blocks[main_block(blocks)].key == "sinks-attention"
    assert not [b for b in blocks[:why] if isinstance(b, Text)]  # nothing to read before the figure
