"""How fast the app feels in a real browser, and how much it sends (a script, not a test).

    python benchmarks/browser.py [--runs 5]
    python benchmarks/browser.py --quick    # one of each, the counts checked (the suite runs it)
    python benchmarks/browser.py --bare     # the same, for Streamlit alone with the Explorer's figure
    python benchmarks/browser.py --peers [--runs 5]   # the Explorer against Streamlit alone and Dash

Starts ``streamlit run server.py`` on a free port and drives the system Chromium (headless,
Playwright) through it, the server warm (each page opened once, unmeasured, first; not for
``--quick``). For the Explorer and two comparison pages (Normalizers, Loss) it measures, at 1280x720
(a projector's window, the one the server assumes until a page says otherwise), as the median of runs:

- first visit: from navigating (a new browser context: a new session) until the page's main
  figure is drawn for the last time (its last change on the page, read once the page is settled:
  Streamlit draws a new figure twice, the second time at its container's measured width);
- browser seen: the same in a new tab of a browser that has shown the page (a new session, the
  window's measure in its cookie, ``ui.viewport.COOKIE``, where it posted one);
- phone visit: a first visit in a phone's window, 390x844 (``PHONE``), counted as the others: the
  page's head has told the first run its window (``ui.window_cookie``), so it posts no measure and
  runs no fragment;
- changed control: from committing a new seed until the new figure is drawn (a new seed each
  time, so every run is simulated, never served from the cache);
- cached control: the same, going back to a seed already shown;

and, for each of those, the seconds until the page is settled as well (the script's run ended,
the viewport element has measured the page after it and has nothing to post), for a change where
its time went (``Parts``: from the click, when the script's run began and when the figure's message
reached the tab, as the page saw its websocket's frames arrive, and when the last ``Plotly.react``
began and how long it took; a "New random start" whose figure was held in the tab, ``ui.charts.hold``,
is drawn at the click, before the run), and, counted
from what the server sent on the page's websocket
(``tests/support/wire.py``): the full script runs and the fragment runs, the figures sent (whole,
or as a reference to one the browser holds already; a figure sent to be held for the next press,
``ui.charts.hold``, is told apart: it is none of the page's figures), the browser's
main-thread long tasks (``PerformanceObserver('longtask')``, summed) until the page is settled, and,
for a first visit, the browser's main-thread time (the tab's ``TaskDuration``, Chrome DevTools
Protocol's Performance metrics) and the server's CPU time (every process of its process group, from
``/proc``).

The counts do not depend on the machine's load: ``--quick`` prints them for the suite
(``tests/test_benchmarks.py``), which checks one full script run per first visit and per change,
and each figure sent once. Targets (issue 31, a quiet machine): a changed control on the Explorer
under 0.3 s, a first visit under 1.5 s, long tasks per change under 0.2 s, server CPU per first
visit under 0.15 CPU-s.

``--bare`` measures ``benchmarks/apps/bare.py`` instead (as "bare explorer"): a title, a Seed box and
the Explorer's default figure drawn by ``st.plotly_chart``, nothing else, the run in the server's
process. It is the floor Streamlit's own chart sets on this machine: a visit or a change of the app
cannot take less.

``--peers`` serves the Explorer's default figure three ways, each timed in the same run at 1280x720:
the app's Explorer, Streamlit alone (``--bare``'s app) and Dash (``benchmarks/apps/dash_app.py``:
``dcc.Graph``, which updates a figure in place with ``Plotly.react``, the figure built from
polarize's public API). For each: first visit, the same browser again, and "New random start" (a
button in all three) until the new figure is drawn, with the main-thread time and the server's CPU
per first visit; then the table and the ratios of the app to each peer, and the counts (one run,
or for Dash one callback, per visit and per change, each figure sent once). Dash is a benchmark-only
dependency: ``pip install 'polarize[bench]'``.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from support.browser import (  # noqa: E402
    ARTIFACTS,
    SETTLED_JS,
    AppServer,
    AppVanished,
    appless_js,
    free_port,
    launch_browser,
    unsettled,
    wait_until_settled,
)
from support.wire import frame_kind, listen, listen_dash  # noqa: E402

PAGES = {"explorer": "/", "normalizers": "/normalizers", "losses": "/losses"}
"""The pages measured: the Explorer and two comparison pages, each by its address."""
PHONE = (390, 844)
"""A phone's window, in which each page's first visit is counted once."""

# Before any page script: every long task of the page's main thread, the time of the last change
# inside the main figure (MAIN, its Plotly element: Plotly's drawing is changes of its nodes; Streamlit
# marking the figure's container stale during a run is not), the arrival of each binary frame on the
# page's websockets (Streamlit's messages, in the order ``Timeline`` reads them) and the start and end of
# each ``Plotly.react``, kept for a look from outside.
LONG_TASKS_JS = """
window.__longTasks = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.__longTasks.push([entry.startTime, entry.duration]);
}).observe({type: 'longtask', buffered: true});
window.__mainDrawn = null;
new MutationObserver((records) => {
  for (const record of records) {
    const node = record.target.nodeType === 1 ? record.target : record.target.parentElement;
    if (node && node.closest(MAIN)) {
      window.__mainDrawn = performance.now();
      return;
    }
  }
}).observe(document, {childList: true, subtree: true, attributes: true, characterData: true});
window.__frames = [];
const PageSocket = window.WebSocket;
window.WebSocket = class extends PageSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener('message', (e) => {
      if (typeof e.data !== 'string') window.__frames.push(performance.now());
    });
  }
};
window.__reacts = [];
let plotly = window.Plotly;
Object.defineProperty(window, 'Plotly', {configurable: true, get() { return plotly; }, set(value) {
  plotly = value;
  if (value && value.react && !value.__timed) {
    const react = value.react;
    value.__timed = true;
    value.react = function (...args) {
      const start = performance.now();
      const done = react.apply(this, args);
      Promise.resolve(done).then(() => window.__reacts.push([start, performance.now()]));
      return done;
    };
  }
}});
"""

# A short signature of the page's main figure (MAIN: its traces' lengths and last points), or null while
# it is not drawn or has no data yet (Dash draws an empty graph before its first callback answers):
# cheap, as it is polled while the browser draws.
MAIN_SIGNATURE_JS = """() => {
  const g = document.querySelector(MAIN);
  if (!g || !g._fullLayout || !g.querySelector('.main-svg') || !g.data || !g.data.length) return null;
  const last = (a) => (a && a.length ? a[a.length - 1] : null);
  return JSON.stringify(g.data.map((d) => [d.x ? d.x.length : 0, last(d.x), last(d.y)]));
}"""

# JavaScript: true once the Dash page has nothing pending: its title is not Dash's "Updating..."
# (``dash_app.UPDATING``, shown while a callback is out), no component is loading, and every figure
# is drawn.
DASH_SETTLED_JS = """() => {
  if (document.title === 'Updating...' || !document.querySelector('h1')) return false;
  if (document.querySelector('[data-dash-is-loading="true"]')) return false;
  for (const g of document.querySelectorAll('.js-plotly-plot')) {
    if (!g._fullLayout || !g.querySelector('.main-svg')) return false;
  }
  return true;
}"""


class DashServer:
    """``benchmarks/apps/dash_app.py`` on a free port, in a process group of its own (``server_cpu``
    reads it as ``AppServer``'s); use as a context manager: ``url``, ``process``."""

    def __init__(self, timeout: float = 60.0):
        self.port, self.timeout = free_port(), timeout
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = ARTIFACTS / f"dash-{self.port}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> DashServer:
        ARTIFACTS.mkdir(exist_ok=True)
        app = ROOT / "benchmarks" / "apps" / "dash_app.py"
        command = [sys.executable, str(app), "--port", str(self.port)]
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the Dash app exited with {self.process.returncode}; see {self.log}")
            try:
                with urllib.request.urlopen(self.url, timeout=2):
                    return self
            except OSError:
                time.sleep(0.2)
        self.__exit__()
        raise RuntimeError(f"the Dash app did not answer within {self.timeout} s; see {self.log}")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)


