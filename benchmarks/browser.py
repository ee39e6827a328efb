"""How fast the app feels in a real browser, and how much it sends (a script, not a test).

    python benchmarks/browser.py [--runs 5]
    python benchmarks/browser.py --quick    # one of each, the counts checked (the suite runs it)
    python benchmarks/browser.py --bare     # the same, for Streamlit alone with the Explorer's figure

Starts ``streamlit run app.py`` on a free port and drives the system Chromium (headless,
Playwright) through it, the server warm (each page opened once, unmeasured, first). For the
Explorer and two comparison pages (Normalizers, Loss) it measures, as the median of runs:

- first visit: from navigating (a new browser context: a new session) until the page's main
  figure is drawn for the last time (its last change on the page, read once the page is settled:
  Streamlit draws a new figure twice, the second time at its container's measured width);
- browser seen: the same in a new tab of a browser that has shown the page (a new session, the
  window's measure in its cookie: ``ui.viewport.COOKIE``);
- changed control: from committing a new seed until the new figure is drawn (a new seed each
  time, so every run is simulated, never served from the cache);
- cached control: the same, going back to a seed already shown;

and, for each of those, the seconds until the page is settled as well (the script's run ended,
the viewport component has measured the page after it and has nothing to post), and, counted
from what the server sent on the page's websocket
(``tests/support/wire.py``): the full script runs and the fragment runs, the figures sent (whole,
or as a reference to one the browser holds already), the browser's
main-thread long tasks (``PerformanceObserver('longtask')``, summed) until the page is settled, and,
for a first visit, the server's CPU time (every process of its process group, from ``/proc``).

The counts do not depend on the machine's load: ``--quick`` prints them for the suite
(``tests/test_benchmarks.py``), which checks one full script run per first visit and per change,
and each figure sent once. Targets (issue 31, a quiet machine): a changed control on the Explorer
under 0.3 s, a first visit under 1.5 s, long tasks per change under 0.2 s, server CPU per first
visit under 0.15 CPU-s.

``--bare`` measures ``benchmarks/apps/bare.py`` instead (as "bare explorer"): a title, a Seed box and
the Explorer's default figure drawn by ``st.plotly_chart``, nothing else, the run in the server's
process. It is the floor Streamlit's own chart sets on this machine: a visit or a change of the app
cannot take less.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from support.browser import (  # noqa: E402
    SETTLED_JS,
    AppServer,
    AppVanished,
    appless_js,
    launch_browser,
    unsettled,
    wait_until_settled,
)
from support.wire import Wire, listen  # noqa: E402

PAGES = {"explorer": "/", "normalizers": "/normalizers", "losses": "/losses"}
"""The pages measured: the Explorer and two comparison pages, each by its address."""

# Before any page script: every long task of the page's main thread, and the time of the last change
# inside the main figure (Plotly's drawing is changes of its nodes; Streamlit marking the figure's
# container stale during a run is not), kept for a look from outside.
LONG_TASKS_JS = """
window.__longTasks = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.__longTasks.push([entry.startTime, entry.duration]);
}).observe({type: 'longtask', buffered: true});
window.__mainDrawn = null;
new MutationObserver((records) => {
  for (const record of records) {
    const node = record.target.nodeType === 1 ? record.target : record.target.parentElement;
    if (node && node.closest('.st-key-main_figure .js-plotly-plot')) {
      window.__mainDrawn = performance.now();
      return;
    }
  }
}).observe(document, {childList: true, subtree: true, attributes: true, characterData: true});
"""

# A short signature of the page's main figure (its traces' lengths and last points), or null while
# it is not drawn: cheap, as it is polled while the browser draws.
MAIN_SIGNATURE_JS = """() => {
  const g = document.querySelector('.st-key-main_figure .js-plotly-plot');
  if (!g || !g._fullLayout || !g.querySelector('.main-svg')) return null;
  const last = (a) => (a && a.length ? a[a.length - 1] : null);
  return JSON.stringify(g.data.map((d) => [d.x ? d.x.length : 0, last(d.x), last(d.y)]));
}"""


@dataclass
class Measure:
    """One visit or change: its seconds until the main figure's last draw and until the page settled,
    its counts (``Wire.counts`` since it began), the long tasks' seconds, the figures on the page
    once settled, the server's CPU seconds (first visits), and the measures the page posted."""

    seconds: float
    settled: float
    counts: tuple[int, int, int, int, int]
    long_tasks: float
    figures: int
    cpu: float | None = None
    posted: int = 0


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


