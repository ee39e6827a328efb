"""Helpers to drive the real app in headless Chromium (used by test_browser.py and benchmarks/browser.py).

- ``AppServer``: ``streamlit run app.py`` on a free local port, as a subprocess,
  waited for until it serves, stopped (only that process group) on exit;
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
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
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
    if (meta && meta.n !== undefined && g._transitionData && g._transitionData._frames) {
      const frames = g._transitionData._frames;
      const path = g.data.find(d => d.name === 'whole path');
      return JSON.stringify({n: meta.n, frames: frames.length, traces: g.data.length,
                             last: frames[frames.length - 1].name, t: meta.frame_times.slice(-1)[0],
                             end: path ? [path.x[path.x.length - 1], path.y[path.y.length - 1]] : null});
    }
  }
  return null;
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
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, **(env or {})}
        self.timeout = timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.log = ARTIFACTS / "streamlit.log"

    def __enter__(self) -> AppServer:
        ARTIFACTS.mkdir(exist_ok=True)
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
                raise RuntimeError(f"streamlit exited with {self.process.returncode}; see {self.log}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        self.__exit__(None, None, None)
        raise RuntimeError(f"streamlit did not answer within {self.timeout} s; see {self.log}")

    def __exit__(self, *exc: Any) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


def launch_browser(playwright: Any) -> Any:
    """Headless system Chromium with a fresh profile (``launch`` makes a temporary one)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


def figure_signature(page: Any) -> str | None:
    """The dashboard's signature (JSON text), or None while none is drawn."""
    return page.evaluate(FIGURE_SIGNATURE_JS)


def wait_for_figure(page: Any, *, different_from: str | None = None, timeout: float = 30.0) -> str:
    """Wait until a dashboard is drawn (and, if given, differs from ``different_from``); its signature."""
    page.wait_for_function(
        f"() => {{ const s = ({FIGURE_SIGNATURE_JS})(); return s !== null && s !== {_js(different_from)}; }}",
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


def module_fixtures(sync_api: Any) -> tuple[Any, Any]:
    """Module-scoped pytest fixtures ``server`` (the app, running) and ``browser`` (headless Chromium).

    Use as ``server, browser = module_fixtures(sync_api)`` in a test module, so that
    all its tests share one server and one browser.
    """
    import pytest

    @pytest.fixture(scope="module")
    def server() -> Any:
        with AppServer() as running:
            yield running

    @pytest.fixture(scope="module")
    def browser() -> Any:
        with sync_api.sync_playwright() as playwright:
            chromium = launch_browser(playwright)
            yield chromium
            chromium.close()

    return server, browser
