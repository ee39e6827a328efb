"""The hosted layout of ``deploy/`` as real processes: nginx from the shipped template in front of two
``streamlit run`` replicas, whose runs go to a ``dask scheduler`` and ``dask worker``.

Sessions spread over the replicas and each is served; two visitors' decks stay each their own and off
the replicas' disks (``POLARIZE_HOSTED=1``, as deploy/ sets it); a session's downloads and a deck upload work
through the proxy on either replica, and reach it too with a cookie that leads to the other replica or
with none (the other answers 404, and the proxy asks the next); the demo in a course page's cross-site
iframe plays, downloads and uploads a deck; Streamlit's static files come from the proxy, and plotly.js
from a replica through it, with headers that let a browser keep it, and kept by the proxy; the same
link on both replicas gives the same numbers from the cluster; a replica killed, its browser
reconnects to the other and shows the same view, and downloads and uploads there after the killed
one is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import http.server
import os
import signal
import threading
import time
import urllib.request

import pytest
from support.browser import ARTIFACTS
from support.decks import two_visitors
from support.proxy import NGINX, Layout, NginxProxy, affinity_cookie
from support.stream_client import held_session, open_page, upload

from ui import plotly_js

pytest.importorskip("distributed")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not os.path.exists(NGINX), reason="no nginx (apt-get install nginx)")]

LINK = "/?n=5&seed=11"


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    """Two replicas (the runs on a Dask scheduler and worker, one cookie secret) behind the proxy."""
    folder = tmp_path_factory.mktemp("layout")
    # Deck uploads in a course page's cross-site iframe need the XSRF cookie sent there (README).
    env = {"POLARIZE_APP_TIMEOUT": "120", "POLARIZE_HOSTED": "1",
           "STREAMLIT_SERVER_XSRF_COOKIE_SAME_SITE": "none"}
    with Layout(folder, replicas=2, env=env) as running:
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


def _browser_on(browser, proxy: NginxProxy, replica: str, path: str, window=(1280, 720)):
    """A browser context whose affinity cookie leads to ``replica``, with ``path`` open in a page."""
    for _ in range(20):
        context = browser.new_context(viewport=dict(zip(("width", "height"), window, strict=True)),
                                      accept_downloads=True)
        page = context.new_page()
        page.goto(proxy.url + path)
        page.locator("[data-testid='stApp']").wait_for()
        cookie = next(c["value"] for c in context.cookies() if c["name"] == "polarize_replica")
        if proxy.replica_of(cookie) == replica:
            return context, page, cookie
        context.close()
    raise AssertionError(f"no browser reached {replica} in 20 tries")


def _logged(proxy: NginxProxy, wanted, most: float = 30.0, count: int = 1) -> list:
    """The proxy's log lines that ``wanted`` accepts, once there are ``count``: nginx writes a
    request's line as it ends, which can be just after its answer reached the client."""
    deadline = time.monotonic() + most
    while True:
        found = [r for r in proxy.access() if wanted(r)]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _download(page, proxy: NginxProxy, cookie: str, replica: str, other: str) -> bool:
    """The view's first download, through the proxy from the session's replica, and the same address
    asked with a cookie that leads to the other replica, answered by the session's replica too (whether
    the other was asked first: it answered 404, and the proxy asked the next)."""
    before = len(proxy.access())
    with page.expect_download() as started:
        page.locator("[data-testid='stDownloadButton'] button").first.click()
    content = open(started.value.path(), "rb").read()
    assert content
    media = [r for r in proxy.access()[before:] if r.affinity == cookie and r.path.startswith("/media/")]
    assert media and all(r.upstream == replica and r.status == 200 for r in media)
    # The file is on this replica only (the seed is this page's own: Streamlit names a file by its
    # content). A replica the proxy has just marked failed (a busy machine) is not asked at all.
    stranger = urllib.request.Request(proxy.url + media[0].path,
                                      headers={"Cookie": f"polarize_replica={other}"})
    with urllib.request.urlopen(stranger, timeout=30) as reply:
        assert reply.read() == content
    (asked,) = _logged(proxy, lambda r: r.affinity == other and r.path == media[0].path)
    assert asked.status == 200 and asked.upstream == replica, asked
    return asked.tried[0] != replica


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
            page.locator(".js-plotly-plot").first.wait_for()
            refused.append(_download(page, proxy, cookie, replica, cookies[replica]))
            page.goto(proxy.url + "/deck")
            page.locator("input[type='file']").set_input_files(str(deck))
            page.get_by_text("Imported the deck").wait_for()
            uploads = [r for r in proxy.access() if r.affinity == cookie and "/_stcore/upload_file" in r.path]
            assert uploads and {r.upstream for r in uploads} == {replica}
            assert all(r.status < 300 for r in uploads)
        except Exception:
            page.screenshot(path=str(ARTIFACTS / f"proxy-upload-{replica.replace(':', '-')}.png"))
            raise
        finally:
            context.close()
    assert any(refused), "neither download was asked of the other replica first (both were marked failed?)"
    static = [r for r in proxy.access() if r.path.startswith("/static/")]  # the browsers' JS and CSS
    assert static and all(r.upstream == "-" and r.status in (200, 304) for r in static)  # never a replica


