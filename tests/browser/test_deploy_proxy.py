"""The hosted layout of ``deploy/`` as real processes: nginx from the shipped template in front of two
``streamlit run`` replicas, whose runs go to a ``dask scheduler`` and ``dask worker``.

Sessions spread over the replicas and each is served; two visitors' decks stay each their own and off
the replicas' disks (``POLARIZE_HOSTED=1``, as deploy/ sets it); a session's downloads and a deck upload work
through the proxy on either replica (the affinity cookie holds), and fail without it; Streamlit's
static files come from the proxy; the same link on both replicas gives the same numbers from the
cluster; a replica killed, its browser reconnects to the other and shows the same view.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import urllib.error
import urllib.request

import pytest
from support.browser import ARTIFACTS
from support.decks import two_visitors
from support.proxy import NGINX, Layout, NginxProxy, affinity_cookie
from support.stream_client import open_page

pytest.importorskip("distributed")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not os.path.exists(NGINX), reason="no nginx (apt-get install nginx)")]

LINK = "/?n=5&seed=11"


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    """Two replicas (the runs on a Dask scheduler and worker, one cookie secret) behind the proxy."""
    folder = tmp_path_factory.mktemp("layout")
    with Layout(folder, replicas=2, env={"POLARIZE_APP_TIMEOUT": "120", "POLARIZE_HOSTED": "1"}) as running:
        yield {"proxy": running.proxy, "replicas": running.replicas}


def _sessions(proxy: NginxProxy, links: list[str]) -> list[tuple[str, object]]:
    """A first visit of each of ``links`` through the proxy, each with the cookie its first request got."""
    cookies = [affinity_cookie(proxy.url + link) for link in links]

    async def visit():
        return await asyncio.gather(*(open_page(proxy.url, link, headers={"Cookie": f"polarize_replica={c}"})
                                      for c, link in zip(cookies, links, strict=True)))

    return list(zip(cookies, asyncio.run(visit()), strict=True))


def test_sessions_spread_over_the_replicas_are_all_served(layout):
    proxy = layout["proxy"]
    sessions = _sessions(proxy, [LINK] * 16)
    for _, load in sessions:
        assert load.figures >= 1 and not load.errors, (load.errors, load.texts[:3])
    assert {proxy.replica_of(cookie) for cookie, _ in sessions} == set(layout["replicas"])  # both
    # The same link on either replica: the same numbers (runs of the cluster's workers).
    verdicts = {tuple(t for t in load.texts if "holds" in t) for _, load in sessions}
    assert len(verdicts) == 1 and next(iter(verdicts)), verdicts


def test_the_load_benchmark_loads_a_running_deployment(layout):
    """``benchmarks/load.py --url``, as an operator points it at a deployment's proxy."""
    import subprocess
    import sys

    from support.browser import ROOT

    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "load.py"), "--url", layout["proxy"].url,
                           "--sessions", "4"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "sessions served: 4 / 4" in done.stdout, done.stdout


def test_two_visitors_decks_stay_their_own_through_the_proxy(layout, browser):
    two_visitors(browser, layout["proxy"].url)
    assert [server.kept() for server in layout["replicas"].values()] == [[], []]


def _browser_on(browser, proxy: NginxProxy, replica: str, path: str):
    """A browser context whose affinity cookie leads to ``replica``, with ``path`` open in a page."""
    for _ in range(20):
        context = browser.new_context(viewport={"width": 1280, "height": 720}, accept_downloads=True)
        page = context.new_page()
        page.goto(proxy.url + path)
        page.locator("[data-testid='stApp']").wait_for(timeout=60_000)
        cookie = next(c["value"] for c in context.cookies() if c["name"] == "polarize_replica")
        if proxy.replica_of(cookie) == replica:
            return context, page, cookie
        context.close()
    raise AssertionError(f"no browser reached {replica} in 20 tries")


