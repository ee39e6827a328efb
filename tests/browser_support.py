"""Helpers to drive the real app in headless Chromium (used by test_browser.py and benchmarks/browser.py).

- ``AppServer``: ``streamlit run app.py`` on a free local port, as a subprocess, with its own
  log and data folder, waited for until it serves, stopped (only that process group) on exit;
- ``launch_browser``: the system Chromium (Debian's ``/usr/bin/chromium``) through
  Playwright's sync API, headless, with a fresh profile;
- small page helpers: wait for the dashboard, read its signature, set a widget.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
BROWSER = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                       reason=f"{CHROMIUM} is missing (apt-get install chromium)"),
]
"""The marks of every browser test module: ``pytestmark = BROWSER``."""
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
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


# JavaScript: true once the viewport component (ui/viewport_frontend) has measured the page and has
# nothing to post or to measure again: the page will not rerun to fit its figure (which redraws it,
# taking the focus and the elements a test holds). True on a page without the component.
VIEWPORT_SETTLED_JS = """() => {
  const frame = document.querySelector("iframe[title*='viewport']");
  if (!frame) return true;
  const body = frame.contentDocument && frame.contentDocument.body;
  return !!body && body.dataset.measured !== undefined && body.dataset.posted === ''
    && body.dataset.pending === undefined;
}"""


def free_port() -> int:
    """A TCP port on localhost that nobody listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class AppServer:
    """``streamlit run app.py`` on a free port; use as a context manager.

    Parameters
    ----------
    env : mapping, optional
        Extra environment variables for the server.
    timeout : float
        Seconds to wait for the server to answer its health check.
    script : path, optional
        Another script to serve instead of ``app.py`` (run from the repository's root, so it can
        import ``ui``).
    """

    def __init__(self, env: dict[str, str] | None = None, timeout: float = 60.0,
                 script: str | Path = "app.py"):
        self.script = str(script)
        self._take_port()
        # Its own data folder (decks), unless given one: servers started side by side (pytest -n)
        # share nothing, and no test writes to the user's own decks.
        self._data = None if "POLARIZE_DATA_DIR" in (env or {}) else tempfile.TemporaryDirectory()
        data = {} if self._data is None else {"POLARIZE_DATA_DIR": self._data.name}
        self.env = {**os.environ, **data, **(env or {})}
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

    def __exit__(self, *exc: Any) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        if self._data is not None:
            self._data.cleanup()


def launch_browser(playwright: Any) -> Any:
    """Headless system Chromium with a fresh profile (``launch`` makes a temporary one)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


def figure_signature(page: Any) -> str | None:
    """The dashboard's signature (JSON text), or None while none is drawn."""
    return page.evaluate(FIGURE_SIGNATURE_JS)


