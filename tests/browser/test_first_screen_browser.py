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

def _opened(tabs, url: str, width: int, height: int, *, dashboard: bool = True, **view) -> object:
    """A new visitor's ``width`` x ``height`` tab at ``url`` (the module's kept tab for the view:
    ``support.browser.Tabs``), its figure drawn (a dashboard, unless not one) and the page settled."""
    page = tabs.open(url, width=width, height=height, **view)
    if dashboard:
        wait_for_figure(page)
    wait_until_settled(page)
    return page


NOTES = {
    # normalizer=nonsense names no normalizer: softmax runs, and the page says the value was not used.
    "ignored": ("?normalizer=nonsense", re.compile(r"normalizer=nonsense.*could not (use|be used)|"
                                                  r"could not (use|be used).*normalizer=nonsense", re.S)),
    # l2 is undefined at the default start a(0) = 0: the page moves the start and says so.
    "mended": ("?normalizer=l2", re.compile("so the logits now start at")),
}


@pytest.mark.parametrize("note", NOTES)
@pytest.mark.parametrize("size", SIZES)
def test_a_link_s_note_shows_on_the_first_screen_with_play(server, tabs, size, note):
    """The link's note (what it could not use, or the move off a dead end) is inside the first
    screen, and so is Play (on a projector): a warning box above the figure pushed Play to 903 px of
    720, and the mend's note sat under the figure at 1141 px (1347 presented, 1905 on a phone)."""
    width, height, mode = SIZES[size]
    address, words = NOTES[note]
    page = _opened(tabs, f"{server.url}/{address}{mode}", width, height)
    shown = page.locator(".st-key-page").get_by_text(words)
    assert shown.count() >= 1, page.locator(".st-key-page").inner_text()[:600]
    box = shown.last.bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= height, (size, box)
    play = page.evaluate(PLAY_JS)
    if width > 800:
        assert play is not None and play[1] <= height, f"Play at {play} px of {height}"


# JavaScript: the top and bottom (px) of each of the sidebar's controls named (by its label's text),
# of its "New random start" button and of the guided first visit's fold, as the page opens.
SIDEBAR_JS = """(labels) => {
  const box = (e) => { if (!e) return null; const r = e.getBoundingClientRect(); return [r.top, r.bottom]; };
  const controls = document.querySelector('.st-key-controls');
  const labelled = (text) => [...controls.querySelectorAll('label p, label')]
    .find((e) => e.textContent.trim() === text);
  const found = Object.fromEntries(labels.map((text) => [text, box(labelled(text))]));
  found['New random start'] = box(document.querySelector('[data-button="explorer__reseed"]'));
  found.tour = box(document.querySelector('[class*="st-key-tour_"] summary'));
  return found;
}"""
FIRST = ("Tokens n", "Loss", "Normalizer \u03c3", "Seed")
"""The controls a newcomer changes first, in the sidebar's order, then "New random start"."""


def test_the_newcomer_s_controls_and_tour_come_first_in_the_sidebar(server, tabs):
    """At 1280 x 720 the guided first visit's fold shows without scrolling (it started at 1250 px, under
    the figure) and the sidebar starts with tokens, loss, normalizer, seed and New random start, above
    the preset (Tokens n was at 797 px, the normalizer at 1064, the seed at 1533)."""
    page = _opened(tabs, server.url + "/", 1280, 720)
    found = page.evaluate(SIDEBAR_JS, [*FIRST, "Preset", "Horizon (final time)"])
    assert all(found.values()), found
    assert 0 <= found["tour"][0] and found["tour"][1] <= 720, found["tour"]
    tops = [found[name][0] for name in (*FIRST, "New random start", "Preset", "Horizon (final time)")]
    assert tops == sorted(tops), found
    assert found["Tokens n"][1] <= 720, found["Tokens n"]