def _settle_dash(page: Any, timeout: float, reload_vanished: bool = True) -> None:
    """Wait until the Dash page is settled (``DASH_SETTLED_JS``) in three polls in a row (as
    ``wait_until_settled`` waits for a Streamlit page; a Dash page has no app to vanish and reload)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    poll = f"""() => {{ window.__settledPolls = ({DASH_SETTLED_JS})() ? (window.__settledPolls || 0) + 1 : 0;
                       return window.__settledPolls >= 3; }}"""
    try:
        page.wait_for_function(poll, timeout=timeout * 1000, polling=100)
    except PlaywrightTimeout as waited:
        raise AssertionError(f"{page.url}: the Dash page did not settle in {timeout:g} s") from waited


@dataclass(frozen=True)
class Target:
    """One way of serving a page the benchmark measures: how to start its server (a context manager
    with ``url`` and ``process``, its own process group), where its main figure is (a CSS selector of
    the Plotly element), what its figures are, when it has settled (JavaScript, as ``SETTLED_JS``, and a
    wait for it), when its app has vanished (JavaScript), and what counts what its server sent a tab."""

    name: str
    serve: Callable[[], Any]
    main: str = ".st-key-main_figure .js-plotly-plot"
    figures: str = '.polarize-chart, [data-testid="stPlotlyChart"]'  # the app's chart element, or bare's
    settled: str = SETTLED_JS
    settle: Callable[..., None] = wait_until_settled
    vanished: Callable[[], str] = appless_js
    listen: Callable[[Any], Any] = listen

    def observers(self) -> str:
        return LONG_TASKS_JS.replace("MAIN", json.dumps(self.main))

    def signature(self) -> str:
        return MAIN_SIGNATURE_JS.replace("MAIN", json.dumps(self.main))


APP = Target("polarize Explorer", AppServer)
BARE = Target("Streamlit alone", lambda: AppServer(script="benchmarks/apps/bare.py"))
DASH = Target("Dash", DashServer, main=".main-figure .js-plotly-plot", figures=".js-plotly-plot",
              settled=DASH_SETTLED_JS, settle=_settle_dash, vanished=lambda: "() => false",
              listen=listen_dash)
PEERS = {"app": APP, "bare": BARE, "dash": DASH}
"""The three ways ``--peers`` serves the Explorer's default figure, the app first."""
DASH_MISSING = "browser.py: --peers needs Dash, a benchmark-only dependency: pip install 'polarize[bench]'"


