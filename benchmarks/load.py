"""A class opening the app at once: N concurrent sessions against a real server (a script, not a test).

    python benchmarks/load.py [--sessions 30] [--sequential 0]
    python benchmarks/load.py --quick    # 3 sessions, 2 in a row after: checks that it runs
    python benchmarks/load.py --url http://host:8080 --sessions 200   # a deployment already running

Starts ``streamlit run server.py`` on a free port (``tests/support/browser.AppServer``), opens one
warm-up session, then N sessions at the same moment, each a different Explorer link (its own
seed, so every one is a fresh run, none served from the cache; ``--same``: one link for all,
computed once and shared). The sessions speak the app's
websocket protocol (``tests/support/stream_client``) and draw nothing, so what is measured is the
server. Reported:

- sessions served (a figure and no error), how many were told their place in the run queue,
  and the time until the last figure reached its client;
- CPU-seconds per session, of the server (with any worker it reaped) and of its live workers,
  from ``/proc``, as the issue measured it (target: under 0.3 s for an Explorer first load);
- RSS of the server and its workers (summed) before, at its peak during, and 5 s after the burst,
  and the worker count before and after;
- with ``--heavy K``: K of the issue's slow links (cross-entropy, n = d = 128, horizon 1e12)
  opened 2 s before the burst, how they ended (``--limit`` sets the server's time limit);
- with ``--sequential K``: K more distinct runs one after another (nothing else running): the RSS
  every K/10 runs, to show where it levels off, its peak, and the CPU per run without contention;
- any process of the server's tree still alive after it stopped (orphans).

With ``--url``, the sessions go to that address (a proxy in front of replicas, ``deploy/``) and
only what a client sees is reported: sessions served and the times to figure
(``benchmarks/replicas.py`` starts that layout itself and reads the replicas' CPU too).

Targets on the 2-core development machine: all 30 served, the last within 15 s, RSS under
700 MB throughout and back near idle after, and 200 runs in a row keeping it bounded
(``--sessions 30 --sequential 200``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))  # the app's ui, which the test helpers read names from

from support.browser import AppServer  # noqa: E402
from support.stream_client import PageLoad, open_page  # noqa: E402

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")


def _tree(root: int) -> list[int]:
    """``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def rss_mb(root: int) -> float:
    """Resident memory of ``root`` and its descendants, in MB."""
    total = 0
    for pid in _tree(root):
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1])
        except OSError:
            continue
    return total * PAGE_SIZE / 1e6


def cpu_seconds(root: int) -> tuple[float, float]:
    """CPU time of ``root`` (itself and the children it reaped) and of its live descendants (workers)."""
    fields = _stat(root)
    own = sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    below = 0
    for pid in _tree(root)[1:]:
        try:
            below += sum(int(x) for x in _stat(pid)[11:13])
        except OSError:
            continue
    return own / TICKS, below / TICKS


def workers(root: int) -> int:
    """Simulation worker processes (``python -c`` children running ``polarize.serve.runner``)."""
    count = 0
    for pid in _tree(root)[1:]:
        try:
            count += b"_child_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
    return count


class PeakRss:
    """Samples a process tree every 0.1 s while inside: ``peak`` RSS in MB, every worker pid ``seen``."""

    def __init__(self, root: int):
        self.root, self.peak, self.seen, self._stop = root, 0.0, set(), threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_mb(self.root))
            self.seen |= set(_tree(self.root)[1:])
            self._stop.wait(0.1)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


HEAVY = "/?loss=kl&n=128&d=128&horizon=1e12&seed={}"
"""The issue's slow link: it runs into the time limit."""


async def burst(url: str, links: list[str], heavy: list[str], timeout: float) -> tuple[list[PageLoad], ...]:
    """Open the ``heavy`` links, then (2 s later, when they hold the workers) all ``links`` at once."""
    slow = [asyncio.create_task(open_page(url, link, timeout)) for link in heavy]
    if slow:
        await asyncio.sleep(2.0)
    light = await asyncio.gather(*(open_page(url, link, timeout) for link in links))
    return light, list(await asyncio.gather(*slow))


def served(loads: list[PageLoad]) -> list[PageLoad]:
    return [load for load in loads if load.figures and not load.errors and load.finished is not None]


