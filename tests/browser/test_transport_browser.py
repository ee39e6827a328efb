"""The transport controls in headless Chromium: keys, the step buttons, and "Keep playing after a change",
in the app and in the offline HTML download opened from disk.

Skipped, with the reason, when Debian's /usr/bin/chromium (or Playwright) is missing.
"""

from __future__ import annotations

import json
import re

import pytest
from support.browser import ARTIFACTS, BROWSER, PLAYING_JS, next_frames, wait_for_figure, wait_until_settled

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

# Null-safe: a predicate that throws (a chart mid-redraw) ends Playwright's wait instead of retrying.
ACTIVE = "() => document.querySelector('.js-plotly-plot')?._fullLayout?.sliders?.[0]?.active"
# The script has started (it keeps its listeners on the page under this name) and the page's plotly is there.
READY = "() => window.__polarizeTransport && window.__polarizeTransport.listeners.keys && window.Plotly"


# Added before the page loads: counts the script's runs that start once a figure has been drawn (each
# would send the figures again) and keeps the first figure drawn, to tell it from a redrawn one.
WATCH_RUNS_JS = """() => {
  window.__runsAfterDraw = 0;
  new MutationObserver(() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const state = app && app.getAttribute('data-test-script-state');
    const chart = document.querySelector('.js-plotly-plot');
    if (chart && !window.__firstChart) window.__firstChart = chart;
    if (state === 'running' && window.__firstChart && state !== window.__lastState) {
      window.__runsAfterDraw += 1;
    }
    window.__lastState = state;
  }).observe(document, {childList: true, subtree: true, attributes: true,
                        attributeFilter: ['data-test-script-state']});
}"""


def _frame(page, wanted: int) -> None:
    page.wait_for_function(f"() => ({ACTIVE})() === {wanted}")


def test_the_offline_html_has_the_keys_and_the_step_buttons(browser, tmp_path):
    from polarize import Experiment, simulate
    from polarize.plots import dashboard
    from polarize.web.export import dashboard_html

    path = tmp_path / "dashboard.html"
    path.write_text(dashboard_html(dashboard(simulate(Experiment(n=4, d=4, horizon=1e3)), frames=20)))
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(path.as_uri())  # file://, no server, no network
        wait_for_figure(page)
        page.wait_for_function(READY)  # the inline script runs in the page itself
        _frame(page, 0)
        page.keyboard.press("ArrowRight")  # no pointer over the figure: the first one in view
        _frame(page, 1)
        page.keyboard.press("ArrowLeft")
        _frame(page, 0)
        page.locator(".updatemenu-button").filter(has_text="Step \u25b6").click()
        _frame(page, 1)
        page.keyboard.press("Space")  # plays from the current frame
        page.wait_for_function(f"() => ({ACTIVE})() > 3")
    finally:
        context.close()


@pytest.mark.parametrize(("path", "size"),
                         [("", (1280, 720)), ("rates", (390, 844)), ("?present=true", (1920, 1080))])