@dataclass
class Measure:
    """One visit or change: its seconds until the main figure's last draw and until the page settled,
    its counts (``Wire.counts`` since it began), the long tasks' seconds, the figures on the page
    once settled, the server's CPU seconds (first visits), the measures the page posted (and what moved
    from one to the next: ``moved``), the browser's main-thread seconds (a new browser's visits), and
    the figures sent to be held for a press (``Wire.held``: none of the page's figures) and their bytes."""

    seconds: float
    settled: float
    counts: tuple[int, int, int, int, int]
    long_tasks: float
    figures: int
    cpu: float | None = None
    posted: int = 0
    main_thread: float | None = None
    parts: Parts | None = None
    moved: str = ""
    held: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class Parts:
    """Where a change's time went, in seconds from the click (None: not seen): the script's run began
    (its ``new_session`` message reached the tab), the first figure's message reached the tab (a
    comparison's first draft, then the first figure of the whole view), the last ``Plotly.react``
    began, and how long it took. Dash's answer is not read: its first three are None."""

    run: float | None
    draft: float | None
    figure: float | None
    react: float | None
    react_seconds: float | None


class Timeline:
    """What each binary frame the server sent a tab was, in order (``run``, ``fragment``, ``draft``,
    ``figure``, ``finished``, or ``""``), to be matched with the times the page saw them arrive
    (``window.__frames``)."""

    def __init__(self) -> None:
        self.kinds: list[str] = []

    def frame(self, payload: Any) -> None:
        kind = frame_kind(payload)
        if kind is not None:
            self.kinds.append(kind)