def _logged(proxy: NginxProxy, wanted, most: float = 30.0) -> list:
    """The proxy's log lines that ``wanted`` accepts, once there are some: nginx writes a request's
    line as it ends, which can be just after its answer reached the client."""
    deadline = time.monotonic() + most
    while True:
        found = [r for r in proxy.access() if wanted(r)]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _download(page, proxy: NginxProxy, cookie: str, replica: str, other: str) -> bool:
    """The view's first download, through the proxy from the session's replica; not from ``other``'s
    (whether that was shown: the other replica answered, with 404)."""
    before = len(proxy.access())
    with page.expect_download(timeout=60_000) as started:
        page.locator("[data-testid='stDownloadButton'] button").first.click()
    assert os.path.getsize(started.value.path()) > 0
    media = [r for r in proxy.access()[before:] if r.affinity == cookie and r.path.startswith("/media/")]
    assert media and all(r.upstream == replica and r.status == 200 for r in media)
    # The same address by a browser on the other replica: the file is not there (the seed is this
    # page's own: Streamlit names a file by its content). Read from the log which replica answered: a
    # replica the proxy has just marked failed (a busy machine) has its browsers sent to the other.
    stranger = urllib.request.Request(proxy.url + media[0].path,
                                      headers={"Cookie": f"polarize_replica={other}"})
    try:
        urllib.request.urlopen(stranger, timeout=30).close()
    except urllib.error.HTTPError:
        pass
    (asked,) = _logged(proxy, lambda r: r.affinity == other and r.path == media[0].path)
    assert asked.status == (200 if asked.upstream == replica else 404), asked
    return asked.upstream != replica


def test_downloads_uploads_and_static_files_on_each_replica(layout, browser, tmp_path):
    from support.decks import SLIDES

    from polarize.web.deck_file import to_json
    from polarize.web.deck_store import Deck

    proxy = layout["proxy"]
    deck = tmp_path / "lecture.json"
    deck.write_text(to_json(Deck(name="Through the proxy", slides=SLIDES)))
    cookies = {}
    for replica in layout["replicas"]:
        cookie = affinity_cookie(proxy.url + "/")
        while proxy.replica_of(cookie) == replica:
            cookie = affinity_cookie(proxy.url + "/")
        cookies[replica] = cookie  # a cookie that leads to the other replica
    refused = []
    for seed, replica in enumerate(layout["replicas"], start=500):
        # Found on the deck page: a view with this seed is drawn on this replica only.
        context, page, cookie = _browser_on(browser, proxy, replica, "/deck")
        try:
            page.goto(f"{proxy.url}/?n=4&seed={seed}")
            page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
            refused.append(_download(page, proxy, cookie, replica, cookies[replica]))
            page.goto(proxy.url + "/deck")
            page.locator("input[type='file']").set_input_files(str(deck))
            page.get_by_text("Imported the deck").wait_for(timeout=60_000)
            uploads = [r for r in proxy.access() if r.affinity == cookie and "/_stcore/upload_file" in r.path]
            assert uploads and {r.upstream for r in uploads} == {replica}
            assert all(r.status < 300 for r in uploads)
        except Exception:
            page.screenshot(path=str(ARTIFACTS / f"proxy-upload-{replica.replace(':', '-')}.png"))
            raise
        finally:
            context.close()
    assert any(refused), "neither download was asked of the other replica (both were marked failed?)"
    static = [r for r in proxy.access() if r.path.startswith("/static/")]  # the browsers' JS and CSS
    assert static and all(r.upstream == "-" and r.status in (200, 304) for r in static)  # never a replica


def test_a_replica_lost_its_browsers_reconnect_to_the_other(layout, browser):
    """Last in the module: it stops one of the two replicas."""
    proxy = layout["proxy"]
    victim, survivor = list(layout["replicas"])
    context, page, cookie = _browser_on(browser, proxy, victim, LINK)
    try:
        page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
        title, query = page.locator("h1").first.inner_text(), page.evaluate("location.search")
        os.killpg(layout["replicas"][victim].process.pid, signal.SIGKILL)
        # Streamlit's page reconnects by itself, and the proxy passes the dead replica over.
        deadline = time.monotonic() + 90
        while proxy.replica_of(cookie) != survivor and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proxy.replica_of(cookie) == survivor
        page.locator("[data-testid='stStatusWidget']").wait_for(state="detached", timeout=90_000)
        page.locator(".js-plotly-plot").first.wait_for(timeout=90_000)
        assert page.locator("h1").first.inner_text() == title and page.evaluate("location.search") == query
    except Exception:
        page.screenshot(path=str(ARTIFACTS / "proxy-failover.png"))
        raise
    finally:
        context.close()
