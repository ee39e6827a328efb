"""The Sweeps page in headless Chromium: each shipped example at 1280 x 720 and 390 x 844, and presented.

The same checks as every page's (``support.layout.layout_problems``, ``fit_problems``), for this
page alone, plus: no warning shown and every figure drawn. Skipped, with the reason, when Debian's
/usr/bin/chromium (or Playwright) is missing.
"""

from __future__ import annotations

import pytest
from support.browser import (
    ARTIFACTS,
    BROWSER,
    wait_until_settled,
)
from support.layout import fit_problems, layout_problems

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

VIEWS = {"projector": ((1280, 720), ""), "phone": ((390, 844), ""), "present": ((1280, 720), "&present=true")}


@pytest.mark.parametrize("view", VIEWS)
def test_the_sweeps_page_opens_on_every_example_cleanly(server, browser, view):
    (width, height), extra = VIEWS[view]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    found = {}
    try:
        for example in ("runs", "ensemble", "sinks"):
            page.goto(f"{server.url}/sweeps?sweep=example-{example}{extra}")
            wait_until_settled(page, timeout=240)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"sweeps-{view}-{example}.png"), full_page=True)
            problems = layout_problems(page) + (fit_problems(page) if extra else [])
            charts = page.locator(".polarize-chart").count()
            if charts < (1 if example == "ensemble" else 2):
                problems.append(f"{charts} figures drawn")
            alerts = page.locator("[data-testid='stAlert']").all_inner_texts()
            problems += [f"shows: {text}" for text in alerts]
            found[example] = problems
    finally:
        context.close()
    report = [f"{name}: {line}" for name, lines in found.items() for line in lines]
    assert not report, f"{len(report)} problems ({view}):\n" + "\n".join(report)