_TIMELINES: weakref.WeakKeyDictionary[Any, Timeline] = weakref.WeakKeyDictionary()
"""Each Streamlit page's ``Timeline``, by its Playwright page (``first_visit`` starts it)."""


def _timed(page: Any) -> None:
    """Start ``page``'s ``Timeline`` (before it opens the app)."""
    timeline = _TIMELINES[page] = Timeline()
    page.on("websocket", lambda socket: socket.on("framereceived", timeline.frame))


def _parts(page: Any, since: tuple[int, int, int], now: float) -> Parts:
    """The ``Parts`` of a change that began at ``now`` (the page's clock), when the page had seen
    ``since`` = (frames, reacts, frames read by its ``Timeline``)."""
    frames = page.evaluate(f"() => window.__frames.slice({since[0]})")
    reacts = page.evaluate(f"() => window.__reacts.slice({since[1]})")
    timeline = _TIMELINES.get(page)
    kinds = timeline.kinds[since[2]:] if timeline is not None else []

    def first(kind: str) -> float | None:
        if len(kinds) != len(frames):  # a frame not matched (a reconnect): not told
            return None
        return next(((at - now) / 1000 for seen, at in zip(kinds, frames, strict=True) if seen == kind), None)

    react = reacts[-1] if reacts else None
    return Parts(first("run"), first("draft"), first("figure"), (react[0] - now) / 1000 if react else None,
                 (react[1] - react[0]) / 1000 if react else None)


def _seen(page: Any) -> tuple[int, int, int]:
    timeline = _TIMELINES.get(page)
    counts = page.evaluate("() => [window.__frames.length, window.__reacts.length]")
    return counts[0], counts[1], len(timeline.kinds) if timeline is not None else 0


