"""The Attention sinks page with the shipped runs: its view, its figures, headless, and without JAX."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from polarize.plots.sinks import attention_figure, token_labels, training_figure
from polarize.sinks.runs import read_run, shipped_runs
from polarize.web import pages

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


def test_attention_figure_has_a_panel_per_head_and_marks_sinks():
    name = next(n for n in shipped_runs() if "softmax" in n)
    record = read_run(shipped_runs()[name])
    figure = attention_figure(record, len(record["maps"]) - 1)
    assert len(figure.data) == 8
    titles = [a.text for a in figure.layout.annotations]
    assert any("SINK" in t for t in titles) == bool(record["accuracy"] > 0.95)
    assert len(training_figure(record).data) == 8 + 2 + 1


def test_token_labels_mark_bos_and_the_query():
    assert token_labels([0, 7, 57], 50) == ["0:BOS", "1:7", "2:7\u2032"]


def test_the_view_at_its_defaults():
    spec = pages.by_name("sinks")
    view = spec.view(spec.make_job(spec.defaults(None)))
    assert view.error is None and len(view.plots()) == 2
    assert all(plot.caption for plot in view.plots())


def test_the_page_runs_headless_and_the_checkpoint_changes_the_maps():
    at = AppTest.from_file(str(ROOT / "pages" / "sinks.py"), default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Attention sinks"
    before = at.get("plotly_chart")[0].proto.spec
    at.slider(key="sinks_checkpoint").set_value(0).run()
    assert not at.exception
    assert at.get("plotly_chart")[0].proto.spec != before


def test_the_page_needs_no_jax():
    code = ("import sys; sys.modules['jax'] = None; sys.modules['optax'] = None\n"
            "from polarize.web import pages\n"
            "spec = pages.by_name('sinks')\n"
            "view = spec.view(spec.make_job(spec.defaults(None)))\n"
            "assert view.error is None and len(view.plots()) == 2, view.error\n"
            "print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "ok", out.stderr