def test_a_key_and_play_pressed_as_the_figure_first_draws_are_kept(server, browser, path, size):
    """The figure is sent once, already fitted to the window: no rerun redraws it after its first draw
    (which took a key or a click pressed in that moment, and the frame it had reached, with it)."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    try:
        page = context.new_page()
        page.add_init_script(f"({WATCH_RUNS_JS})()")
        page.goto(f"{server.url}/{path}")
        page.wait_for_function("() => Boolean(window.__firstChart?._fullLayout?.sliders)")
        page.wait_for_function(READY)
        page.keyboard.press("ArrowRight")  # no pointer over the figure: the first one in view
        _frame(page, 1)
        page.locator(".updatemenu-button").filter(has_text="\u25b6").first.click()  # Play
        page.wait_for_function(f"() => ({ACTIVE})() > 3")
        wait_until_settled(page, timeout=60)  # the window measured, nothing more to post
        assert page.evaluate("window.__runsAfterDraw") == 0
        assert page.evaluate("document.querySelector('.js-plotly-plot') === window.__firstChart")
        assert page.evaluate(ACTIVE) > 3  # where it had played to: not drawn again at the start
    finally:
        context.close()


def test_keys_step_buttons_and_keep_playing(server, tabs):
    page = tabs.open(server.url + "/", height=900)
    before = wait_for_figure(page)
    page.wait_for_function(READY)
    assert page.locator("iframe").count() == 0  # installed by the chart's element: no document of its own
    _frame(page, 0)
    page.mouse.move(500, 400)  # over the dashboard: the keys act on the figure pointed at
    page.keyboard.press("ArrowRight")
    _frame(page, 1)
    page.keyboard.press("ArrowRight")
    _frame(page, 2)
    page.keyboard.press("ArrowLeft")
    _frame(page, 1)
    page.keyboard.press("Space")  # plays from the current frame...
    page.wait_for_function(f"() => ({ACTIVE})() > 3")
    page.keyboard.press("Space")  # ...and pauses
    page.wait_for_function(f"() => !({PLAYING_JS})()")
    paused = page.evaluate(ACTIVE)
    next_frames(page)
    assert page.evaluate(ACTIVE) == paused and not page.evaluate(PLAYING_JS)
    page.keyboard.press("Home")
    _frame(page, 0)
    # The figure's own step buttons (plotly's method "skip", stepped by the script).
    buttons = page.locator(".js-plotly-plot").first.locator(".updatemenu-button")
    buttons.filter(has_text="Step \u25b6").click()
    _frame(page, 1)
    buttons.filter(has_text="\u25c0 Step").click()
    _frame(page, 0)
    # A key typed into a control belongs to it, not to the figure.
    page.get_by_label("Seed", exact=True).press("ArrowRight")  # the script's listener ran in the press
    next_frames(page)  # a frame it showed would be drawn by now
    assert page.evaluate(ACTIVE) == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "transport-1280.png"))
    # Keep playing: after a control changes, the new figure plays by itself.
    page.get_by_text("Keep playing after a change").click()
    page.wait_for_function(f"() => ({ACTIVE})() > 3")
    page.evaluate("() => document.activeElement.blur()")  # the keys are the figure's again
    page.keyboard.press("Home")  # stopped at the start: only playing by itself moves it on
    _frame(page, 0)
    page.get_by_role("button", name="New random start").click()
    wait_for_figure(page, different_from=before)
    page.wait_for_function(f"() => ({ACTIVE})() > 3")


# The main figure's revision and draws (``ui/chart_frontend/chart.js``), and the Seed box.
MAIN_STATE = """() => {
  const g = document.querySelector('.st-key-main_figure .js-plotly-plot');
  const seed = document.querySelector('input[aria-label="Seed"]');
  return {revision: g.dataset.revision, draws: Number(g.dataset.draws), seed: seed && seed.value};
}"""
# The revision of the figure the page holds for the next press (``ui.charts.hold``), once it holds one.
HELD_REVISION = """() => {
  const held = window.__polarizeHeld && [...window.__polarizeHeld.values()][0];
  if (!held) return null;
  const line = held.bytes.subarray(0, held.bytes.indexOf(10));
  return JSON.parse(new TextDecoder().decode(line)).revision;
}"""


def test_a_new_random_start_is_drawn_at_the_press_from_the_figure_held(server, browser):
    """"New random start" draws the next start's figure at the click, from the one the page held for it
    (``ui.charts.hold``: from the page's second run), before the server's rerun reaches the tab (its
    messages are held back here),
    the animation playing then stopped first; then that rerun brings the same figure, and the chart
    draws nothing more: one draw for the press, the Seed box showing the new seed (issue 41)."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    socket, held_back, holding = {}, [], [False]

    def route(ws):  # the app's websocket, its messages to the tab held back while ``holding``
        socket["tab"], to_server = ws, ws.connect_to_server()
        to_server.on_message(lambda message: held_back.append(message) if holding[0] else ws.send(message))

    def release():
        while held_back:  # a message arriving meanwhile joins the queue: the order is kept
            socket["tab"].send(held_back.pop(0))
        holding[0] = False

    try:
        page = context.new_page()
        page.route_web_socket(re.compile(r"/_stcore/stream$"), route)
        page.goto(f"{server.url}/")
        wait_until_settled(page)
        # A first visit holds nothing (``ui.starts.SHOWN``): its first press is drawn from the server's run,
        # which holds the next start's figure.
        shown = page.evaluate(MAIN_STATE)["seed"]
        page.get_by_role("button", name="New random start").click()
        page.wait_for_function(f"() => ({MAIN_STATE})().seed !== {json.dumps(shown)}")
        wait_until_settled(page)
        page.wait_for_function(f"() => ({HELD_REVISION})() !== null")
        held, before = page.evaluate(HELD_REVISION), page.evaluate(MAIN_STATE)
        assert held != before["revision"]
        page.locator(".updatemenu-button").filter(has_text="\u25b6").first.click()  # Play
        page.wait_for_function(PLAYING_JS)
        holding[0] = True
        page.get_by_role("button", name="New random start").click()
        page.wait_for_function(f"() => ({MAIN_STATE})().revision === {json.dumps(held)}")
        drawn = page.evaluate(MAIN_STATE)
        assert drawn["draws"] == before["draws"] + 1 and not page.evaluate(PLAYING_JS)
        assert drawn["seed"] == before["seed"]  # the server's answer is still held back
        release()
        page.wait_for_function(f"() => ({MAIN_STATE})().seed !== {json.dumps(before['seed'])}")
        wait_until_settled(page)
        after = page.evaluate(MAIN_STATE)
        assert after["revision"] == held and after["draws"] == before["draws"] + 1, after
    finally:
        context.close()


# The panel titles of the page's first figure (text and top, px), as the browser drew them.
TITLE_TOPS = """() => [...document.querySelector('.js-plotly-plot').querySelectorAll('g.annotation')]
  .map((a) => [a.textContent, Math.round(a.getBoundingClientRect().top)])"""


@pytest.mark.parametrize(("path", "size", "scheme"), [("sinks", (1280, 720), "light"),
                                                      ("sinks?present=true", (1280, 720), "dark"),
                                                      ("sinks", (390, 844), "dark")],
                         ids=["projector", "presented", "phone"])
def test_the_attention_panels_titles_stay_in_place_as_it_steps(server, tabs, path, size, scheme):
    """After a step the second row's titles jumped 23 px up onto the first row's keys: each frame put
    the titles (its step's sink scores) where the figure was built, not where it was fitted (issue 45)."""
    page = tabs.open(f"{server.url}/{path}", width=size[0], height=size[1], scheme=scheme)
    wait_until_settled(page, timeout=300)
    page.wait_for_function(READY)
    before = page.evaluate(TITLE_TOPS)
    page.locator(".updatemenu-button").nth(2).click()  # Reset: the first step, with its own titles
    _frame(page, 0)
    page.wait_for_function(f"() => JSON.stringify(({TITLE_TOPS})().map((t) => t[0])) !== "
                           f"{json.dumps(json.dumps([text for text, _ in before]))}")
    after = page.evaluate(TITLE_TOPS)
    assert [top for _, top in after] == [top for _, top in before], (before, after)
