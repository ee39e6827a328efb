"""Helpers to drive the real app in headless Chromium (used by tests/browser/ and benchmarks/browser.py).

- ``AppServer``: ``streamlit run server.py`` (the app as ``./run app`` serves it) on a free local port,
  as a subprocess, with its own log and home folder, waited for until it serves, stopped (only that
  process group) on exit;
- ``launch_browser``: the system Chromium (Debian's ``/usr/bin/chromium``) through
  Playwright's sync API, headless, with a fresh profile;
- ``Tabs`` and ``Views``: a module's tests' pages opened in kept tabs, one per view;
- small page helpers: wait for the dashboard, read its signature, set a widget.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
BROWSER = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                       reason=f"{CHROMIUM} is missing (apt-get install chromium)"),
]
"""The marks of every browser test module: ``pytestmark = BROWSER``."""
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 # Tests open every page in a tab of one browser, most of them behind the others; a
                 # hall's students each have theirs in front. Chromium throttles hidden tabs' timers
                 # (to once a minute after five minutes hidden), which under the suite's load left a
                 # tab that had waited behind the others unsettled for minutes.
                 "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                 "--disable-backgrounding-occluded-windows", "--disable-features=IntensiveWakeUpThrottling"]
ARTIFACTS = ROOT / "test-artifacts"

# JavaScript: a short signature of the dashboard now on the page (number of tokens, frames,
# traces, last time, and where the trajectory ends, which changes with the data), or null
# while no Plotly figure with frames has been drawn.
FIGURE_SIGNATURE_JS = """() => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  for (const g of plots) {
    const meta = g.layout && g.layout.meta;
    // Only a fully drawn chart: a throw here (a chart mid-redraw) would end a wait instead of retrying it.
    if (meta && meta.n !== undefined && meta.frame_times && g._transitionData?._frames?.length) {
      const frames = g._transitionData._frames;
      const path = g.data.find(d => d.name === 'whole path');
      return JSON.stringify({n: meta.n, frames: frames.length, traces: g.data.length,
                             last: frames[frames.length - 1].name, t: meta.frame_times.slice(-1)[0],
                             end: path ? [path.x[path.x.length - 1], path.y[path.y.length - 1]] : null});
    }
  }
  return null;
}"""


# JavaScript: true once the viewport element (ui/viewport_frontend/viewport.js) has measured the page
# and has nothing to post or to measure again: the page will not rerun to fit its figure (which redraws
# it, taking the focus and the elements a test holds). True on a page without the element.
VIEWPORT_SETTLED_JS = """() => {
  const box = document.querySelector('.polarize-viewport');
  if (!box) return true;
  return box.dataset.measured !== undefined && box.dataset.posted === '' && box.dataset.pending === undefined;
}"""


def free_port() -> int:
    """A TCP port on localhost that nobody listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class AppServer:
    """``streamlit run server.py`` (the app as ``./run app`` serves it) on a free port; use as a context
    manager.

    Parameters
    ----------
    env : mapping, optional
        Extra environment variables for the server.
    timeout : float
        Seconds to wait for the server to answer its health check.
    script : path, optional
        Another script to serve instead of ``server.py`` (run from the repository's root, so it can
        import ``ui``): ``app.py`` is the app as ``streamlit run app.py`` serves it.

    Attributes
    ----------
    home : Path
        The server's own home folder (``HOME``, and no ``XDG_DATA_HOME``): where a server that an
        operator set up without ``POLARIZE_*`` variables would keep data, so a test can see what it wrote.
    """

    def __init__(self, env: dict[str, str] | None = None, timeout: float = 60.0,
                 script: str | Path = "server.py"):
        self.script = str(script)
        self._take_port()
        # Its own home, and the defaults of a host that sets no POLARIZE_* variable (a visitor's decks
        # in their session) unless ``env`` asks otherwise: servers started side by side (pytest -n)
        # share nothing, no test writes to the user's own folders, and the browser tests meet what a
        # host gets by default.
        self._home = tempfile.TemporaryDirectory()
        self.home = Path(self._home.name)
        inherited = {k: v for k, v in os.environ.items()
                     if not k.startswith("POLARIZE_") and k != "XDG_DATA_HOME"}
        self.env = {**inherited, "HOME": self._home.name, **(env or {})}
        self.timeout = timeout
        self.process: subprocess.Popen[bytes] | None = None

    def _take_port(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = ARTIFACTS / f"streamlit-{self.port}.log"

    def __enter__(self) -> AppServer:
        ARTIFACTS.mkdir(exist_ok=True)
        # A port found free can be taken before streamlit binds it (by a server another pytest
        # worker starts at the same moment): streamlit then exits at once, and a new port is tried.
        for _ in range(3):
            if self._start():
                return self
            self._take_port()
        raise RuntimeError(f"streamlit exited with {self.process.returncode} three times; see {self.log}")

    def _start(self) -> bool:
        """Start the server and wait until it serves (True) or exits (False)."""
        command = [sys.executable, "-m", "streamlit", "run", self.script, "--server.headless", "true",
                   "--server.port", str(self.port), "--server.address", "127.0.0.1",
                   "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
        with open(self.log, "wb") as log:
            # Its own process group, so that stopping it also stops the simulation workers it started.
            self.process = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        return True
            except OSError:
                time.sleep(0.2)
        self.__exit__(None, None, None)
        raise RuntimeError(f"streamlit did not answer within {self.timeout} s; see {self.log}")

    def kept(self) -> list[Path]:
        """What the server has written of polarize's under its home folder: a deck file, a polarize
        folder (a server that keeps visitors' data to themselves writes none)."""
        return [p for p in self.home.rglob("*") if "polarize" in str(p).lower() or p.suffix == ".sqlite3"]

    def __exit__(self, *exc: Any) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self._home.cleanup()


PATIENCE_MS = 180_000
"""How long a browser test waits for a state before it fails: the default of every context a test's
browser makes (``launch_browser``). A test asserts the state, not how soon it comes: on this 2-core
machine loaded twenty times over, a comparison page took more than 30 s to draw its grid."""


class _PatientBrowser:
    """A Playwright ``Browser`` whose new contexts wait ``PATIENCE_MS`` for a state (any other
    attribute is the browser's own)."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser

    def new_context(self, **options: Any) -> Any:
        context = self._browser.new_context(**options)
        context.set_default_timeout(PATIENCE_MS)
        context.set_default_navigation_timeout(PATIENCE_MS)
        return context

    def new_page(self, **options: Any) -> Any:
        page = self._browser.new_page(**options)
        page.set_default_timeout(PATIENCE_MS)
        page.set_default_navigation_timeout(PATIENCE_MS)
        return page

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)


def launch_browser(playwright: Any) -> Any:
    """Headless system Chromium with a fresh profile (``launch`` makes a temporary one), its contexts
    patient (``PATIENCE_MS``)."""
    return _PatientBrowser(playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                                      headless=True))


def figure_signature(page: Any) -> str | None:
    """The dashboard's signature (JSON text), or None while none is drawn."""
    return page.evaluate(FIGURE_SIGNATURE_JS)


PLAYING_JS = "() => Boolean(document.querySelector('.js-plotly-plot')?._transitionData?._animationRaf)"
"""JavaScript: whether the page's first animated figure is playing (plotly has an animation frame asked)."""


def next_frames(page: Any) -> None:
    """Return once the browser has drawn two more frames: what a key or a pointer started now (a
    layout, a frame shown with no transition) is on the page by then. For checks that nothing
    happened, where no state comes to wait for."""
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def wait_for_figure(page: Any, *, different_from: str | None = None) -> str:
    """Wait until a dashboard is drawn (and, if given, differs from ``different_from``), and the page
    will not rerun to fit it (``VIEWPORT_SETTLED_JS``); its signature."""
    page.wait_for_function(
        f"""() => {{ const s = ({FIGURE_SIGNATURE_JS})();
                    return s !== null && s !== {_js(different_from)} && ({VIEWPORT_SETTLED_JS})(); }}""",
        polling=25,
    )
    signature = figure_signature(page)
    assert signature is not None
    return signature


def _js(value: str | None) -> str:
    import json

    return "null" if value is None else json.dumps(value)


def set_number(page: Any, label: str, value: Any) -> None:
    """Type a value into the sidebar number input labelled ``label`` and commit it (Enter)."""
    box = page.get_by_label(label, exact=True)
    box.fill(str(value))
    box.press("Enter")


def selectbox_value(page: Any, label: str) -> str:
    """The option a sidebar select box shows (a ``<select>``, each option's value its name)."""
    return page.get_by_role("combobox", name=label).input_value()


def slider_value(page: Any, label: str) -> str:
    """The value a sidebar slider shows (its ``aria-valuetext``)."""
    return page.get_by_role("slider", name=label).get_attribute("aria-valuetext")


SHARED_SERVER_ENV = {"POLARIZE_APP_TIMEOUT": "180"}
"""The shared server's settings: a generous time limit, so that each page draws its figures on a small,
loaded machine."""


def fresh_server_fixture(**kwargs: Any) -> Any:
    """A module-scoped pytest fixture ``server``: the app on its own, new server (``AppServer(**kwargs)``)."""
    import pytest

    @pytest.fixture(scope="module")
    def server() -> Any:
        with AppServer(**kwargs) as running:
            yield running

    return server


# ---- layout: what overlaps, what is cut off ---------------------------------------------------------

# JavaScript: true once the page has settled: the script is not running, the viewport element
# has nothing more to post (its assumption holds), no spinner shows, and every Plotly figure on the
# page is drawn.
SETTLED_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const title = document.querySelector('h1');
  if (!title || !title.checkVisibility()) return false;
  if (document.querySelector('[data-testid="stSpinner"], [data-testid="stSkeleton"]')) return false;
  if (!(""" + VIEWPORT_SETTLED_JS + """)()) return false;
  const charts = document.querySelectorAll('.polarize-chart');
  for (const chart of charts) {
    const g = chart.querySelector('.js-plotly-plot');
    if (!g || !g._fullLayout || !g.querySelector('.main-svg')) return false;
  }
  return true;
}"""

# JavaScript: what keeps a page from being settled (``SETTLED_JS``), in words, for a failed wait.
UNSETTLED_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const box = document.querySelector('.polarize-viewport');
  const busy = [...document.querySelectorAll('[data-testid="stSpinner"], [data-testid="stSkeleton"]')];
  const charts = [...document.querySelectorAll('.polarize-chart')];
  return JSON.stringify({
    script: app && app.getAttribute('data-test-script-state'),
    title: !!document.querySelector('h1'),
    busy: busy.map((e) => e.textContent.trim().slice(0, 120)),
    viewport: box ? {...box.dataset} : null,
    undrawn: charts.filter((c) => !c.querySelector('.js-plotly-plot .main-svg')).length,
    alerts: [...document.querySelectorAll('[data-testid="stAlert"]')]
      .map((e) => e.textContent.trim().slice(0, 160)),
  });
}"""


# JavaScript: true once the document has loaded but held no Streamlit app for ``APPLESS_POLLS``
# polls in a row (a wait's polls call it, each counted): ``appless_js()``.
_APPLESS_JS = """() => {
  if (!document.querySelector('[data-testid="stApp"]') && document.readyState === 'complete') {
    window.__applessPolls = (window.__applessPolls || 0) + 1;
  } else {
    window.__applessPolls = 0;
  }
  return window.__applessPolls >= %d;
}"""
# JavaScript: one poll of a wait for a settled page (``SETTLED_JS``, three in a row).
SETTLE_POLL_JS = """() => {
  if ((%s)()) return 'vanished';
  window.__settledPolls = (%s)() ? (window.__settledPolls || 0) + 1 : 0;
  return window.__settledPolls >= 3 ? 'settled' : false;
}"""
APPLESS_POLLS = 100
"""Polls of a loaded document without a Streamlit app before a wait calls it vanished (10 s at
``wait_until_settled``'s 100 ms): the app draws its root as soon as its code has run, well within a
second even on a busy machine."""


def appless_js() -> str:
    """JavaScript for a wait's poll: true once the app has vanished (``APPLESS_POLLS`` polls)."""
    return _APPLESS_JS % APPLESS_POLLS


class AppVanished(AssertionError):
    """A page that had loaded holds no Streamlit app (no ``stApp``, no title): the frontend fell over
    or its code never ran; its words (``unsettled``) say what the browser saw.

    Seen on first visits of the Explorer under load: Streamlit's frontend threw "Bad delta path
    index 6 (should be between [0, 3])" and React unmounted the app. That cause, a fragment drawn
    inside another, is gone (``ui.blocks._downloads``, ``tests/browser/test_fragments_browser.py::
    test_no_fragment_is_drawn_inside_another``); the reload stays for whatever else may blank a
    page, said each time."""


def wait_until_settled(page: Any, timeout: float = 120.0, *, reload_vanished: bool = True) -> None:
    """Wait until the page has run, drawn every figure, and has no rerun to come (``SETTLED_JS``).

    Settled in three polls in a row (100 ms apart): a chart drawn at its first width redraws at
    the width Streamlit then gives it, and a script run may start just after another ends. A page
    that does not settle in ``timeout`` seconds fails with what kept it (``UNSETTLED_JS``), and its
    picture is kept in ``test-artifacts/`` (a wait that fails on a busy machine is otherwise a
    mystery). A page whose app vanished (``AppVanished``) is reloaded once, as its visitor would,
    unless ``reload_vanished`` is false; the incident is a warning carrying its words and picture.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        ended = page.wait_for_function(SETTLE_POLL_JS % (appless_js(), SETTLED_JS),
                                       timeout=timeout * 1000, polling=100).json_value()
    except PlaywrightTimeout as waited:
        raise unsettled(page, timeout) from waited
    if ended == "vanished":
        vanished = unsettled(page, timeout, kind=AppVanished)
        if not reload_vanished:
            raise vanished
        warnings.warn(f"reloaded a page whose app vanished: {vanished}", stacklevel=2)
        page.reload()
        wait_until_settled(page, timeout, reload_vanished=False)


def unsettled(page: Any, timeout: float, kind: type[AssertionError] = AssertionError) -> AssertionError:
    """The failure of a wait for ``page``: what kept it (``UNSETTLED_JS``), what the browser saw go
    wrong (``browser_trouble``), and its picture, kept in ``test-artifacts/``."""
    state = page.evaluate(UNSETTLED_JS)
    kept = "has no app" if kind is AppVanished else f"not settled in {timeout:g} s"
    trouble = browser_trouble(page)
    return kind(f"{page.url} {kept}: {state}; {trouble} (picture: {picture(page, 'unsettled')})")


def picture(page: Any, name: str) -> Path:
    """A picture of ``page`` now, kept in ``test-artifacts/`` as ``name-<time>-<process>.png`` (a wait that
    failed on a busy machine is otherwise a mystery); its path."""
    ARTIFACTS.mkdir(exist_ok=True)
    kept = ARTIFACTS / f"{name}-{time.strftime('%H%M%S')}-{os.getpid()}.png"
    page.screenshot(path=str(kept))
    return kept


def browser_trouble(page: Any) -> str:
    """What the browser saw go wrong on ``page``, in one line: its uncaught errors, its console's
    errors and the requests that failed or never finished (Playwright keeps the page's recent ones)."""
    errors = [str(error).splitlines()[0][:200] for error in page.page_errors()]
    console = [m.text[:200] for m in page.console_messages() if m.type == "error"]
    # The page's performance timeline holds the requests it finished.
    finished = set(page.evaluate("() => performance.getEntries().map((e) => e.name)"))
    unfinished = []
    for request in page.requests():
        if request.failure is not None:
            unfinished.append(f"{request.url[-80:]}: {request.failure}")
        elif request.url not in finished and request.resource_type in {"script", "stylesheet", "fetch"}:
            unfinished.append(f"{request.url[-80:]}: no answer")
    text = page.evaluate("() => document.body ? document.body.innerText.trim().slice(0, 200) : null")
    return json.dumps({"errors": errors, "console": console, "requests": unfinished[-10:], "text": text})


# JavaScript: forget what the page's origin stored in this tab (a new visitor has nothing stored).
_FORGET_STORAGE_JS = "() => { try { localStorage.clear(); sessionStorage.clear(); } catch (e) {} }"


class Tabs:
    """A kept tab per view (window size, colour scheme, touch) for a module's tests: each test opens its
    page there (``open``), as a new visitor, instead of in a browser context of its own.

    A new visitor: the context's cookies and the origin's storage are cleared before the tab goes to
    the address, so the page measures its window and runs as on a first visit. Only Chromium's own
    costs are spared: the next page in a kept tab took 1.2 to 2.0 s against 3.5 s for a new context's
    first (a new renderer, Streamlit's and plotly.js's code compiled again; the Explorer and the Rates
    page on a warm server, quiet machine). A test that listens to its page's events, goes offline or
    needs a browser nobody has used (first visits, caches) keeps a context of its own.
    """

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.tabs: dict[tuple, Any] = {}

    def fresh(self, *, width: int = 1280, height: int = 720, scheme: str = "light",
              touch: bool = False) -> Any:
        """The view's tab, in front, for a new visitor: nothing stored (it stays where it was until the
        test goes to its page)."""
        from playwright.sync_api import Error as PlaywrightError

        view = (width, height, scheme, touch)
        tab = self.tabs.get(view)
        if tab is not None:
            try:
                tab.context.clear_cookies()
                tab.evaluate(_FORGET_STORAGE_JS)
            except PlaywrightError:  # a tab a test closed, or left where it cannot be read
                tab.context.close()
                tab = None
        if tab is None:
            context = self.browser.new_context(viewport={"width": width, "height": height},
                                               color_scheme=scheme, has_touch=touch)
            tab = self.tabs[view] = context.new_page()
        tab.bring_to_front()  # a tab behind others gets no animation frames
        return tab

    def open(self, url: str, **view: Any) -> Any:
        """The view's tab (``fresh``) gone to ``url``, not waited for: the test waits for what it needs."""
        tab = self.fresh(**view)
        tab.goto(url)
        return tab

    def close(self) -> None:
        for tab in self.tabs.values():
            tab.context.close()


class Views:
    """Pages opened once per view (window size and colour scheme) for every test of a module that reads
    them, instead of once per test: a page costs its server's run and Chromium's drawing, seconds each.

    ``views(window, paths)`` opens each path not read yet in that view, one after another, in the view's
    one tab (kept for the module, in a browser context of its own: a page opened later there is a
    visitor's next page). A new tab a page costs about three times as much as the next page in the
    same tab (seen here under load: 16 s against 5 for the Sinks page presented), and the layout
    tests' pages opened all at once in tabs of their own took as long (348 s against 369, side by
    side). Each page, brought to the front and settled (``wait_until_settled``), is read by each of
    ``reads`` (what -> a function of the tab) in their order. Returns name -> what -> value. A wait
    that failed fails every later reading of its page there.
    """

    def __init__(self, browser: Any, url: str, reads: dict[str, Any], timeout: float = 300.0):
        self.browser, self.url, self.reads, self.timeout = browser, url, reads, timeout
        self.tabs: dict[tuple, Any] = {}
        self.read: dict[tuple, dict[str, Any] | AssertionError] = {}

    def __call__(self, window: tuple[int, int], paths: dict[str, str], *, scheme: str = "light",
                 shots: Any = None) -> dict[str, dict[str, Any]]:
        """``paths``: name -> the page's path and query; ``shots``: name -> where its picture is kept."""
        view = (*window, scheme)
        if view not in self.tabs:
            context = self.browser.new_context(viewport={"width": window[0], "height": window[1]},
                                               color_scheme=scheme)
            self.tabs[view] = context.new_page()
        tab = self.tabs[view]
        for name, path in paths.items():
            if (*view, path) in self.read:
                continue
            tab.goto(f"{self.url}/{path}")
            tab.bring_to_front()  # a tab behind others gets no animation frames
            try:
                wait_until_settled(tab, timeout=self.timeout)
            except AssertionError as failed:
                self.read[(*view, path)] = failed
                raise
            if shots is not None:
                ARTIFACTS.mkdir(exist_ok=True)
                tab.screenshot(path=str(shots(name)))
            self.read[(*view, path)] = {what: read(tab) for what, read in self.reads.items()}
        seen = {name: self.read[(*view, path)] for name, path in paths.items()}
        for reading in seen.values():
            if isinstance(reading, AssertionError):
                raise reading
        return seen

    def close(self) -> None:
        for tab in self.tabs.values():
            tab.context.close()
