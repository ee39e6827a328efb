"""The Explorer's clip in headless Chromium: made when asked, its progress shown as it is drawn, then
offered for download (issue 21: a greyed button with a spinner for 20 s before).

Skipped, with the reason, when Debian's /usr/bin/chromium, Playwright or the animate extra is missing.
"""

from __future__ import annotations

import time

import pytest
from support.browser import BROWSER, wait_for_figure

from polarize.clips import animate

pytestmark = [*BROWSER, pytest.mark.skipif(not animate.available(".gif"), reason="needs the animate extra")]
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
BARS = "() => [...document.querySelectorAll('[data-testid=\"stProgress\"]')].map(bar => bar.innerText)"


def test_the_gif_is_made_with_a_progress_bar_then_downloaded(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(f"{server.url}/?n=4&d=4&horizon=1000")
        wait_for_figure(page)
        page.get_by_role("button", name="Make clip (GIF)", exact=True).click()
        download = page.get_by_role("button", name="Clip (GIF)", exact=True)
        seen: list[str] = []
        deadline = time.monotonic() + 180
        while not download.count() and time.monotonic() < deadline:
            # Read at once in the page: a bar found by one call may be gone by the next (a quick clip).
            seen += page.evaluate(BARS)
            time.sleep(0.1)
        frames = [text for text in seen if text.startswith("Frame ")]
        assert frames, f"no frame was reported while the clip was made; the bar said {sorted(set(seen))}"
        with page.expect_download() as info:
            download.click()
        path = tmp_path / "clip.gif"
        info.value.save_as(path)
        assert info.value.suggested_filename == "polarize-n4-logistic-softmax-flow-seed0.gif"
        assert path.read_bytes()[:6] == b"GIF89a"
        assert not page.locator('[data-testid="stProgress"]').count()  # the bar goes with the rerun
    finally:
        page.close()
