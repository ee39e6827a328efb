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
needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None or importlib.util.find_spec("optax")
                               is None, reason="JAX is not installed (pip install 'polarize[sinks]')")

NUMBER = r"\d+(?:\.\d+)?"
# script: (marks, the lines its quick mode prints, as regular expressions matched at a line's start)
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
        rf"warming the server \(each page once\): {NUMBER} s$",
        # Per page, visit and change: one full script run, each figure sent once (or referenced).
        *(rf"{page} +{kind} +{NUMBER} s  \(settled +{NUMBER} s\)  long tasks +{NUMBER} s  "
          rf"runs 1 \+ \d fragment  figures sent \d of \d \(\+\d by reference, \d+ kB\)"
          for page in ("explorer", "normalizers", "losses")
          for kind in ("first visit", "browser seen", "changed control", "cached control")),
        r"counts: one full script run and each figure sent once, per visit and per change: met$",
    ]),
    "replicas": (BROWSER, [
        *(rf"{k} replica\(s\), 1 worker\(s\): 4/4 served, figure median {NUMBER} s, last {NUMBER} s, "
          rf"replicas {NUMBER} CPU-s a session$" for k in (2,)),
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
        assert script.stem in FIGURES or any(named in text for text in tests), f"no test runs {named}"


@pytest.mark.slow
@pytest.mark.parametrize("script", [pytest.param(name, marks=marks) for name, (marks, _) in FIGURES.items()])
def test_the_quick_mode_runs_and_prints_its_figures(script):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    try:
        done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / f"{script}.py"), "--quick"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired as timeout:
        pytest.fail(f"benchmarks/{script}.py --quick still ran after {timeout.timeout} s:\n{timeout.stdout}")
    assert done.returncode == 0, f"benchmarks/{script}.py --quick exited {done.returncode}:\n{done.stderr}"
    lines = done.stdout.splitlines()
    missing = [figure for figure in FIGURES[script][1] if not any(re.match(figure, line) for line in lines)]
    assert not missing, f"benchmarks/{script}.py --quick did not print {missing}; it printed:\n{done.stdout}"


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