def test_plotly_js_is_served_through_the_proxy_for_browsers_to_keep(layout):
    """The figures' plotly.js (``ui.plotly_js``), from a replica's own copy, named by its version: the proxy
    tells browsers to keep it (a new version is a new address)."""
    proxy = layout["proxy"]
    with urllib.request.urlopen(f"{proxy.url}/{plotly_js.ADDRESS}", timeout=60) as reply:
        body, headers = reply.read(), reply.headers
    assert headers.get_content_type().endswith("javascript") and body == plotly_js.SOURCE.read_bytes()
    caching = ", ".join(headers.get_all("Cache-Control") or [])
    assert "immutable" in caching and "max-age=2592000" in caching, caching


def test_the_proxy_keeps_plotly_js_once_a_replica_has_served_it(layout):
    """A hall's new browsers each fetch plotly.js, which a replica sends packed (gzipped once,
    ``ui.plotly_js``): through the proxy only the first request of an encoding reaches a replica, the rest
    are the proxy's copy, whole and the same."""
    proxy = layout["proxy"]
    path = f"/{plotly_js.ADDRESS}"
    bodies = []
    for _ in range(3):  # an encoding of its own (the proxy keeps one copy for each)
        request = urllib.request.Request(proxy.url + path, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request, timeout=60) as reply:
            assert reply.headers["Content-Encoding"] == "gzip"
            bodies.append(gzip.decompress(reply.read()))
    assert bodies[0] == plotly_js.SOURCE.read_bytes() and bodies.count(bodies[0]) == 3
    asked = _logged(proxy, lambda r: r.path == path and r.status == 200, count=3)
    assert len(asked) >= 3
    mine = asked[-3:]
    assert mine[0].upstream != "-" or all(r.upstream == "-" for r in mine)  # kept before, if another asked so
    assert [r.upstream for r in mine[1:]] == ["-", "-"], mine  # served by the proxy itself


def _cookie_to(proxy: NginxProxy, replica: str) -> str:
    """An affinity cookie the proxy routes to ``replica``."""
    for _ in range(50):
        cookie = affinity_cookie(proxy.url + "/_stcore/health")
        if _logged(proxy, lambda r, c=cookie: r.affinity == c and r.upstream != "-")[-1].upstream == replica:
            return cookie
    raise AssertionError(f"no cookie led to {replica} in 50 tries")


def test_an_upload_reaches_its_sessions_replica_whatever_the_cookie(layout):
    """A session held on each replica; its upload through the proxy with a cookie that leads to the
    other replica, and with none (routed anew each time), is taken by the session's own replica."""
    proxy, replicas = layout["proxy"], list(layout["replicas"])
    cookies = {replica: _cookie_to(proxy, replica) for replica in replicas}
    with held_session(layout["replicas"][replicas[0]].url) as first, \
            held_session(layout["replicas"][replicas[1]].url) as second:
        for session, home, other in ((first, *replicas), (second, *reversed(replicas))):
            statuses = [upload(proxy.url, session, b"{}", cookie=f"polarize_replica={cookies[other]}")]
            statuses += [upload(proxy.url, session, b"{}") for _ in range(6)]
            assert statuses == [204] * 7, statuses
            puts = _logged(proxy, lambda r, s=session: r.path.startswith(f"/_stcore/upload_file/{s}/"),
                           count=7)
            assert len(puts) == 7 and {r.upstream for r in puts} == {home}, puts
            assert puts[0].tried[0] == other  # the cookie's replica was asked first, and said 404


