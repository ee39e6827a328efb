"""Shared fixtures: tolerances in the units the flow's solver controls, cached runs, hypothesis profiles,
FIFOs a test makes, and how the suite splits over processes (the browser tests' app server and Chromium
are in tests/browser/conftest.py).

Hypothesis profiles (``HYPOTHESIS_PROFILE`` picks one; ``ci`` by default):

- ``ci``: derandomized (the same examples on every clone and every run), a
  bounded number of examples, no per-example deadline (runs share 2 cores);
- ``dev``: randomized, for hunting new counterexamples locally.

A test's own ``@settings(max_examples=...)`` still bounds that test further.

The suite runs on several processes (pytest-xdist; ``-n auto --dist loadfile --no-loadscope-reorder``
in pyproject.toml): each module whole in one process, so that its module-scoped fixtures are computed
once, the modules in the order ``pytest_collection_modifyitems`` gives them. The browser modules go
first, then the modules with slow tests, then the others, larger first: the longest work starts first
and the processes finish together. Each process that runs browser tests starts its own app server
for them (``shared_server``): at most one per core.

The browser tests were all one group (``--dist loadgroup``), one process's: they took 17 to 21 of
the suite's 36 process-minutes in a run of 17:49 (its 80 slowest durations), about one process's
half or more: in one process of their own they set the suite's time alone. And since pytest 9.2,
xdist 3.8's groups were lost on the way to its scheduler (pytest-dev/pytest-xdist#1386): every test
went to whichever process was free, with every module fixture, Dask cluster and deployment made in
both processes.
"""

from __future__ import annotations

import collections
import functools
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from polarize import Experiment, Result, simulate
from polarize.integrate import ATOL, RTOL
from polarize.presets import PRESETS

settings.register_profile("ci", derandomize=True, max_examples=60, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@dataclass(frozen=True, kw_only=True)
class FlowTolerance:
    """How far two integrations of the same flow (or one and the exact answer) may differ.

    The engine's adaptive steps keep each step's local error below
    ``RTOL * |y| + ATOL`` on every state variable; the global error of the short
    runs in these tests stays within a small multiple of that. ``factor`` (10)
    is that multiple: far above rounding and CPU- or BLAS-dependent step choices
    (which move results at the level of the tolerance itself), far below any
    real discrepancy (a wrong formula or path moves results by 1e-4 and more).
    """

    rtol: float
    atol: float

    def assert_close(self, actual, desired, err_msg: str = "") -> None:
        np.testing.assert_allclose(actual, desired, rtol=self.rtol, atol=self.atol, err_msg=err_msg)

    def slack(self, x) -> np.ndarray:
        """What the solver leaves uncertain in ``x`` (elementwise): ``rtol |x| + atol``."""
        return self.rtol * np.abs(np.asarray(x)) + self.atol

    def assert_non_increasing(self, x, axis: int = 0) -> None:
        """Every step of ``x`` along ``axis`` is a decrease, up to the solver's slack on ``x``."""
        x = np.asarray(x)
        steps = np.diff(x, axis=axis)
        bound = np.take(self.slack(x), np.arange(x.shape[axis] - 1), axis=axis)
        assert np.all(steps <= bound), f"rises by up to {np.max(steps - bound):.3g} beyond the slack"

    def assert_non_decreasing(self, x, axis: int = 0) -> None:
        self.assert_non_increasing(-np.asarray(x), axis=axis)


FLOW_TOLERANCE = FlowTolerance(rtol=10 * RTOL, atol=10 * ATOL)


@pytest.fixture(autouse=True)
def runs_forgotten():
    """Each test makes its own runs: those a page kept by their content (``polarize.web.limited.RUNS``) for
    every visitor are forgotten first (a test of a time limit would be served a run another test made)."""
    from polarize.web import limited

    made_ahead = getattr(sys.modules.get("ui.starts"), "made_ahead", None)
    if made_ahead is not None:  # a page's next start made ahead (``ui.starts.ahead``) ends first:
        made_ahead(timeout=600)  # it would run through what this test patches
    limited.RUNS.clear()


@pytest.fixture
def whole_pages(monkeypatch):
    """Pages computed whole, however loaded the machine (``support.app.WHOLE_PAGE_SECONDS``)."""
    from support.app import WHOLE_PAGE_SECONDS

    monkeypatch.setenv("POLARIZE_APP_TIMEOUT", WHOLE_PAGE_SECONDS)


@pytest.fixture(scope="session")
def flow_tol() -> FlowTolerance:
    """Tolerances ten times what the flow's solver controls per step (``RTOL``, ``ATOL``)."""
    return FLOW_TOLERANCE


@functools.cache
def _simulate_once(experiment: Experiment) -> Result:
    return simulate(experiment)


@pytest.fixture(scope="session")
def run():
    """``simulate``, each distinct experiment computed once per session (results are read-only)."""
    return _simulate_once


@pytest.fixture(scope="session")
def paper_kl(run) -> Result:
    """The paper's cross-entropy run (preset ``paper-kl``), flow time 1e6."""
    return run(PRESETS["paper-kl"].experiment)


@pytest.fixture
def fifo_cleanup():
    """FIFOs made by a test: opened for writing at its end, so that a reader blocked before the fix ends."""
    made: list[Path] = []
    yield made
    import os

    for path in made:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass


JAX_CACHE = {"JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
             "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}
"""JAX's persistent compilation cache keeps every compiled function (``JAX_COMPILATION_CACHE_DIR``)."""


def pytest_configure(config: pytest.Config) -> None:
    """One JAX compilation cache for the whole run, empty at its start (``JAX_CACHE``): the suite's
    processes (xdist's, the app servers', Dask workers, a live training's child) inherit it.

    ``polarize.sinks.train`` compiles its steps afresh at each call, and the suite trains the same
    small runs in several processes (a live run in a child then here, on a Dask worker then here, a
    sweep's cell then here): a second training of one run took 6.8 s, 0.55 s with the cache (load 4);
    the live runs' tests, in a child and on a Dask worker, 7.2 and 8.4 s, now 5.0 and 5.7 to 6.2 s.
    JAX reads an entry another process is still writing as a miss, with a warning, and compiles.
    """
    if hasattr(config, "workerinput") or "JAX_COMPILATION_CACHE_DIR" in os.environ:
        return  # an xdist process (its controller made the cache), or a cache chosen by whoever runs us
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="polarize-jax-")
    os.environ.update({"JAX_COMPILATION_CACHE_DIR": folder, **JAX_CACHE})
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser modules first, then the modules with slow tests, then the others, larger first: the
    order in which xdist hands them out (see the module's notes)."""
    def module(item: pytest.Item) -> str:
        return item.nodeid.split("::")[0]

    browser = {module(item) for item in items if item.get_closest_marker("browser")}
    slow = {module(item) for item in items if item.get_closest_marker("slow")}
    size = collections.Counter(module(item) for item in items)
    items.sort(key=lambda item: (module(item) not in browser, module(item) not in slow,
                                 -size[module(item)]))  # stable: a module's tests keep their order
