"""The hosted layout under a class's load: 1 and 2 app replicas behind nginx, runs on Dask (a script).

    python benchmarks/replicas.py [--sessions 200] [--replicas 1,2] [--browsers 5] [--workers 1]
    python benchmarks/replicas.py --sessions 1000 --replicas 2 --workers 2 --browsers 0   # a course at once
    python benchmarks/replicas.py --quick    # 2 replicas only, 4 sessions, 1 browser: checks that it runs

For each replica count, starts ``deploy/``'s layout as processes (``tests/support/proxy.Layout``: a
``dask scheduler`` and workers, the replicas, nginx from the shipped template), then:

- opens N sessions at once through the proxy (websocket clients, ``tests/support/stream_client``, each
  from a loopback address of its own as a hall's students: the proxy limits each address), each a
  different Explorer link, so every one is a fresh run on the cluster. Each session is served (a
  figure and the run's numbers, no error), refused in one line (no figure, one error box of one
  line: the server too busy), or neither (no answer in time, a traceback, a figure with an error, the
  engine's words for a run that failed):
  their counts, and how many served were wrong: a sample of ``--check`` served sessions (all, with
  fewer) has its winning token and final entropy checked against the script's own integration of
  the gradient flow (``flow``: scipy's LSODA on ``dV/dt = -g s^T``, ``da/dt = s * (u - s.u)``, from
  the link's drawn start), a session without them counted wrong. Then the burst's wall time, the
  times to figure of those served (p50, p95, last), the replicas' memory (each replica's process
  tree, before and at its peak), their CPU-seconds per session (the runs are on the workers) and
  the refusals' words, counted;
  and one line that says whether every session was served or refused in one line, none wrong;
- opens K first visits in real Chromium through the proxy, one after another: the replicas'
  CPU-seconds per visit, with Streamlit's static files from the proxy (the issue's target: under 0.15).

The replicas' CPU is read from ``/proc`` (each replica's process tree), so this runs on one machine;
on this 2-core machine replicas, workers and the clients share the cores, so two replicas show how
the work divides, not a doubling.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))  # the app's ui, which the test helpers read names from
sys.path.insert(0, str(ROOT / "benchmarks"))

from load import PeakRss, cpu_seconds, rss_mb  # noqa: E402
from support.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from support.proxy import Layout  # noqa: E402
from support.stream_client import PageLoad, open_page, student_address  # noqa: E402

FIRST_SEED = 2000
"""Session ``i`` opens the Explorer's default run with seed ``FIRST_SEED + i``."""


def _cpu(layout: Layout) -> float:
    return sum(sum(cpu_seconds(server.process.pid)) for server in layout.replicas.values())


async def _burst(url: str, links: list[str], timeout: float):
    # Each from an address of its own, as a hall's students: the proxy limits connections per address.
    return await asyncio.gather(*(open_page(url, link, timeout, source=student_address(i))
                                  for i, link in enumerate(links)))


def flow(seed: int) -> np.ndarray:
    """The final scores ``s`` (n,) of the Explorer's default run for ``seed``, integrated here (scipy's
    LSODA, tight tolerances), not by polarize's engine: value-softmax model ``beta = V s``, logistic
    loss ``l = log(1 + exp(-beta_*^T beta))``, ``g = dl/dbeta``, ``dV/dt = -g s^T``, and the softmax
    logits' replicator flow ``da/dt = s * (u - s.u)`` with ``u = -V^T g``, from the start the seed
    draws (``Experiment(seed=seed).resolved()``: its ``V0`` (d, n), ``a0`` (n,) and ``beta_*``)."""
    from scipy.integrate import solve_ivp
    from scipy.special import expit, softmax

    from polarize import Experiment

    start = Experiment(seed=seed).resolved()
    model = (start.loss, start.normalizer, start.method, start.temperature)
    assert model == ("logistic", "softmax", "flow", 1.0), f"the flow here is not the default run's: {model}"
    V0, a0, target = (np.asarray(x, dtype=float) for x in (start.V0, start.a0, start.target))
    d, n = V0.shape

    def velocity(_t: float, y: np.ndarray) -> np.ndarray:
        V, a = y[:d * n].reshape(d, n), y[d * n:]
        s = softmax(a)
        g = -expit(-(target @ (V @ s))) * target
        u = -V.T @ g
        return np.concatenate([-np.outer(g, s).ravel(), s * (u - s @ u)])

    ran = solve_ivp(velocity, (0.0, start.horizon), np.concatenate([V0.ravel(), a0]), method="LSODA",
                    rtol=1e-9, atol=1e-12)
    return softmax(ran.y[d * n:, -1])


def agrees(load: PageLoad, seed: int) -> bool:
    """Whether the session's winning token is the independent flow's, and its final entropy the same to
    the three figures shown."""
    try:
        winner, entropy = int(load.metrics["Winning token"]), float(load.metrics["Final entropy"])
    except (KeyError, ValueError):
        return False
    s = flow(seed)
    mine = float(-np.sum(s * np.log(s)))
    return winner == int(np.argmax(s)) and abs(entropy - mine) <= 5e-3 * mine


