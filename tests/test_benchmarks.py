"""Every script in benchmarks/ still runs: its ``--quick`` mode completes and prints its figures.

A benchmark is a script, run by hand, so nothing else notices when it rots (``browser.py``
once crashed on a figure that had become a plain dict). Each runs here as a subprocess with
this interpreter, on tiny sizes, from this checkout (``PYTHONPATH``); a test asserts only that
it exits with 0 and that every line of its table is there with numbers in it, never what the
numbers are (they are timings, and the machine may be busy).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.browser import BROWSER, CHROMIUM, ROOT

needs_chromium = pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason=f"{CHROMIUM} is missing")
needs_dash = pytest.mark.skipif(importlib.util.find_spec("dash") is None,
                                reason="Dash is not installed (pip install 'polarize[bench]')")
needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None or importlib.util.find_spec("optax")
                               is None, reason="JAX is not installed (pip install 'polarize[sinks]')")

NUMBER = r"\d+(?:\.\d+)?"
# script and its arguments besides --quick: (marks, the lines its quick mode prints, as regular expressions
# matched at a line's start)
FIGURES = {
    "engine": ([], [
        rf"paper-logistic +{NUMBER}ms +{NUMBER} +{NUMBER}s\*? +{NUMBER}x +< 40 ms +{NUMBER}$",
        r"engine: median of 1 runs",
    ]),
    "ensemble": ([], [
        r"25 starts, n = 3, logistic, horizon 100$",
        rf" +simulate_many +{NUMBER} s wall, {NUMBER} s CPU",
        rf" +loop over simulate +{NUMBER} s wall, {NUMBER} s CPU \({NUMBER} ms per start, timed on 5\)",
        rf" +speed-up +{NUMBER} x wall, {NUMBER} x CPU",
        rf" +agreement on those 5: same winner \d/5, largest \|s difference\| {NUMBER}e[-+]\d+",
    ]),
    "reproduce": ([], [
        *(rf"{name} +{NUMBER}s$" for name in ("logistic", "tied", "regression", "kl")),
        rf"all figures +{NUMBER}s  \(scaled from slices\)",
        rf"polarize reproduce: {NUMBER} s computing and drawing",
        rf"ratio: {NUMBER}x faster than the loops",
    ]),
    "animate": ([needs_chromium], [
        rf"simulate the default run +{NUMBER} s$",
        rf"dashboard \(5 frames\) +{NUMBER} s$",
        rf"static export once \(browser start incl\.\) +{NUMBER} s$",
        rf"encode GIF \(5 frames, 320x\d+\) +{NUMBER} s$",
        rf"encode MP4 \(5 frames, 320x\d+\) +{NUMBER} s$",
        rf"default GIF end to end, no browser running +{NUMBER} s  \({NUMBER} s CPU, \d+ kB\)$",
        rf"the same again, browser kept +{NUMBER} s  \({NUMBER} s CPU, \d+ kB\)$",
        rf"CPU of all the above, browsers included +{NUMBER} s$",
    ]),
    "sinks": ([needs_jax], [
        rf"a tiny model \(--quick\) softmax: first chunk \(with compile\) {NUMBER} s wall, {NUMBER} s CPU",
        rf"per step: {NUMBER} s wall, {NUMBER} s CPU",
        rf"full run of \d+ steps of that tiny model: ~{NUMBER} min wall",
    ]),
    "browser": (BROWSER, [
        r"warming the server \(each page once\): not for --quick$",
        # Per page, visit and change: one full script run, each figure sent once (or referenced).
        *(rf"{page} +{kind} +{NUMBER} s  \(settled +{NUMBER} s\)  long tasks +{NUMBER} s  "
          rf"(main thread +{NUMBER} s  )?runs 1 \+ \d fragment  figures sent \d of \d "
          rf"\(\+\d by reference, \d+ kB\)"
          for page in ("explorer", "normalizers", "losses")
          for kind in ("first visit", "browser seen", "phone visit", "changed control", "cached control")),
        r"counts: one full script run and each figure sent once, per visit and per change: met$",
    ]),
    # The app against Streamlit alone and Dash: one run (Dash: one callback) and each figure sent once
    # per visit and per change, counted for each; the table's three rows and the ratios to each peer.
    "browser --peers": ([*BROWSER, needs_dash], [
        *(rf"{key} +{kind} +{NUMBER} s  \(settled +{NUMBER} s\)  long tasks +{NUMBER} s  "
          rf"(main thread +{NUMBER} s  )?runs 1 \+ \d fragment  figures sent 1 of 1 "
          for key in ("app", "bare", "dash") for kind in ("first visit", "browser seen", "new random start")),
        *(rf"{name} +{NUMBER} s +{NUMBER} s +{NUMBER} s +{NUMBER} s +{NUMBER} s$"
          for name in ("polarize Explorer", "Streamlit alone", "Dash")),
        *(rf"app / {peer}: first visit {NUMBER}x, same browser again {NUMBER}x, "
          rf'"New random start" -> new figure {NUMBER}x, main thread \(first visit\) {NUMBER}x, '
          rf"server CPU-s \(first visit\) {NUMBER}x$" for peer in ("Streamlit alone", "Dash")),
        r"counts: one full script run and each figure sent once, per visit and per change: met$",
    ]),
    "replicas": (BROWSER, [
        # Every session served (a course of 4 is no load), each checked against the script's own flow.
        rf"2 replica\(s\), 1 worker\(s\): 4 sessions in {NUMBER} s: 4 served, 0 refused in one line, "
        rf"0 wrong of 4 checked, 0 neither; time to figure p50 {NUMBER} s, p95 {NUMBER} s, last {NUMBER} s; "
        rf"replicas' memory peak {NUMBER} \+ {NUMBER} MB \(before {NUMBER} \+ {NUMBER} MB\); "
        rf"replicas {NUMBER} CPU-s a session$",
        r"every session served or refused in one line, none wrong: met$",
        *(rf"{k} replica\(s\): 1 browser first visits: replicas {NUMBER} CPU-s a visit \(median\); "
          rf"static files (\d+)/\1 from the proxy$" for k in (2,)),
    ]),
    "load": ([], [
        rf"sessions served: \d / 3 \(burst took {NUMBER} s\)",
        rf"CPU: {NUMBER} s for the burst, {NUMBER} s per session",
        rf"RSS: {NUMBER} MB before, {NUMBER} MB peak, {NUMBER} MB 5 s after",
        rf"2 runs in a row \(\d not served\): RSS every 1 runs {NUMBER} {NUMBER} MB",
        r"processes left after the server stopped: ",
    ]),
}


def test_every_benchmark_has_a_quick_mode_that_a_test_runs():
    """Here, or in a test of its own that names it (as ``benchmarks/NAME.py``)."""
    here = Path(__file__).name
    tests = [path.read_text() for path in (ROOT / "tests").rglob("test_*.py") if path.name != here]
    for script in sorted((ROOT / "benchmarks").glob("*.py")):
        assert "--quick" in script.read_text(), f"{script.name} has no --quick mode"
        named = f"benchmarks/{script.name}"
        quick = any(run.split()[0] == script.stem for run in FIGURES)
        assert quick or any(named in text for text in tests), f"no test runs {named}"


@pytest.mark.slow
@pytest.mark.parametrize("run", [pytest.param(name, marks=marks) for name, (marks, _) in FIGURES.items()])
def test_the_quick_mode_runs_and_prints_its_figures(run):
    script, *args = run.split()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, str(ROOT / "benchmarks" / f"{script}.py"), "--quick", *args]
    said = " ".join([f"benchmarks/{script}.py --quick", *args])
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired as timeout:
        pytest.fail(f"{said} still ran after {timeout.timeout} s:\n{timeout.stdout}")
    assert done.returncode == 0, f"{said} exited {done.returncode}:\n{done.stderr}"
    lines = done.stdout.splitlines()
    missing = [figure for figure in FIGURES[run][1] if not any(re.match(figure, line) for line in lines)]
    assert not missing, f"{said} did not print {missing}; it printed:\n{done.stdout}"


def test_the_bare_app_draws_the_explorers_figure_and_a_new_one_for_a_new_seed():
    """``benchmarks/apps/bare.py`` (``browser.py --bare``'s floor): the Explorer's default figure alone."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "benchmarks" / "apps" / "bare.py"), default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    (chart,) = at.get("plotly_chart")
    first = json.loads(chart.proto.spec)
    assert first["layout"]["meta"]["n"] == 8 and len(first["frames"]) > 1  # the default's 8 tokens, animated
    at.sidebar.number_input[0].set_value(1).run()
    second = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert second["layout"]["meta"]["n"] == 8 and second["data"] != first["data"]


@needs_dash
def test_the_dash_peer_draws_the_explorers_figure_and_a_new_start_in_one_answer():
    """``benchmarks/apps/dash_app.py`` (``browser.py --peers``' Dash): the figure the Explorer draws for
    the seed typed (built here the Explorer's way, not the public API's the app uses), and after "New
    random start" a new seed in the box with its figure, both in the callback's one answer."""
    from plotly.io.json import to_json_plotly

    from polarize.integrate import simulate
    from polarize.plots.dashboard import dashboard
    from polarize.web.pages import by_name
    from polarize.web.pages.explorer import job

    spec = importlib.util.spec_from_file_location("dash_app", ROOT / "benchmarks" / "apps" / "dash_app.py")
    peer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peer)
    client = peer.app.server.test_client()
    outputs = [{"id": "dashboard", "property": "figure"}, {"id": "seed", "property": "value"}]

    def answer(seed, clicks, changed):
        body = {"output": "..dashboard.figure...seed.value..", "outputs": outputs,
                "changedPropIds": [changed], "inputs": [{"id": "seed", "property": "value", "value": seed},
                           {"id": "reseed", "property": "n_clicks", "value": clicks}]}
        reply = client.post("/_dash-update-component", json=body)
        assert reply.status_code == 200, reply.text
        return reply.get_json()["response"]

    def explorers(seed):
        values = {**by_name("explorer").defaults(None), "seed": seed}
        return json.loads(to_json_plotly(dashboard(simulate(job(values).experiment.resolved()))))

    typed = answer(3, None, "seed.value")
    assert "seed" not in typed and typed["dashboard"]["figure"] == explorers(3)
    started = answer(3, 1, "reseed.n_clicks")
    new = started["seed"]["value"]
    assert 0 <= new < peer.SEEDS and started["dashboard"]["figure"] == explorers(new)