# JavaScript: whether the Explorer's verdict ("Polarized?" and its answer) shows, and whether the fold
# that keeps it for after Play does.
VERDICT_JS = """() => {
  const shown = (e) => !!e && e.checkVisibility() && e.getBoundingClientRect().height > 0;
  const texts = [...document.querySelectorAll('.st-key-page p, .st-key-page summary')];
  return {verdict: texts.some((e) => e.textContent.trim() === 'Polarized?' && shown(e)),
          fold: texts.some((e) => e.textContent.includes('open after Play') && shown(e))};
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_presented_explorer_keeps_its_verdict_for_after_play(server, tabs, scheme):
    """Presented at 1280 x 720, the Explorer folds its verdict and final numbers until opened (a
    lecturer's reveal): they showed beside the figure before Play. A link that asks for them keeps them."""
    page = _opened(tabs, server.url + "/?present=true", 1280, 720, scheme=scheme)
    assert page.evaluate(VERDICT_JS) == {"verdict": False, "fold": True}
    assert "verdict=after" in page.url  # the address holds what is shown
    page.goto(server.url + "/?present=true&verdict=now")
    wait_for_figure(page)
    wait_until_settled(page)
    assert page.evaluate(VERDICT_JS) == {"verdict": True, "fold": False}


# JavaScript: the main figure's slider step now, and how many steps it has.
STEP_JS = """() => {
  const g = document.querySelector('.st-key-main_figure .js-plotly-plot');
  const slider = g._fullLayout.sliders[0];
  return [slider.active, slider.steps.length];
}"""


@pytest.mark.parametrize("size", ["projector", "phone"])
def test_play_on_the_sinks_page_plays_from_its_first_step(server, tabs, size):
    """Issue 45, item 1: the page opens on its last training step (the trained picture) and Play was
    said to do nothing until Reset; a click on Play plays from the first step on."""
    width, height, _ = SIZES[size]
    page = tabs.open(f"{server.url}/sinks", width=width, height=height, touch=size == "phone")
    wait_until_settled(page, timeout=240)
    _, steps = page.evaluate(STEP_JS)
    assert steps > 2
    buttons = page.locator(".st-key-main_figure .updatemenu-button")
    buttons.filter(has_text=re.compile("^\\s*\u25b6")).first.click()  # Play (a phone's: the icon alone)
    page.wait_for_function(f"() => {{ const [a] = ({STEP_JS})(); return a >= 1 && a < {steps - 1}; }}")


# JavaScript: in the main figure's scores and loss panels (found by the axes ``layout.meta.panels``
# names; the entropy panel's log n line spans it), the rightmost pixel of the drawn curves and of the
# "now" markers.
CURVES_JS = """() => {
  const g = document.querySelector('.st-key-main_figure .js-plotly-plot');
  const found = {};
  for (const key of ['scores', 'loss']) {
    const [x, y] = g.layout.meta.panels[key];
    const panel = g.querySelector(`.cartesianlayer .subplot.${x}${y}`);
    const right = (selector) => Math.max(-1, ...[...panel.querySelectorAll(selector)]
      .map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0 || r.height > 0).map((r) => r.right));
    found[key] = {curves: right('.scatterlayer .trace path.js-line'),
                  now: right('.scatterlayer .trace .points path')};
  }
  return found;
}"""


@pytest.mark.parametrize(("size", "scheme"), [("presented", "light"), ("presented", "dark"),
                                             ("phone", "light")])
def test_a_presented_explorer_draws_its_curves_only_as_far_as_play_has_gone(server, tabs, size, scheme):
    """Issue 45, item 2: with the verdict kept for after Play, the time panels showed the whole run's
    curves before Play (the scores settled on the winner, the entropy at its end). Before Play each
    curve ends at the "now" marker at the start; Play draws them on, to the run's end."""
    width, height, _ = SIZES[size]
    page = _opened(tabs, f"{server.url}/?present=true", width, height, scheme=scheme, touch=size == "phone")
    before = page.evaluate(CURVES_JS)
    for key, drawn in before.items():
        assert drawn["now"] > 0 and drawn["curves"] <= drawn["now"] + 2, (key, before)
    _, steps = page.evaluate(STEP_JS)
    buttons = page.locator(".st-key-main_figure .updatemenu-button")
    buttons.filter(has_text=re.compile("^\\s*\u25b6")).first.click()  # Play (a phone's: the icon alone)
    page.wait_for_function(f"() => ({STEP_JS})()[0] === {steps - 1}")
    after = page.evaluate(CURVES_JS)
    for key, drawn in after.items():
        assert drawn["curves"] >= before[key]["curves"] + 0.3 * width / 4, (key, before, after)


# JavaScript: the boxes of the simplex's corner labels (the digits drawn in its subplot) and of its
# corner markers (the points drawn there in colour), as the page shows them.
CORNERS_JS = """() => {
  const plot = document.querySelector('.st-key-main_figure .js-plotly-plot');
  const layer = plot.querySelector('.cartesianlayer .subplot.xy .scatterlayer');
  const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const labels = [...layer.querySelectorAll('text')].filter((t) => /^\\d+$/.test(t.textContent));
  const markers = [...layer.querySelectorAll('path.point')].filter((p) => {
    const s = getComputedStyle(p);
    return parseFloat(s.opacity) > 0 && parseFloat(s.fillOpacity) > 0 && p.getBoundingClientRect().width >= 6;
  });
  return {labels: labels.map((t) => [t.textContent, box(t)]), markers: markers.map(box)};
}"""


@pytest.mark.parametrize("size", ["phone", "projector"])
def test_the_simplex_s_corner_labels_stand_clear_of_its_markers(server, tabs, size):
    """On a phone the corners' numbers sat on the corners' markers (placed 1.15 times the corner out, in
    data units, in a simplex about 100 px across): each label's box now clears every marker's."""
    width, height, _ = SIZES[size]
    page = _opened(tabs, f"{server.url}/", width, height)
    drawn = page.evaluate(CORNERS_JS)
    assert [text for text, _ in drawn["labels"]] == [str(i) for i in range(8)], drawn
    assert len(drawn["markers"]) >= 8, drawn

    def overlap(a, b):
        return min(a[2], b[2]) - max(a[0], b[0]) > 0.5 and min(a[3], b[3]) - max(a[1], b[1]) > 0.5

    touching = [(text, marker) for text, label in drawn["labels"] for marker in drawn["markers"]
                if overlap(label, marker)]
    assert not touching, touching


# JavaScript: the main figure's top and its legend's top (Plotly's), px from the window's top.
LEGEND_TOP_JS = """() => {
  const plot = document.querySelector('.st-key-main_figure .js-plotly-plot');
  const legend = plot && plot.querySelector('.legend');
  return legend ? [plot.getBoundingClientRect().top, legend.getBoundingClientRect().top] : null;
}"""


@pytest.mark.parametrize("path", ["descent"])
def test_a_presented_grid_s_legend_starts_at_the_top_of_its_figure(server, tabs, path):
    """Presented (the figure wider than with the sidebar), a grid's legend above its panels takes one
    row where it was built for two: the figure kept the second row's room blank above it, 40 to 50 px
    of a projector's 720 lines that its panels now have (Flow vs descent; Normalizers' legend now
    stands beside its panels)."""
    page = _opened(tabs, f"{server.url}/{path}?present=true", 1280, 720, dashboard=False)
    figure_top, legend_top = page.evaluate(LEGEND_TOP_JS)
    assert legend_top - figure_top <= 24, (figure_top, legend_top)
