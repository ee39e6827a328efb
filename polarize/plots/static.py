"""Static images of figures (PNG, SVG) through kaleido and the system's Chromium.

Optional: kaleido is the extra ``polarize[export]`` (a hosted app does not need it),
and it drives a Chromium or Chrome installed on the system. ``polarize reproduce``
and the GIF/MP4 clips (``polarize.clips``) both export through here.

One browser serves every export of the process: kaleido's own functions start a
Chromium for each call (1 to 3 s before the first picture, more on a busy machine) and
close it after. Here it starts at the first export, on a thread of its own, and closes
when it has had nothing to do for ``IDLE_SECONDS`` (a server exporting now and then
keeps no Chromium running) or when the process ends. The app keeps it while it runs
(``start_browser(keep=True)``): its start was most of a first clip's time.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import shutil
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

__all__ = ["IDLE_SECONDS", "TABS", "close_browser", "find_browser", "missing_for_images", "render",
           "start_browser", "write_images"]

TABS = 2
"""Figures drawn at a time (tabs of the one browser): the export halves on two cores."""
IDLE_SECONDS = 120.0
"""The browser closes after this long without an export."""
RENDER_SECONDS = 90.0
"""A figure not drawn in this long fails (kaleido's own limit), and the browser is started again."""
CLOSE_SECONDS = 15.0
"""Longest wait for the browser to close (a stuck one is left to die with the process)."""


def find_browser() -> str | None:
    """A Chromium or Chrome executable for kaleido's static export, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def missing_for_images(browser: str | None) -> str | None:
    """What static export (PNG, SVG) lacks here, as an instruction, or None when it can run.

    Parameters
    ----------
    browser : str or None
        The browser found, ``find_browser()``.
    """
    if importlib.util.find_spec("kaleido") is None:
        return "kaleido is not installed (pip install 'polarize[export]')"
    if browser is None:
        return "no Chromium or Chrome found (apt-get install chromium)"
    return None


class _Browser:
    """A kaleido (one Chromium, ``TABS`` tabs) on an event loop of its own thread, shared by all threads."""

    def __init__(self) -> None:
        import kaleido

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="polarize-kaleido", daemon=True)
        self.thread.start()

        async def start() -> Any:
            # MathJax off: no figure here has TeX, and kaleido would fetch it from a CDN.
            browser = kaleido.Kaleido(n=TABS, mathjax=False, timeout=RENDER_SECONDS)
            await browser.open()
            return browser

        try:
            self.kaleido = self.run(start())
        except BaseException:
            self.loop.call_soon_threadsafe(self.loop.stop)
            raise

    def run(self, work: Coroutine[Any, Any, Any], timeout: float = RENDER_SECONDS * 4) -> Any:
        """Wait for ``work`` on the browser's loop; its result, or its exception raised here."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout=timeout)

    def close(self) -> None:
        try:
            self.run(self.kaleido.close(), timeout=CLOSE_SECONDS)  # not more, at the process's exit
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)


_LOCK = threading.Lock()
_STATE: dict[str, Any] = {"browser": None, "busy": 0, "timer": None, "keep": False}


def _use(work: Any) -> Any:
    """``work(kaleido)`` (a coroutine) on the shared browser, started if need be; once more on a new one.

    A failed call closes the browser (it may have crashed, or not have loaded its page on a
    busy machine), so that the second try, and the next export, start a fresh one.
    """
    try:
        return _once(work)
    except Exception:  # whatever kaleido raised: raised again if it fails twice
        return _once(work)


def _once(work: Any) -> Any:
    with _LOCK:
        if _STATE["timer"] is not None:
            _STATE["timer"].cancel()
        if _STATE["browser"] is None:
            _STATE["browser"] = _Browser()
        browser = _STATE["browser"]
        _STATE["busy"] += 1
    try:
        return browser.run(work(browser.kaleido))
    except Exception:
        with _LOCK:
            if _STATE["browser"] is browser:
                _STATE["browser"] = None
        _close_quietly(browser)
        raise
    finally:
        with _LOCK:
            _STATE["busy"] -= 1
            _close_when_idle()


def _close_when_idle() -> None:
    """Close the browser after ``IDLE_SECONDS`` unless an export comes first (call with ``_LOCK`` held)."""
    if not _STATE["busy"] and _STATE["browser"] is not None and not _STATE["keep"]:
        _STATE["timer"] = threading.Timer(IDLE_SECONDS, _close_if_idle)
        _STATE["timer"].daemon = True
        _STATE["timer"].start()


def _close_quietly(browser: _Browser) -> None:
    try:
        browser.close()
    except Exception:  # a browser that failed may fail to close too; it is dropped
        pass


def _close_if_idle() -> None:
    with _LOCK:
        browser = _STATE["browser"] if not _STATE["busy"] else None
        if browser is not None:
            _STATE["browser"] = None
    if browser is not None:
        _close_quietly(browser)


def start_browser(*, keep: bool = False) -> None:
    """Start the shared browser in the background, if it is not running: for a caller that will
    export after some work of its own (Chromium's start then overlaps that work).

    ``keep``: never close it for being idle, for a process that serves exports now and then (the
    app: Chromium's start was most of a first clip's time).
    """
    with _LOCK:
        _STATE["keep"] = _STATE["keep"] or keep

    def start() -> None:
        with _LOCK:
            if _STATE["browser"] is None:
                try:
                    _STATE["browser"] = _Browser()
                except Exception:  # the export that follows starts one again and says what failed
                    return
                _close_when_idle()

    threading.Thread(target=start, name="polarize-kaleido-start", daemon=True).start()


def close_browser() -> None:
    """Close the shared browser now (it starts again at the next export)."""
    with _LOCK:
        browser, _STATE["browser"] = _STATE["browser"], None
        if _STATE["timer"] is not None:
            _STATE["timer"].cancel()
    if browser is not None:
        _close_quietly(browser)


atexit.register(close_browser)


def render(figure: dict[str, Any], *, format: str, width: int, height: int, scale: float = 1) -> bytes:
    """One figure's image, drawn by the shared browser.

    Parameters
    ----------
    figure : dict
        A plotly figure as a dict.
    format : {"png", "svg"}
    width, height : int
        Layout pixels.
    scale : float
        Image pixels per layout pixel.

    Returns
    -------
    bytes
    """
    opts = dict(format=format, width=width, height=height, scale=scale)
    return _use(lambda kaleido: kaleido.calc_fig(figure, opts=opts))


def write_images(figures: dict[Path, Any]) -> None:
    """Write each figure to its path, the format taken from the path's suffix (``.png``, ``.svg``).

    One batch on the shared browser, ``TABS`` figures at a time.

    Raises
    ------
    RuntimeError
        Naming what kaleido reported for the figures it could not write.
    """
    jobs = [dict(fig=fig.to_dict(), path=path,
                 opts=dict(format=Path(path).suffix.lstrip("."), width=fig.layout.width,
                           height=fig.layout.height, scale=1))
            for path, fig in figures.items()]
    # kaleido returns the figures it failed on, never raises them
    errors = _use(lambda kaleido: kaleido.write_fig_from_object(jobs))
    if errors:
        raise RuntimeError("; ".join(str(error) for error in errors))