def wait_for_figure(page: Any, *, different_from: str | None = None, timeout: float = 30.0) -> str:
    """Wait until a dashboard is drawn (and, if given, differs from ``different_from``), and the page
    will not rerun to fit it (``VIEWPORT_SETTLED_JS``); its signature."""
    page.wait_for_function(
        f"""() => {{ const s = ({FIGURE_SIGNATURE_JS})();
                    return s !== null && s !== {_js(different_from)} && ({VIEWPORT_SETTLED_JS})(); }}""",
        timeout=timeout * 1000, polling=25,
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
    """The option a sidebar select box shows.

    Newer Streamlit selects are searchable inputs holding the option as their value; older ones
    (1.52, the floor) leave the input empty and show the option as text beside it.
    """
    box = page.get_by_role("combobox", name=label)
    shown = box.input_value()
    if shown:
        return shown
    container = page.locator('[data-testid="stSelectbox"]').filter(has=box)
    return container.inner_text().strip().splitlines()[-1].strip()


def slider_value(page: Any, label: str) -> str:
    """The value a sidebar slider shows (its ``aria-valuetext``)."""
    return page.get_by_role("slider", name=label).get_attribute("aria-valuetext")


SHARED_SERVER_ENV = {"POLARIZE_APP_TIMEOUT": "180"}
"""The shared server's settings: ten pages run at once on a small machine (``test_layout_browser``),
so a generous time limit lets each draw its figures."""


def module_fixtures(sync_api: Any) -> tuple[Any, Any]:
    """Pytest fixtures ``server`` (the app, running) and ``browser`` (headless Chromium).

    Use as ``server, browser = module_fixtures(sync_api)`` in a test module. The server is the
    session's (conftest's ``shared_server``): every module that asks shares it, started once
    (once per process under ``pytest -n``). A module that needs a server nobody has used yet
    takes ``fresh_server_fixture()`` instead. The browser is the module's (``browser_fixture``).
    """
    import pytest

    @pytest.fixture
    def server(shared_server: AppServer) -> AppServer:
        return shared_server

    return server, browser_fixture(sync_api)


def fresh_server_fixture(**kwargs: Any) -> Any:
    """A module-scoped pytest fixture ``server``: the app on its own, new server (``AppServer(**kwargs)``)."""
    import pytest

    @pytest.fixture(scope="module")
    def server() -> Any:
        with AppServer(**kwargs) as running:
            yield running

    return server


def browser_fixture(sync_api: Any) -> Any:
    """A module-scoped pytest fixture ``browser``: headless Chromium, shared by a module's tests.

    Module-scoped, not the session's: Playwright's sync API holds the thread's event loop while it
    runs, which would break any later test that runs one of its own (``asyncio.run``).
    """
    import pytest

    @pytest.fixture(scope="module")
    def browser() -> Any:
        with sync_api.sync_playwright() as playwright:
            chromium = launch_browser(playwright)
            yield chromium
            chromium.close()

    return browser


# ---- layout: what overlaps, what is cut off ---------------------------------------------------------

# JavaScript: true once the page has settled: the script is not running, the viewport component
# has nothing more to post (its assumption holds), no spinner shows, and every Plotly figure on the
# page is drawn.
SETTLED_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const title = document.querySelector('h1');
  if (!title || !title.checkVisibility()) return false;
  if (document.querySelector('[data-testid="stSpinner"], [data-testid="stSkeleton"]')) return false;
  if (!(""" + VIEWPORT_SETTLED_JS + """)()) return false;
  const charts = document.querySelectorAll('[data-testid="stPlotlyChart"]');
  for (const chart of charts) {
    const g = chart.querySelector('.js-plotly-plot');
    if (!g || !g._fullLayout || !g.querySelector('.main-svg')) return false;
  }
  return true;
}"""

# JavaScript: every pair of visible text boxes (and buttons) of a Plotly figure that intersect by
# more than TOL px both ways, a legend entry under the chart's toolbar (shown on hover), every text
# box that sticks out of its figure, every figure wider than
# its place, Streamlit text cut off by its box, a sidebar over the page, and a page wider than the window.
LAYOUT_PROBLEMS_JS = """(tol) => {
  const problems = [];
  // Plotly names a subplot's axes after it (x2tick, y3title) and a second legend legend2text.
  const TEXT = ['.gtitle', 'text[class$="title"]', 'g[class$="tick"] > text', '.annotation-text',
                'text[class^="legend"][class$="text"]', '.slider-label', '.slider-container text',
                '.updatemenu-button', '.cbtitle text', '.colorbar text', '.textpoint text'].join(', ');
  const shown = (el) => {
    if (!el.checkVisibility({opacityProperty: true, visibilityProperty: true})) return false;
    for (let e = el; e && e.tagName !== 'svg'; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (parseFloat(s.opacity) === 0) return false;
    }
    const s = getComputedStyle(el);
    if (el.tagName === 'text' || el.tagName === 'tspan') {
      const fill = s.fill;
      if (fill === 'none' || /rgba\\(.*,\\s*0\\)$/.test(fill) || parseFloat(s.fontSize) <= 2) return false;
      if (!el.textContent.trim()) return false;
    }
    return true;
  };
  const name = (el) => {
    const kind = el.classList.contains('updatemenu-button') ? 'button'
      : (el.getAttribute('class') || el.parentElement.getAttribute('class') || el.tagName).split(' ')[0];
    return `${kind} "${el.textContent.trim().slice(0, 40)}"`;
  };
  const cross = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > tol
                        && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > tol;
  document.querySelectorAll('[data-testid="stPlotlyChart"]').forEach((chart, p) => {
    const g = chart.querySelector('.js-plotly-plot');
    const keyed = chart.closest('[class*="st-key-"]');
    const key = keyed && [...keyed.classList].find((c) => c.startsWith('st-key-'));
    const title = key ? key.slice(7) : `figure ${p + 1}`;
    const svg = g.querySelector('.main-svg');
    const outer = svg.getBoundingClientRect();
    const place = chart.getBoundingClientRect();
    if (outer.width > place.width + tol) {
      const wide = `${Math.round(outer.width)} px wide in a ${Math.round(place.width)} px place`;
      problems.push(`${title} is ${wide}`);
    }
    const items = [...g.querySelectorAll(TEXT)].filter(shown)
      .map((el) => ({el, r: el.getBoundingClientRect()}))
      .filter(({r}) => r.width >= 1 && r.height >= 1);
    for (const {el, r} of items) {
      if (r.left < outer.left - tol || r.right > outer.right + tol || r.top < outer.top - tol
          || r.bottom > outer.bottom + tol) {
        problems.push(`${title}: ${name(el)} is cut off by the figure's edge`);
      }
    }
    // The chart's toolbar shows on hover at the figure's top right: never over a legend entry.
    const bar = g.querySelector('.modebar-container .modebar');
    const barBox = bar && getComputedStyle(bar.parentElement).display !== 'none'
                   && bar.getBoundingClientRect();
    if (barBox && barBox.width > 0) {
      for (const el of g.querySelectorAll('.legendtext')) {
        if (shown(el) && cross(barBox, el.getBoundingClientRect())) {
          problems.push(`${title}: the chart's toolbar covers ${name(el)}`);
        }
      }
    }
    for (let i = 0; i < items.length; i++) {
      for (let j = i + 1; j < items.length; j++) {
        const a = items[i], b = items[j];
        if (a.el.contains(b.el) || b.el.contains(a.el)) continue;
        if (cross(a.r, b.r)) problems.push(`${title}: ${name(a.el)} overlaps ${name(b.el)}`);
      }
    }
  });
  // Labels and buttons too: a button's label is cut with an ellipsis by its markdown box, not its text.
  const cut = ['[data-testid="stMetricValue"] div', '[data-testid="stMetricLabel"] p',
               '[data-testid="stBaseButton-secondary"] p', 'button[kind] p', 'h1 span', 'h2 span',
               'button .stMarkdownEllipsis', '[data-testid="stWidgetLabel"] p',
               '[data-testid="stCaptionContainer"]'];
  for (const el of document.querySelectorAll(cut.join(', '))) {
    // A collapsed sidebar (a phone's) lays its buttons out 0 px wide, off-screen: not cut off.
    const bar = el.closest('[data-testid="stSidebar"]');
    if (el.clientWidth === 0 || (bar && bar.getBoundingClientRect().right <= 1)) continue;
    if (el.checkVisibility() && el.scrollWidth > el.clientWidth + tol) {
      const text = el.textContent.trim().slice(0, 40);
      problems.push(`"${text}" is cut off (${el.scrollWidth} px in ${el.clientWidth})`);
    }
  }
  const sidebar = document.querySelector('[data-testid="stSidebar"]');  // collapsed: 0 px wide
  const content = document.querySelector('[data-testid="stMainBlockContainer"]');
  if (sidebar && content && cross(sidebar.getBoundingClientRect(), content.getBoundingClientRect())) {
    problems.push('the sidebar covers the page');
  }
  const main = document.querySelector('[data-testid="stMain"]') || document.documentElement;
  if (main.scrollWidth > main.clientWidth + tol) {
    problems.push(`the page scrolls sideways (${main.scrollWidth} px in ${main.clientWidth})`);
  }
  return [...new Set(problems)];
}"""


def wait_until_settled(page: Any, timeout: float = 120.0) -> None:
    """Wait until the page has run, drawn every figure, and has no rerun to come (``SETTLED_JS``).

    Settled in three polls in a row (100 ms apart): a chart drawn at its first width redraws at
    the width Streamlit then gives it, and a script run may start just after another ends.
    """
    page.wait_for_function(
        f"""() => {{
          window.__settledPolls = ({SETTLED_JS})() ? (window.__settledPolls || 0) + 1 : 0;
          return window.__settledPolls >= 3;
        }}""", timeout=timeout * 1000, polling=100)


def layout_problems(page: Any, tolerance: float = 2.0) -> list[str]:
    """What overlaps or is cut off on the page now (``LAYOUT_PROBLEMS_JS``), one line each."""
    return page.evaluate(LAYOUT_PROBLEMS_JS, tolerance)


# ---- presentation mode: every figure and its controls on one screen --------------------------------

# JavaScript: where the page's figures fall short of one screen each: a figure taller or wider than
# the window, or one of its controls (buttons, slider rail and grip, the time counter) outside the
# window once the figure is scrolled to the window's top (at the page's top: ``scroll`` false);
# and a sidebar not collapsed.
FIT_PROBLEMS_JS = """([tol, scroll]) => {
  const problems = [];
  const W = window.innerWidth, H = window.innerHeight;
  const CONTROLS = '.updatemenu-button, .slider-rail-rect, .slider-grip-rect, '
    + '.slider-group > text.slider-label';
  const sidebar = document.querySelector('[data-testid="stSidebar"]');
  if (sidebar && sidebar.getAttribute('aria-expanded') !== 'false'
      && sidebar.getBoundingClientRect().right > tol) problems.push('the sidebar is not collapsed');
  document.querySelectorAll('[data-testid="stPlotlyChart"]').forEach((chart, p) => {
    const keyed = chart.closest('[class*="st-key-"]');
    const key = keyed && [...keyed.classList].find((c) => c.startsWith('st-key-'));
    const title = key ? key.slice(7) : `figure ${p + 1}`;
    const svg = chart.querySelector('.js-plotly-plot .main-svg');
    if (scroll) svg.scrollIntoView({block: 'start', behavior: 'instant'});
    const f = svg.getBoundingClientRect();
    if (f.height > H + tol) problems.push(`${title} is ${Math.round(f.height)} px tall in a ${H} px window`);
    if (f.left < -tol || f.right > W + tol) problems.push(`${title} sticks out sideways`);
    const controls = [...chart.querySelectorAll(CONTROLS)].filter((e) => e.checkVisibility())
      .map((e) => ({e, r: e.getBoundingClientRect()})).filter(({r}) => r.width > 0 && r.height > 0);
    for (const {e, r} of controls) {
      const kind = (e.getAttribute('class') || '').split(' ')[0];
      const what = `${title}: ${kind} "${e.textContent.trim().slice(0, 20)}"`;
      if (r.left < Math.max(f.left, 0) - tol || r.right > Math.min(f.right, W) + tol
          || r.top < Math.max(f.top, 0) - tol || r.bottom > Math.min(f.bottom, H) + tol) {
        problems.push(`${what} is outside the window or its figure (${Math.round(r.bottom)} px of ${H})`);
      }
    }
  });
  if (scroll) window.scrollTo(0, 0);
  return problems;
}"""


def fit_problems(page: Any, tolerance: float = 2.0, *, scroll: bool = True) -> list[str]:
    """Where the page's figures do not fit one screen each (``FIT_PROBLEMS_JS``), one line each.

    With ``scroll`` each figure is scrolled to the window's top first (the page is left scrolled);
    without, the page is measured as it is (at its top, the first figure's controls must show).
    """
    return page.evaluate(FIT_PROBLEMS_JS, [tolerance, scroll])


# ---- the page's main figure and its transport, inside the window together ----------------------------

# JavaScript: where the page's main figure (its first chart) and its Play button, slider and time
# counter are not inside the window together. As the page opens (``at_top``) or scrolled by the
# least that shows the figure (or, with ``whole`` false, its controls); null when the figure does not
# play (no buttons). The page is left at its top.
MAIN_FIGURE_JS = """([tol, atTop, whole]) => {
  const H = window.innerHeight, W = window.innerWidth;
  const chart = document.querySelector('[data-testid="stPlotlyChart"]');
  const svg = chart && chart.querySelector('.js-plotly-plot .main-svg');
  const shown = (selector) => svg
    ? [...chart.querySelectorAll(selector)].find((e) => e.checkVisibility()) : null;
  // The time counter is the slider's first label, its own child (the steps' labels are grouped).
  const parts = {Play: shown('.updatemenu-button'), slider: shown('.slider-rail-rect'),
                 time: shown('.slider-group > text.slider-label')};
  if (!parts.Play) return null;
  if (whole) parts.figure = svg;
  if (!atTop) (whole ? svg : parts.Play).scrollIntoView({block: 'nearest', behavior: 'instant'});
  if (!atTop && !whole) parts.slider.scrollIntoView({block: 'nearest', behavior: 'instant'});
  const problems = [];
  for (const [what, element] of Object.entries(parts)) {
    if (!element) { problems.push(`no ${what} shows`); continue; }
    const r = element.getBoundingClientRect();
    if (r.top < -tol || r.bottom > H + tol || r.left < -tol || r.right > W + tol) {
      const span = `${Math.round(r.top)} to ${Math.round(r.bottom)} px of ${H}`;
      problems.push(`the ${what} is outside the window (${span})`);
    }
  }
  const main = document.querySelector('[data-testid="stMain"]');
  if (main) main.scrollTo(0, 0);
  window.scrollTo(0, 0);
  return problems;
}"""


def main_figure_problems(page: Any, *, at_top: bool = False, whole: bool = True,
                         tolerance: float = 2.0) -> list[str] | None:
    """Where the page's main figure and its Play button, slider and time are not in the window together.

    Parameters
    ----------
    at_top : bool
        Measured as the page opens; otherwise scrolled by the least that shows the figure.
    whole : bool
        The figure too, not only its controls (a phone's stacked panels are taller than its window).

    Returns
    -------
    list of str or None
        One line a problem; None when the page's first figure does not play.
    """
    return page.evaluate(MAIN_FIGURE_JS, [tolerance, at_top, whole])