def server_cpu(pgid: int) -> float:
    """CPU seconds (user and system) of every live process in process group ``pgid``."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after the name: state, ppid, pgrp, ..., utime (11), stime (12)
            total += int(fields[11]) + int(fields[12])
    return total / ticks


def main_thread(cdp: Any) -> float:
    """Seconds the tab's main thread has been busy with tasks (the Performance domain's ``TaskDuration``)."""
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return next(m["value"] for m in metrics if m["name"] == "TaskDuration")


def moved(measures: list[str]) -> str:
    """What changed from each measure a page posted (``Wire.measures``, JSON) to the next, in words
    (``top 400 -> 250``): a second measure fits and sends the figure again, and this says why."""
    posts = [json.loads(measure) for measure in measures]
    return "; ".join(", ".join(f"{name} {before.get(name)} -> {after.get(name)}"
                               for name in after if before.get(name) != after.get(name))
                     for before, after in itertools.pairwise(posts))


def _long_tasks_since(page: Any, since: float) -> float:
    return page.evaluate(f"() => window.__longTasks.filter(([s]) => s >= {since})"
                         ".reduce((a, [, d]) => a + d, 0) / 1000")


def _drawn(page: Any, target: Target, before: str | None, timeout: float) -> str:
    """Wait until the main figure is drawn, differs from ``before`` and the page is settled; its signature."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        ended = page.wait_for_function(f"""() => {{ if (({target.vanished()})()) return 'vanished';
                                                   const s = ({target.signature()})();
                                                   return s !== null && s !== {json.dumps(before)}
                                                     && ({target.settled})(); }}""",
                                       timeout=timeout * 1000, polling=50).json_value()
    except PlaywrightTimeout as waited:
        raise unsettled(page, timeout) from waited
    if ended == "vanished":
        raise unsettled(page, timeout, kind=AppVanished)
    return page.evaluate(target.signature())


def first_visit(browser: Any, url: str, server: Any, target: Target = APP, timeout: float = 120.0,
                context: Any = None, *, again: bool = True,
                viewport: tuple[int, int] = (1280, 720)) -> tuple[Measure, Any, Any]:
    """A new session opens ``url`` (in a new browser context, or a new tab of ``context``): the visit
    measured, and the page and its wire kept for changes."""
    own = context is None
    if own:
        context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
        context.add_init_script(target.observers())
    page = context.new_page()
    wire = target.listen(page)
    if target.listen is listen:  # a Streamlit page: its frames' kinds read for ``Parts``
        _timed(page)
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    busy = main_thread(cdp)
    cpu = server_cpu(server.process.pid)
    start = time.perf_counter()
    page.goto(url)
    try:
        _drawn(page, target, None, timeout)
    except AppVanished as vanished:
        if not again:
            raise
        # Not a visit to measure: another, in a new tab or browser as this one was (AppVanished).
        print(f"browser.py: visited again, the app vanished: {vanished}", file=sys.stderr)
        (context if own else page).close()
        return first_visit(browser, url, server, target, timeout, None if own else context, again=False,
                           viewport=viewport)
    target.settle(page, timeout, reload_vanished=False)
    settled = time.perf_counter() - start
    # The page's clock starts at the navigation (``performance.timeOrigin``).
    drawn = page.evaluate("() => window.__mainDrawn") / 1000
    # A tab of a browser that shows the site already may share its renderer's one main thread (and
    # its count) with the other tab: the main thread is told for a new browser's visit only.
    measure = Measure(drawn, settled, wire.counts(), _long_tasks_since(page, 0),
                      page.locator(target.figures).count(), server_cpu(server.process.pid) - cpu,
                      len(wire.measures), main_thread(cdp) - busy if own else None,
                      moved=moved(wire.measures), held=(wire.held, wire.held_bytes))
    return measure, page, wire


def change(page: Any, wire: Any, commit: Callable[[], None], target: Target = APP,
           timeout: float = 60.0) -> Measure:
    """``commit()`` a change (its input already made): measured until the new figure is drawn."""
    before = page.evaluate(target.signature())
    counts, posted, seen, held = wire.counts(), len(wire.measures), _seen(page), (wire.held, wire.held_bytes)
    ended = wire.ended
    now = page.evaluate("() => performance.now()")
    start = time.perf_counter()
    commit()
    _drawn(page, target, before, timeout)
    _run_ended(page, wire, counts, ended, timeout)
    target.settle(page, timeout=timeout)
    settled = time.perf_counter() - start
    drawn = (page.evaluate("() => window.__mainDrawn") - now) / 1000
    since = tuple(a - b for a, b in zip(wire.counts(), counts, strict=True))
    return Measure(drawn, settled, since, _long_tasks_since(page, now), page.locator(target.figures).count(),
                   posted=len(wire.measures) - posted, moved=moved(wire.measures[max(0, posted - 1):]),
                   parts=_parts(page, seen, now), held=(wire.held - held[0], wire.held_bytes - held[1]))


def _run_ended(page: Any, wire: Any, counts: tuple[int, ...], ended: int, timeout: float) -> None:
    """Wait until the wire has seen a run (or a callback) begin since ``counts`` and end since ``ended``
    (``Wire.ended``): a figure drawn at the click (held for the press, ``ui.charts.hold``) is drawn before
    the press's run begins, and the page looks settled until it does, and for a moment after (a run's
    state reaches the page after its first frame): measured then, the figure the run sends was missed
    (once in 11 presses: "0 + 0 figure(s) sent of 1")."""
    deadline = time.perf_counter() + timeout
    while sum(wire.counts()[:2]) <= sum(counts[:2]) or wire.ended <= ended:
        if time.perf_counter() > deadline:
            raise AssertionError(f"{page.url}: no run began and ended within {timeout:g} s of the change")
        page.wait_for_timeout(20)  # the wire counts as Playwright reads the socket's frames, in its waits


def change_seed(page: Any, wire: Any, seed: int, target: Target = APP, timeout: float = 60.0) -> Measure:
    """Commit ``seed`` in the Seed box: the change measured until the new figure is drawn."""
    box = page.get_by_role("spinbutton", name="Seed")
    box.fill(str(seed))
    return change(page, wire, lambda: box.press("Enter"), target, timeout)


def new_random_start(page: Any, wire: Any, target: Target = APP, timeout: float = 60.0) -> Measure:
    """Press "New random start": measured until the new start's figure is drawn."""
    button = page.get_by_role("button", name="New random start")
    return change(page, wire, button.click, target, timeout)