def report(loads: list[PageLoad], slow: list[PageLoad], wall: float, cpu: tuple[float, float] | None) -> None:
    ok = served(loads)
    firsts = sorted(load.first_figure for load in ok)
    queued = [load for load in loads if any("your run is queued" in text for text in load.texts)]
    print(f"sessions served: {len(ok)} / {len(loads)} (burst took {wall:.1f} s); "
          f"{len(queued)} were told their place in the queue")
    if firsts:
        print(f"time to figure: median {statistics.median(firsts):.2f} s, last {firsts[-1]:.2f} s")
    each = max(1, len(loads))
    if cpu is not None:  # a server of our own (not --url)
        print(f"CPU: {sum(cpu):.2f} s for the burst, {sum(cpu) / each:.3f} s per session "
              f"(server {cpu[0] / each:.3f} s, workers {cpu[1] / each:.3f} s)")
    for load in loads:
        if load not in ok:
            print(f"  not served: {load.link}: {load.errors[:1]}")
    for load in slow:
        what = load.errors[0][:70] if load.errors else f"{load.figures} figure(s)"
        print(f"  heavy {load.link}: {what} after {load.finished or float('nan'):.1f} s")


def in_a_row(url: str, pid: int, runs: int, timeout: float) -> set[int]:
    """Open ``runs`` distinct links one after another: the RSS every tenth of the way (does it level
    off?), its peak, and the CPU per run; returns every process seen."""
    cpu_before, marks, failed = cpu_seconds(pid), [], 0
    with PeakRss(pid) as again:
        for i in range(runs):
            load = asyncio.run(open_page(url, f"/?seed={5000 + i}", timeout))
            failed += not served([load])
            if (i + 1) % max(1, runs // 10) == 0:
                marks.append(f"{rss_mb(pid):.0f}")
    server, below = (after - before for after, before in zip(cpu_seconds(pid), cpu_before, strict=True))
    print(f"{runs} runs in a row ({failed} not served): RSS every {max(1, runs // 10)} runs "
          f"{' '.join(marks)} MB; peak {again.peak:.0f} MB, {workers(pid)} workers; "
          f"{(server + below) / runs:.3f} CPU-s per run (server {server / runs:.3f} s, "
          f"workers {below / runs:.3f} s)")
    return again.seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--same", action="store_true", help="every session opens the same link")
    parser.add_argument("--heavy", type=int, default=0, help="slow links opened just before the burst")
    parser.add_argument("--limit", type=float, default=None, help="the server's POLARIZE_APP_TIMEOUT")
    parser.add_argument("--sequential", type=int, default=0, help="distinct runs in a row afterwards")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a session may wait")
    parser.add_argument("--url", default=None, help="a running server or proxy to load instead of a new one")
    parser.add_argument("--quick", action="store_true",
                        help="3 sessions, then 2 runs in a row (seconds; for the tests)")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.sequential = 3, 2
    if args.url:
        links = [f"/?seed={1000 + (0 if args.same else i)}" for i in range(args.sessions)]
        start = time.perf_counter()
        loads, slow = asyncio.run(burst(args.url.rstrip("/"), links, [], args.timeout))
        report(loads, slow, time.perf_counter() - start, None)
        return
    env = {} if args.limit is None else {"POLARIZE_APP_TIMEOUT": str(args.limit)}
    with AppServer(env=env) as server:
        pid = server.process.pid
        warm = asyncio.run(open_page(server.url, "/?seed=1", args.timeout))
        assert served([warm]), f"the warm-up session failed: {warm.errors}"
        time.sleep(1)
        before, workers_before, cpu_before = rss_mb(pid), workers(pid), cpu_seconds(pid)
        links = [f"/?seed={1000 + (0 if args.same else i)}" for i in range(args.sessions)]
        heavy = [HEAVY.format(11 + i) for i in range(args.heavy)]
        with PeakRss(pid) as peak:
            start = time.perf_counter()
            loads, slow = asyncio.run(burst(server.url, links, heavy, args.timeout))
            wall = time.perf_counter() - start
        cpu = tuple(after - before for after, before in zip(cpu_seconds(pid), cpu_before, strict=True))
        time.sleep(5)
        report(loads, slow, wall, cpu)
        print(f"RSS: {before:.0f} MB before, {peak.peak:.0f} MB peak, {rss_mb(pid):.0f} MB 5 s after")
        print(f"workers: {workers_before} before, {workers(pid)} after")
        if args.sequential:
            peak.seen |= in_a_row(server.url, pid, args.sequential, args.timeout)
    time.sleep(1)
    left = sorted(p for p in peak.seen if Path(f"/proc/{p}").exists())
    print(f"processes left after the server stopped: {left or 'none'}")


if __name__ == "__main__":
    main()