def refused(load: PageLoad) -> bool:
    """No figure, and one error box of one line (a busy server's words), nothing else gone wrong: not
    the words of a run that failed in the engine (``describe_failure`` of an exception it does not
    know), which tell of a fault, not of a full server."""
    from polarize.web.failures import describe_failure

    failed = describe_failure(LookupError()).partition("(")[0]
    return (not load.figures and len(load.errors) == 1 and load.errors[0] in load.texts
            and "\n" not in load.errors[0].strip() and not load.errors[0].startswith(failed))


@dataclass
class Course:
    """How a burst of sessions ended: each served, refused in one line, or neither; the served sessions
    checked against ``flow`` and those found wrong; the burst's wall time and the replicas' memory."""

    loads: list[PageLoad]
    wall: float
    served: list[PageLoad] = field(default_factory=list)
    refused: list[PageLoad] = field(default_factory=list)
    neither: list[PageLoad] = field(default_factory=list)
    checked: int = 0
    wrong: list[PageLoad] = field(default_factory=list)
    memory: list[tuple[float, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for load in self.loads:
            ok = load.figures and not load.errors and load.finished is not None
            (self.served if ok else self.refused if refused(load) else self.neither).append(load)

    def check(self, most: int, rng: random.Random) -> None:
        """Check ``most`` served sessions, drawn at random (all, if fewer were served)."""
        sample = rng.sample(self.served, min(most, len(self.served)))
        self.checked = len(sample)
        self.wrong = [load for load in sample if not agrees(load, int(load.link.rpartition("=")[2]))]

    def summary(self) -> str:
        times = np.array(sorted(load.first_figure for load in self.served) or [np.nan])
        memory = " + ".join(f"{peak:.0f}" for _, peak in self.memory)
        idle = " + ".join(f"{before:.0f}" for before, _ in self.memory)
        return (f"{len(self.loads)} sessions in {self.wall:.1f} s: {len(self.served)} served, "
                f"{len(self.refused)} refused in one line, {len(self.wrong)} wrong "
                f"of {self.checked} checked, "
                f"{len(self.neither)} neither; time to figure p50 {np.percentile(times, 50):.2f} s, "
                f"p95 {np.percentile(times, 95):.2f} s, last {times[-1]:.2f} s; "
                f"replicas' memory peak {memory} MB (before {idle} MB)")


def sessions(layout: Layout, count: int, timeout: float, check: int) -> tuple[str, bool]:
    """``count`` fresh Explorer links at once through the proxy: how each ended, ``check`` of them
    checked, times, the replicas' memory and CPU per session; and whether every session was served or
    refused in one line, none wrong."""
    before = _cpu(layout)
    roots = [server.process.pid for server in layout.replicas.values()]
    idle = [rss_mb(root) for root in roots]
    links = [f"/?seed={FIRST_SEED + i}" for i in range(count)]
    peaks = [PeakRss(root) for root in roots]
    for peak in peaks:
        peak.__enter__()
    start = time.perf_counter()
    try:
        loads = asyncio.run(_burst(layout.proxy.url, links, timeout))
    finally:
        for peak in peaks:
            peak.__exit__()
    course = Course(loads, time.perf_counter() - start)
    course.memory = [(mb, peak.peak) for mb, peak in zip(idle, peaks, strict=True)]
    cpu = _cpu(layout) - before
    course.check(check, random.Random(count))
    for line, times in collections.Counter(load.errors[0] for load in course.refused).most_common(3):
        print(f"  refused {times} time(s): {line}")
    for line, times in collections.Counter(str(load.errors[:2]) for load in course.neither).most_common(3):
        print(f"  neither served nor refused in one line, {times} time(s): {line}")
    for load in course.wrong[:5]:
        print(f"  wrong: {load.link}: {load.metrics}", file=sys.stderr)
    met = not course.neither and not course.wrong
    return f"{course.summary()}; replicas {cpu / count:.3f} CPU-s a session", met


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
    return (f"{count} browser first visits: replicas {np.median(spent):.3f} CPU-s a visit (median); "
            f"static files {from_proxy}/{len(static)} from the proxy")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--replicas", default="1,2", help="replica counts to compare, comma-separated")
    parser.add_argument("--browsers", type=int, default=5, help="real-browser first visits per layout")
    parser.add_argument("--workers", type=int, default=1, help="Dask workers (one thread each)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a session may wait")
    parser.add_argument("--check", type=int, default=50,
                        help="served sessions whose numbers are checked against an independent flow")
    parser.add_argument("--quick", action="store_true", help="2 replicas only, 4 sessions, 1 browser")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.browsers, args.replicas, args.check = 4, 1, "2", 4
    for count in (int(c) for c in args.replicas.split(",")):
        with tempfile.TemporaryDirectory() as folder, \
                Layout(Path(folder), replicas=count, workers=args.workers,
                       env={"POLARIZE_APP_TIMEOUT": str(args.timeout)}) as layout:
            for replica in layout.replicas:  # each warm (its imports, its first run), straight to it
                asyncio.run(_burst(f"http://{replica}", ["/?seed=1"], args.timeout))
            burst, met = sessions(layout, args.sessions, args.timeout, args.check)
            print(f"{count} replica(s), {args.workers} worker(s): {burst}")
            print("every session served or refused in one line, none wrong: " + ("met" if met else "NOT met"),
                  flush=True)
            if args.browsers:
                print(f"{count} replica(s): {browsers(layout, args.browsers)}")


if __name__ == "__main__":
    main()