def _long_tasks_since(page: Any, since: float) -> float:
    return page.evaluate(f"() => window.__longTasks.filter(([s]) => s >= {since})"
                         ".reduce((a, [, d]) => a + d, 0) / 1000")


def _figures(page: Any) -> int:
    return page.locator('.polarize-chart, [data-testid="stPlotlyChart"]').count()  # the app's, or bare's


def _drawn(page: Any, before: str | None, timeout: float) -> str:
    """Wait until the main figure is drawn, differs from ``before`` and the page is settled; its signature."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        ended = page.wait_for_function(f"""() => {{ if (({appless_js()})()) return 'vanished';
                                                   const s = ({MAIN_SIGNATURE_JS})();
                                                   return s !== null && s !== {json.dumps(before)}
                                                     && ({SETTLED_JS})(); }}""",
                                       timeout=timeout * 1000, polling=50).json_value()
    except PlaywrightTimeout as waited:
        raise unsettled(page, timeout) from waited
    if ended == "vanished":
        raise unsettled(page, timeout, kind=AppVanished)
    return page.evaluate(MAIN_SIGNATURE_JS)


def first_visit(browser: Any, url: str, server: AppServer, timeout: float = 120.0,
                context: Any = None, *, again: bool = True) -> tuple[Measure, Any, Wire]:
    """A new session opens ``url`` (in a new browser context, or a new tab of ``context``): the visit
    measured, and the page and its wire kept for changes."""
    own = context is None
    if own:
        context = browser.new_context(viewport={"width": 1920, "height": 1080})
        context.add_init_script(LONG_TASKS_JS)
    page = context.new_page()
    wire = listen(page)
    cpu = server_cpu(server.process.pid)
    start = time.perf_counter()
    page.goto(url)
    try:
        _drawn(page, None, timeout)
    except AppVanished as vanished:
        if not again:
            raise
        # Not a visit to measure: another, in a new tab or browser as this one was (AppVanished).
        print(f"browser.py: visited again, the app vanished: {vanished}", file=sys.stderr)
        (context if own else page).close()
        return first_visit(browser, url, server, timeout, None if own else context, again=False)
    wait_until_settled(page, timeout=timeout, reload_vanished=False)
    settled = time.perf_counter() - start
    # The page's clock starts at the navigation (``performance.timeOrigin``).
    drawn = page.evaluate("() => window.__mainDrawn") / 1000
    measure = Measure(drawn, settled, wire.counts(), _long_tasks_since(page, 0), _figures(page),
                      server_cpu(server.process.pid) - cpu, len(wire.measures))
    return measure, page, wire


def change_seed(page: Any, wire: Wire, seed: int, timeout: float = 60.0) -> Measure:
    """Commit ``seed`` in the sidebar's Seed box: the change measured until the new figure is drawn."""
    before = page.evaluate(MAIN_SIGNATURE_JS)
    box = page.get_by_role("spinbutton", name="Seed")
    box.fill(str(seed))
    counts, posted = wire.counts(), len(wire.measures)
    now = page.evaluate("() => performance.now()")
    start = time.perf_counter()
    box.press("Enter")
    _drawn(page, before, timeout)
    wait_until_settled(page, timeout=timeout)
    settled = time.perf_counter() - start
    drawn = (page.evaluate("() => window.__mainDrawn") - now) / 1000
    since = tuple(a - b for a, b in zip(wire.counts(), counts, strict=True))
    return Measure(drawn, settled, since, _long_tasks_since(page, now), _figures(page),
                   posted=len(wire.measures) - posted)