@contextlib.contextmanager
def _course_page(app: str):
    """A course page on another site (127.0.0.2, where the proxy is on 127.0.0.1) that embeds ``app``
    in an iframe, as the README says: its address."""
    html = (f'<!doctype html><title>Week 3</title><h1>Week 3: polarization</h1>'
            f'<iframe id="polarize" src="{app}" width="1200" height="900"></iframe>').encode()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(html)

        def log_message(self, *args):
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.2", 0), Page) as site:
        threading.Thread(target=site.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.2:{site.server_address[1]}/week-3"
        finally:
            site.shutdown()


def test_the_demo_embedded_in_a_course_page_plays_downloads_and_uploads(layout, browser, tmp_path):
    """In a cross-site iframe the proxy's affinity cookie (SameSite=Lax) is not sent: each request is
    routed anew, and the session's downloads and upload still reach its replica. This Chromium blocks
    third-party cookies: the upload's token cookie is kept because the proxy makes it Partitioned."""
    from support.decks import SLIDES

    from polarize.web.deck_file import to_json
    from polarize.web.deck_store import Deck

    proxy = layout["proxy"]
    deck = tmp_path / "course.json"
    deck.write_text(to_json(Deck(name="Embedded", slides=SLIDES)))
    context = browser.new_context(viewport={"width": 1300, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    try:
        with _course_page(f"{proxy.url}/?n=4&seed=900&embed=true") as course:
            before = len(proxy.access())
            page.goto(course)
            frame = page.frame_locator("#polarize")
            play = frame.locator(".js-plotly-plot .updatemenu-button").first
            play.wait_for()
            assert "Play" in play.text_content()
            play.click()  # plays: the time slider moves
            page.frame(url=lambda u: u.startswith(proxy.url)).wait_for_function(
                "() => document.querySelector('.js-plotly-plot')._fullLayout.sliders[0].active > 3")
            sizes = []
            for _ in range(6):  # each download routed anew: about half to the other replica first
                with page.expect_download() as started:
                    frame.locator("[data-testid='stDownloadButton'] button").first.click()
                sizes.append(os.path.getsize(started.value.path()))
            assert all(sizes) and len(set(sizes)) == 1, sizes
            downloads = [r for r in proxy.access()[before:] if r.path.startswith("/media/")]
            # The course page's deck page, in the frame (a session of its own): a deck imported.
            page.evaluate("url => { document.getElementById('polarize').src = url; }",
                          f"{proxy.url}/deck?embed=true")
            frame.locator("input[type='file']").set_input_files(str(deck))
            frame.get_by_text("Imported the deck").wait_for()
            uploads = [r for r in proxy.access()[before:] if r.path.startswith("/_stcore/upload_file")]
            for asked in (downloads, uploads):
                assert asked and all(r.status < 300 for r in asked), asked
                assert len({r.upstream for r in asked}) == 1, asked  # the session's replica
                assert len({r.affinity for r in asked}) == len(asked), asked  # no cookie: routed anew
    except Exception:
        page.screenshot(path=str(ARTIFACTS / "proxy-embedded.png"))
        raise
    finally:
        context.close()


def test_a_replica_lost_its_browsers_reconnect_to_the_other(layout, browser, tmp_path):
    """Last in the module: it stops one of the two replicas, and starts it again on its port. Its
    browser's session stays on the other; its cookie leads back to the first, and its downloads and
    deck uploads still reach the session."""
    from support.decks import SLIDES

    from polarize.web.deck_file import to_json
    from polarize.web.deck_store import Deck

    deck = tmp_path / "failback.json"
    deck.write_text(to_json(Deck(name="After the failback", slides=SLIDES)))
    proxy = layout["proxy"]
    victim, survivor = list(layout["replicas"])
    # 1280 x 720, where the page posts no measure: its last run was the page's script, so on
    # reconnecting it asks for a run only because of ``ui.app``'s fragment on a timer (without it, a
    # download button after the failback did nothing: it asked the survivor for the dead session's file).
    context, page, cookie = _browser_on(browser, proxy, victim, LINK)
    try:
        page.locator(".js-plotly-plot").first.wait_for()
        title, query = page.locator("h1").first.inner_text(), page.evaluate("location.search")
        os.killpg(layout["replicas"][victim].process.pid, signal.SIGKILL)
        # Streamlit's page reconnects by itself, and the proxy passes the dead replica over.
        deadline = time.monotonic() + 90
        while proxy.replica_of(cookie) != survivor and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proxy.replica_of(cookie) == survivor
        page.locator("[data-testid='stStatusWidget']").wait_for(state="detached")
        page.locator(".js-plotly-plot").first.wait_for()
        assert page.locator("h1").first.inner_text() == title and page.evaluate("location.search") == query

        # The first replica back on its port: the cookie's requests go to it again (once the proxy
        # tries it), while the session stays on the survivor.
        assert layout["replicas"][victim]._start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            asked = urllib.request.Request(proxy.url + "/_stcore/health",
                                           headers={"Cookie": f"polarize_replica={cookie}"})
            urllib.request.urlopen(asked, timeout=30).close()
            if proxy.replica_of(cookie) == victim:
                break
            time.sleep(0.5)
        assert proxy.replica_of(cookie) == victim
        # A visitor opens the app on the first replica: it has run the app's script since it started
        # (before that it answers an upload with Streamlit's own 400, which the proxy cannot pass on).
        with held_session(layout["replicas"][victim].url):
            pass
        before = len(proxy.access())
        with page.expect_download() as started:
            page.locator("[data-testid='stDownloadButton'] button").first.click()
        assert os.path.getsize(started.value.path()) > 0
        media = [r for r in proxy.access()[before:] if r.affinity == cookie and r.path.startswith("/media/")]
        assert media and all(r.status == 200 and r.upstream == survivor for r in media), media
        page.get_by_role("link", name="Lecture decks").click()  # the same session: no reload
        page.wait_for_url("**/deck*")
        page.locator("input[type='file']").set_input_files(str(deck))
        page.get_by_text("Imported the deck").wait_for()
        puts = [r for r in proxy.access()[before:] if "/_stcore/upload_file" in r.path]
        assert puts and {(r.status, r.upstream) for r in puts} == {(204, survivor)}, puts
        assert puts[0].tried[0] == victim  # the cookie's replica asked first: it said 404
    except Exception:
        page.screenshot(path=str(ARTIFACTS / "proxy-failover.png"))
        raise
    finally:
        context.close()
