"""How fast the Explorer feels in a real browser (a script, not a test).

    python benchmarks/browser.py [--runs 5]
    python benchmarks/browser.py --quick    # one run of the default settings: checks that it runs

Starts ``streamlit run app.py`` on a free port and drives the system Chromium
(headless, Playwright) through it. For the default settings and for n = 64 it
measures, as the median of several runs:

- page load: from navigating to the page until the dashboard is drawn (a fresh
  session each time, the browser's cache warm after a first, unmeasured load);
- changed control: from committing a new seed until the new dashboard is drawn
  (a new seed each time, so every run is simulated, never served from the cache);
- cached control: the same, going back to a seed already shown;

and the dashboard's payload (the figure JSON Streamlit sends). Targets: a changed
control under 1 s at the default settings, a payload under 2 MB.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import plotly.io as pio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from support.browser import AppServer, launch_browser, wait_for_figure  # noqa: E402

from polarize.web.links import read_link  # noqa: E402
from polarize.web.pages import explorer  # noqa: E402

SCENARIOS = {"default (n = 8)": "", "n = 64": "n=64&d=64"}


def page_load(page, url: str, timeout: float = 30.0) -> float:
    start = time.perf_counter()
    page.goto(url)
    wait_for_figure(page, timeout=timeout)
    return time.perf_counter() - start


def change_seed(page, seed: int, before: str) -> tuple[float, str]:
    box = page.get_by_role("spinbutton", name="Seed")
    box.fill(str(seed))
    start = time.perf_counter()
    box.press("Enter")
    after = wait_for_figure(page, different_from=before)
    return time.perf_counter() - start, after


def payload_bytes(query: str) -> int:
    values = dict(pair.split("=") for pair in query.split("&") if pair)
    state, _ = read_link(explorer.EXPLORER, values)
    view = explorer.explore(explorer.build_experiment(state))
    # The panels hand Streamlit plain figure dicts; to_json also takes a go.Figure.
    return len(pio.to_json(view.plots()[0].figure, validate=False).encode())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (median reported)")
    parser.add_argument("--quick", action="store_true",
                        help="one run of the default settings only (seconds; for the tests)")
    args = parser.parse_args()
    scenarios = dict(list(SCENARIOS.items())[:1]) if args.quick else SCENARIOS
    if args.quick:
        args.runs = 1
    from playwright.sync_api import sync_playwright

    rows = []
    with AppServer() as server, sync_playwright() as playwright:
        browser = launch_browser(playwright)
        context = browser.new_context(viewport={"width": 1920, "height": 1080})
        page = context.new_page()
        # Cold: the server's imports, its workers and the browser's cache (slow on a busy machine).
        first = page_load(page, server.url + "/", timeout=180)
        print(f"first load of a fresh server: {first:.2f} s", flush=True)
        for name, query in scenarios.items():
            url = f"{server.url}/?{query}"
            loads = [page_load(page, url) for _ in range(args.runs)]
            signature = wait_for_figure(page)
            shown = [int(page.get_by_role("spinbutton", name="Seed").input_value())]
            changes, cached = [], []
            for i in range(args.runs):
                shown.append(1000 + i)
                elapsed, signature = change_seed(page, shown[-1], signature)
                changes.append(elapsed)
            for i in range(args.runs):
                # Back and forth between the last two seeds shown: each is cached, each differs from now.
                elapsed, signature = change_seed(page, shown[-2 + i % 2], signature)
                cached.append(elapsed)
            rows.append((name, loads, changes, cached, payload_bytes(query)))
            print(f"measured {name}", flush=True)
        browser.close()

    def cell(values: list[float]) -> str:
        return f"{statistics.median(values):6.2f} s  ({min(values):.2f}-{max(values):.2f})"

    print()
    print(f"{'settings':<18} {'page load -> figure':<24} {'changed control -> figure':<26} "
          f"{'cached control -> figure':<26} {'payload':>9}")
    for name, loads, changes, cached, size in rows:
        print(f"{name:<18} {cell(loads):<24} {cell(changes):<26} {cell(cached):<26} {size / 1e6:7.2f} MB")
    print(f"\nmedian of {args.runs} runs each (min-max in brackets); changed control = a new seed, "
          "simulated; cached = a seed already shown")
    default_change = statistics.median(rows[0][2])
    worst_payload = max(r[4] for r in rows)
    ok = default_change < 1.0 and worst_payload < 2e6
    print(f"targets: changed control < 1 s at default ({default_change:.2f} s), payload < 2 MB "
          f"({worst_payload / 1e6:.2f} MB): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