def measure_page(browser: Any, server: AppServer, path: str, runs: int) -> dict[str, list[Measure]]:
    """First visits, changed and cached controls on one page."""
    url = server.url + path
    visits = []
    for _ in range(runs):
        measure, page, wire = first_visit(browser, url, server)
        visits.append(measure)
        page.context.close()
    measure, page, wire = first_visit(browser, url, server)
    # The same browser again, a new session (a new tab): it has measured this page before.
    again = []
    for _ in range(runs):
        measured, tab, _ = first_visit(browser, url, server, context=page.context)
        again.append(measured)
        tab.close()
    shown = [int(page.get_by_role("spinbutton", name="Seed").input_value())]
    changes, cached = [], []
    for i in range(runs):
        shown.append(1000 + i)
        changes.append(change_seed(page, wire, shown[-1]))
    for i in range(runs):
        # Back and forth between the last two seeds shown: each is cached, each differs from now.
        cached.append(change_seed(page, wire, shown[-2 + i % 2]))
    page.context.close()
    return {"first visit": visits, "browser seen": again, "changed control": changes,
            "cached control": cached}


def report(name: str, kind: str, measures: list[Measure]) -> None:
    def median(values: list[float]) -> float:
        return statistics.median(values)

    full, fragments, sent, referenced, size = (max(m.counts[i] for m in measures) for i in range(5))
    figures = max(m.figures for m in measures)
    cpu = [m.cpu for m in measures if m.cpu is not None]
    print(f"{name:<13} {kind:<16} {median([m.seconds for m in measures]):6.2f} s  "
          f"(settled {median([m.settled for m in measures]):5.2f} s)  "
          f"long tasks {median([m.long_tasks for m in measures]):5.2f} s  "
          f"runs {full} + {fragments} fragment  figures sent {sent} of {figures} "
          f"(+{referenced} by reference, {size / 1e3:.0f} kB)"
          + (f"  server {median(cpu):.2f} CPU-s" if cpu else ""), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (median reported)")
    parser.add_argument("--quick", action="store_true",
                        help="one run of each, the counts checked (for the tests)")
    parser.add_argument("--bare", action="store_true",
                        help="measure Streamlit alone with the Explorer's figure (benchmarks/apps/bare.py)")
    args = parser.parse_args()
    if args.quick:
        args.runs = 1
    from playwright.sync_api import sync_playwright

    pages = {"bare explorer": "/"} if args.bare else PAGES
    failures = []
    with AppServer(script="benchmarks/apps/bare.py" if args.bare else "app.py") as server, \
            sync_playwright() as playwright:
        browser = launch_browser(playwright)
        # Warm: the server's imports, its workers, each page's first run and the browser's cache.
        start = time.perf_counter()
        for path in pages.values():
            _, page, _ = first_visit(browser, server.url + path, server, timeout=300)
            page.context.close()
        print(f"warming the server (each page once): {time.perf_counter() - start:.2f} s", flush=True)
        print(f"median of {args.runs}; runs: full script runs + fragment runs; counts: the most of any run")
        for name, path in pages.items():
            for kind, measures in measure_page(browser, server, path, args.runs).items():
                report(name, kind, measures)
                for m in measures:
                    full, fragments, sent, referenced, _ = m.counts
                    # A figure held for its place to be measured costs one fragment run, no more,
                    # but for a page that measured a new place after (seen at load): one a measure.
                    # A browser seen before has the measure at once (its cookie): no fragment run.
                    most = max(0 if kind == "browser seen" else 1, m.posted)
                    drawn_once = m.figures <= sent + referenced <= m.figures * max(1, fragments)
                    if full != 1 or fragments > most or not drawn_once:
                        failures.append(f"{name} {kind}: {full} full run(s) + {fragments} fragment, "
                                        f"{sent} + {referenced} figure(s) sent of {m.figures}")
        browser.close()
    print("counts: one full script run and each figure sent once, per visit and per change: "
          + ("met" if not failures else "NOT met: " + "; ".join(dict.fromkeys(failures))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