def first_visits(browser: Any, url: str, server: Any, runs: int, target: Target = APP,
                 **visit: Any) -> tuple[list[Measure], Any, Any]:
    """``runs`` first visits of ``url``, each in a new browser context; their measures, and the last
    one's page and wire, kept for what is measured next (a visit more, only to keep, took 4 s a page)."""
    measure, page, wire = first_visit(browser, url, server, target, **visit)
    visits = [measure]
    for _ in range(runs - 1):
        page.context.close()
        measure, page, wire = first_visit(browser, url, server, target, **visit)
        visits.append(measure)
    return visits, page, wire


def measure_page(browser: Any, server: Any, path: str, runs: int, *,
                 timeout: float = 120.0) -> dict[str, list[Measure]]:
    """First visits (within ``timeout`` seconds each: a cold server's first is longer), visits of the
    same browser, a phone's first visit, changed and cached controls on one page."""
    url = server.url + path
    visits, page, wire = first_visits(browser, url, server, runs, timeout=timeout)
    # The same browser again, a new session (a new tab): it has measured this page before.
    again = []
    for _ in range(runs):
        measured, tab, _ = first_visit(browser, url, server, context=page.context)
        again.append(measured)
        tab.close()
    phone, tab, _ = first_visit(browser, url, server, viewport=PHONE)
    tab.context.close()
    shown = [int(page.get_by_role("spinbutton", name="Seed").input_value())]
    changes, cached = [], []
    for i in range(runs):
        shown.append(1000 + i)
        changes.append(change_seed(page, wire, shown[-1]))
    for i in range(runs):
        # Back and forth between the last two seeds shown: each is cached, each differs from now.
        cached.append(change_seed(page, wire, shown[-2 + i % 2]))
    page.context.close()
    return {"first visit": visits, "browser seen": again, "phone visit": [phone],
            "changed control": changes, "cached control": cached}


PEER_KINDS = {"first visit": "first visit", "browser seen": "same browser again",
              "new random start": '"New random start" -> new figure'}
"""What ``--peers`` measures of each, and its column in the table."""


def measure_peer(browser: Any, target: Target, runs: int, *, warm: bool = True) -> dict[str, list[Measure]]:
    """First visits, the same browser again and new random starts of ``target``'s page, at 1280x720,
    its server warm (one visit first, unmeasured) unless ``warm`` is false (``--quick``: counts only)."""
    view = (1280, 720)
    with target.serve() as server:
        if warm:
            _, page, _ = first_visit(browser, server.url, server, target, timeout=300, viewport=view)
            page.context.close()
        visits, page, wire = first_visits(browser, server.url, server, runs, target, viewport=view,
                                          timeout=120 if warm else 300)
        again = []
        for _ in range(runs):
            measured, tab, _ = first_visit(browser, server.url, server, target, context=page.context)
            again.append(measured)
            tab.close()
        starts = [new_random_start(page, wire, target) for _ in range(runs)]
        page.context.close()
    return {"first visit": visits, "browser seen": again, "new random start": starts}


