"""The hosted layout under a class's load: 1 and 2 app replicas behind nginx, runs on Dask (a script).

    python benchmarks/replicas.py [--sessions 200] [--replicas 1,2] [--browsers 5] [--workers 1]
    python benchmarks/replicas.py --quick    # 2 replicas only, 4 sessions, 1 browser: checks that it runs

For each replica count, starts ``deploy/``'s layout as processes (``tests/support/proxy.Layout``: a
``dask scheduler`` and workers, the replicas, nginx from the shipped template), then:

- opens N sessions at once through the proxy (websocket clients, ``tests/support/stream_client``, each
  from a loopback address of its own as a hall's students: the proxy limits each address), each a
  different Explorer link, so every one is a fresh run on the cluster: sessions served, the median
  and last time to figure, and the replicas' CPU-seconds per session (the runs are on the workers);
- opens K first visits in real Chromium through the proxy, one after another: the replicas'
  CPU-seconds per visit, with Streamlit's static files from the proxy (the issue's target: under 0.15).

The replicas' CPU is read from ``/proc`` (each replica's process tree), so this runs on one machine;
on this 2-core machine replicas, workers and the clients share the cores, so two replicas show how
the work divides, not a doubling.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from load import cpu_seconds, served  # noqa: E402
from support.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from support.proxy import Layout  # noqa: E402
from support.stream_client import open_page, student_address  # noqa: E402


def _cpu(layout: Layout) -> float:
    return sum(sum(cpu_seconds(server.process.pid)) for server in layout.replicas.values())


async def _burst(url: str, links: list[str], timeout: float):
    # Each from an address of its own, as a hall's students: the proxy limits connections per address.
    return await asyncio.gather(*(open_page(url, link, timeout, source=student_address(i))
                                  for i, link in enumerate(links)))


def sessions(layout: Layout, count: int, timeout: float) -> str:
    """``count`` fresh Explorer links at once through the proxy: served, times, replicas' CPU per session."""
    before = _cpu(layout)
    loads = asyncio.run(_burst(layout.proxy.url, [f"/?seed={2000 + i}" for i in range(count)], timeout))
    cpu = _cpu(layout) - before
    ok = served(loads)
    firsts = sorted(load.first_figure for load in ok) or [float("nan")]
    return (f"{len(ok)}/{count} served, figure median {statistics.median(firsts):.2f} s, "
            f"last {firsts[-1]:.2f} s, replicas {cpu / count:.3f} CPU-s a session")


def browsers(layout: Layout, count: int) -> str:
    """``count`` first visits in real Chromium through the proxy, one after another: replicas' CPU each."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        spent = []
        for i in range(count):
            before = _cpu(layout)
            context = chromium.new_context(viewport={"width": 1280, "height": 720})
            page = context.new_page()
            page.goto(f"{layout.proxy.url}/?seed={3000 + i}")
            page.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
            time.sleep(1.0)  # the page's last messages (the window measured) reach the replica
            spent.append(_cpu(layout) - before)
            context.close()
        chromium.close()
    static = [r for r in layout.proxy.access() if r.path.startswith("/static/")]
    from_proxy = sum(r.upstream == "-" for r in static)
    return (f"{count} browser first visits: replicas {statistics.median(spent):.3f} CPU-s a visit (median); "
            f"static files {from_proxy}/{len(static)} from the proxy")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--replicas", default="1,2", help="replica counts to compare, comma-separated")
    parser.add_argument("--browsers", type=int, default=5, help="real-browser first visits per layout")
    parser.add_argument("--workers", type=int, default=1, help="Dask workers (one thread each)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a session may wait")
    parser.add_argument("--quick", action="store_true", help="2 replicas only, 4 sessions, 1 browser")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.browsers, args.replicas = 4, 1, "2"
    for count in (int(c) for c in args.replicas.split(",")):
        with tempfile.TemporaryDirectory() as folder, \
                Layout(Path(folder), replicas=count, workers=args.workers,
                       env={"POLARIZE_APP_TIMEOUT": str(args.timeout)}) as layout:
            for replica in layout.replicas:  # each warm (its imports, its first run), straight to it
                asyncio.run(_burst(f"http://{replica}", ["/?seed=1"], args.timeout))
            burst = sessions(layout, args.sessions, args.timeout)
            print(f"{count} replica(s), {args.workers} worker(s): {burst}")
            if args.browsers:
                print(f"{count} replica(s): {browsers(layout, args.browsers)}")


if __name__ == "__main__":
    main()