def test_the_course_benchmark_tells_a_wrong_verdict_from_a_right_one():
    """``benchmarks/replicas.py`` checks a session's winner and final entropy against a flow it integrates
    itself: it agrees with the engine's run of the same link, and a winner or an entropy off is wrong."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from replicas import agrees
    from support.stream_client import PageLoad

    from polarize import Experiment, simulate

    for seed in (2000, 2001, 2004):
        result = simulate(Experiment(seed=seed))
        right = {"Winning token": f"{result.winner}", "Final entropy": f"{result.entropy[-1]:.3g}"}
        assert agrees(PageLoad(f"/?seed={seed}", metrics=right), seed)
        other = {**right, "Winning token": f"{(result.winner + 1) % 8}"}
        assert not agrees(PageLoad(f"/?seed={seed}", metrics=other), seed)
        off = {**right, "Final entropy": f"{result.entropy[-1] * 1.02:.3g}"}
        assert not agrees(PageLoad(f"/?seed={seed}", metrics=off), seed)
        assert not agrees(PageLoad(f"/?seed={seed}"), seed)  # served without its numbers


def test_the_course_benchmark_counts_a_busy_server_as_refused_and_a_failed_run_as_neither():
    """A session told the server is too busy was refused in one line; one told that the engine failed
    (seen in a course of 1,000: a Dask wait's TimeoutError) was not: its run was lost, not refused."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from replicas import refused
    from support.stream_client import PageLoad

    from polarize.serve.runner import ServerBusy
    from polarize.web.failures import describe_failure

    busy = describe_failure(ServerBusy("full"))
    failed = describe_failure(TimeoutError("timed out after 1 s."))
    assert refused(PageLoad("/?seed=1", errors=[busy], texts=["# Explorer", busy]))
    assert not refused(PageLoad("/?seed=1", errors=[failed], texts=["# Explorer", failed]))
    assert not refused(PageLoad("/?seed=1", errors=["TimeoutError: "]))  # no answer: not the page's words
    assert not refused(PageLoad("/?seed=1", figures=1, errors=[busy], texts=[busy]))