def _median(values: list[float]) -> float:
    return statistics.median(values)


def report(name: str, kind: str, measures: list[Measure]) -> None:
    full, fragments, sent, referenced, size = (max(m.counts[i] for m in measures) for i in range(5))
    figures = max(m.figures for m in measures)
    cpu = [m.cpu for m in measures if m.cpu is not None]
    busy = [m.main_thread for m in measures if m.main_thread is not None]
    print(f"{name:<13} {kind:<16} {_median([m.seconds for m in measures]):6.2f} s  "
          f"(settled {_median([m.settled for m in measures]):5.2f} s)  "
          f"long tasks {_median([m.long_tasks for m in measures]):5.2f} s  "
          + (f"main thread {_median(busy):5.2f} s  " if busy else "")
          + f"runs {full} + {fragments} fragment  figures sent {sent} of {figures} "
          f"(+{referenced} by reference, {size / 1e3:.0f} kB)" + _told_held(measures)
          + (f"  server {_median(cpu):.2f} CPU-s" if cpu else "") + _told_parts(measures)
          + "".join(f"  measures moved: {m.moved}" for m in measures if m.moved), flush=True)


def _told_held(measures: list[Measure]) -> str:
    """The figures sent to be held for a press (the most of any measure), or nothing if none was."""
    held, size = (max(m.held[i] for m in measures) for i in range(2))
    return f"  held for the next press {held} ({size / 1e3:.0f} kB)" if held else ""


def _told_parts(measures: list[Measure]) -> str:
    """Where a change's time went (``Parts``, medians of those seen), or nothing for a visit; a figure
    drawn at the click (its ``Plotly.react`` began before the run: a figure held for the press,
    ``ui.charts.hold``) is said first."""
    parts = [m.parts for m in measures if m.parts is not None]

    def median(name: str) -> str:
        seen = [getattr(p, name) for p in parts if getattr(p, name) is not None]
        return f"{_median(seen):.2f} s" if seen else "-"

    if not parts:
        return ""
    drafts = f"first draft's {median('draft')}, " if any(p.draft is not None for p in parts) else ""
    held = sum(p.react is not None and p.run is not None and p.react < p.run for p in parts)
    react = f"Plotly.react {median('react')} taking {median('react_seconds')}"
    if held:
        return (f"  from the click: drawn at the click ({held} of {len(parts)}, the figure held): {react}; "
                f"run {median('run')}, {drafts}figure's message {median('figure')}")
    return f"  from the click: run {median('run')}, {drafts}figure's message {median('figure')}, {react}"


def count_failures(name: str, kind: str, measures: list[Measure]) -> list[str]:
    """Visits and changes that ran more than once or sent a figure more than once (none expected)."""
    failures = []
    for m in measures:
        full, fragments, sent, referenced, _ = m.counts
        # A window the server did not assume (not 1280 px wide) posts its measure: one fragment
        # run, no more, but for a page whose layout moved after (seen at load): one a measure; the
        # run sends each figure again (by reference where it did not change). The window measured
        # here is the assumed one: a visit posts nothing. A browser seen before, or a phone's first
        # visit (its window told by the page's head): no fragment run, no measure.
        most = 0 if kind == "phone visit" else max(0 if kind == "browser seen" else 1, m.posted)
        drawn_once = m.figures <= sent + referenced <= m.figures * (1 + fragments)
        if full != 1 or fragments > most or not drawn_once:
            failures.append(f"{name} {kind}: {full} full run(s) + {fragments} fragment, "
                            f"{sent} + {referenced} figure(s) sent of {m.figures}"
                            + (f" (measures moved: {m.moved})" if m.moved else ""))
    return failures


