"""The first screen (issue 45): what a newcomer and a lecturer see before scrolling, in headless Chromium.

At a projector's 1280 x 720 (normal and presented) and on a 390 x 844 phone: a link's note on what it
changed shows on the first screen without pushing the Explorer's Play button out of it. Positions are
read from the page (bounding boxes), found by the app's own ``st-key-`` containers and by text.
Skipped, with the reason, when Debian's /usr/bin/chromium (or Playwright) is missing.
"""

from __future__ import annotations

import re

import pytest
from support.browser import BROWSER, wait_for_figure, wait_until_settled

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

SIZES = {"projector": (1280, 720, ""), "presented": (1280, 720, "&present=true"), "phone": (390, 844, "")}

# JavaScript: the top and bottom of the main figure's Play button (Plotly's), or null where the figure
# has none (a phone's transport is the page's own, over the figure).
PLAY_JS = """() => {
  const play = [...document.querySelectorAll('.st-key-main_figure .updatemenu-button')]
    .find((b) => b.textContent.includes('Play'));
  if (!play) return null;
  const r = play.getBoundingClientRect();
  return [r.top, r.bottom];
}"""

NOTES = {
    # normalizer=nonsense names no normalizer: softmax runs, and the page says the value was not used.
    "ignored": ("?normalizer=nonsense", re.compile(r"normalizer=nonsense.*could not (use|be used)|"
                                                  r"could not (use|be used).*normalizer=nonsense", re.S)),
    # l2 is undefined at the default start a(0) = 0: the page moves the start and says so.
    "mended": ("?normalizer=l2", re.compile("so the logits now start at")),
}


@pytest.mark.parametrize("note", NOTES)
@pytest.mark.parametrize("size", SIZES)
def test_a_link_s_note_shows_on_the_first_screen_with_play(server, browser, size, note):
    """The link's note (what it could not use, or the move off a dead end) is inside the first
    screen, and so is Play (on a projector): a warning box above the figure pushed Play to 903 px of
    720, and the mend's note sat under the figure at 1141 px (1347 presented, 1905 on a phone)."""
    width, height, mode = SIZES[size]
    address, words = NOTES[note]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        page.goto(f"{server.url}/{address}{mode}")
        wait_for_figure(page, timeout=120)
        wait_until_settled(page)
        shown = page.locator(".st-key-page").get_by_text(words)
        assert shown.count() >= 1, page.locator(".st-key-page").inner_text()[:600]
        box = shown.last.bounding_box()
        assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= height, (size, box)
        play = page.evaluate(PLAY_JS)
        if width > 800:
            assert play is not None and play[1] <= height, f"Play at {play} px of {height}"
    finally:
        context.close()