def peers_table(measured: dict[str, dict[str, list[Measure]]], runs: int) -> None:
    """The three-way table (medians), main-thread time and server CPU per first visit, and the ratios
    of the app to each peer."""
    def column(target: str, kind: str, what: str = "seconds") -> float:
        return _median([getattr(m, what) for m in measured[target][kind]])

    columns = [*PEER_KINDS.values(), "main thread (first visit)", "server CPU-s (first visit)"]
    print(f"\npeers: the Explorer's default figure, Chromium 1280x720, median of {runs}")
    print(f"{'':<18}" + "".join(f"{c:>34}" for c in columns))
    rows = {}
    for key, target in PEERS.items():
        rows[key] = [*(column(key, kind) for kind in PEER_KINDS),
                     column(key, "first visit", "main_thread"), column(key, "first visit", "cpu")]
        print(f"{target.name:<18}" + "".join(f"{v:>32.2f} s" for v in rows[key]))
    for key in ("bare", "dash"):
        ratios = ", ".join(f"{c} {a / max(p, 1e-9):.2f}x" for c, a, p in zip(columns, rows["app"], rows[key],
                                                                                strict=True))
        print(f"app / {PEERS[key].name}: {ratios}")


def peers(browser: Any, runs: int, *, warm: bool = True) -> list[str]:
    """``--peers``: each of the three measured in turn, reported, tabled; the counts' failures."""
    measured, failures = {}, []
    for key, target in PEERS.items():
        measured[key] = measure_peer(browser, target, runs, warm=warm)
        for kind, measures in measured[key].items():
            report(key, kind, measures)
            failures += count_failures(key, kind, measures)
    peers_table(measured, runs)
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (median reported)")
    parser.add_argument("--quick", action="store_true",
                        help="one run of each, the counts checked (for the tests)")
    parser.add_argument("--bare", action="store_true",
                        help="measure Streamlit alone with the Explorer's figure (benchmarks/apps/bare.py)")
    parser.add_argument("--peers", action="store_true",
                        help="the Explorer against Streamlit alone and Dash (benchmarks/apps/dash_app.py)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs must be 1 or more, not {args.runs}")
    if args.quick:
        args.runs = 1
    if args.peers and importlib.util.find_spec("dash") is None:
        print(DASH_MISSING, file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    failures = []
    with sync_playwright() as playwright:
        browser = launch_browser(playwright)
        if args.peers:
            print(f"median of {args.runs}; runs: script runs (Dash: callbacks) + fragment runs; "
                  "counts: the most of any run")
            failures = peers(browser, args.runs, warm=not args.quick)
        else:
            failures = pages(browser, args)
        browser.close()
    print("counts: one full script run and each figure sent once, per visit and per change: "
          + ("met" if not failures else "NOT met: " + "; ".join(dict.fromkeys(failures))))
    return 0


def pages(browser: Any, args: argparse.Namespace) -> list[str]:
    """The app's pages (or ``--bare``'s), each visited and changed: reported; the counts' failures."""
    pages = {"bare explorer": "/"} if args.bare else PAGES
    failures = []
    with (BARE if args.bare else APP).serve() as server:
        # Warm: the server's imports, its workers, each page's first run and the browser's cache. Not for
        # --quick, whose timings are not read: its counts are a cold server's as a warm one's.
        start = time.perf_counter()
        for path in pages.values() if not args.quick else ():
            _, page, _ = first_visit(browser, server.url + path, server, timeout=300)
            page.context.close()
        print("warming the server (each page once): "
              + (f"{time.perf_counter() - start:.2f} s" if not args.quick else "not for --quick"), flush=True)
        print(f"median of {args.runs}; runs: full script runs + fragment runs; counts: the most of any run")
        for name, path in pages.items():
            for kind, measures in measure_page(browser, server, path, args.runs,
                                               timeout=300 if args.quick else 120).items():
                report(name, kind, measures)
                failures += count_failures(name, kind, measures)
    return failures


if __name__ == "__main__":
    sys.exit(main())
