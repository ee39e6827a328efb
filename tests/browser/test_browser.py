"""End to end: the real app (streamlit run) in headless Chromium, driven by Playwright.

Skipped, with the reason, when Debian's /usr/bin/chromium (or Playwright) is missing.
Screenshots go to test-artifacts/ (ignored by git).
"""

from __future__ import annotations

import json
import re
import time
import urllib.request

import pytest
from support.browser import (
    ARTIFACTS,
    BROWSER,
    selectbox_value,
    slider_value,
    wait_for_figure,
    wait_until_settled,
)
from support.wire import listen

from polarize import Experiment

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")




@pytest.fixture
def page(tabs):
    """A new visitor's tab at 1920 x 1080 (``support.browser.Tabs``)."""
    return tabs.fresh(width=1920, height=1080)


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_root_shows_the_dashboard_with_its_play_button(server, page):
    page.goto(server.url + "/")
    signature = json.loads(wait_for_figure(page))
    assert signature["n"] == 8 and signature["frames"] >= 60
    buttons = page.locator(".js-plotly-plot .updatemenu-button")
    assert buttons.count() >= 2
    assert "Play" in buttons.first.text_content()
    # The numbers under the figure arrive after it (the chart element draws as soon as it is sent).
    page.get_by_text("Polarized?").wait_for(state="visible")
    # Play moves the time slider: the animation runs in the browser, no rerun needed.
    buttons.first.click()
    page.wait_for_function(
        "() => { const g = document.querySelector('.js-plotly-plot'); "
        "return g._fullLayout.sliders[0].active > 3; }")
    shot(page, "explorer-default")


def test_the_explorer_opens_at_its_own_name_too(server, page):
    """``/explorer`` (the page's name, as in the menu's other addresses) opens the Explorer with the
    link's settings, as the root does: no "Page not found" dialog."""
    page.goto(server.url + "/explorer?n=5")
    signature = json.loads(wait_for_figure(page))
    assert signature["n"] == 5
    wait_until_settled(page)
    assert not page.get_by_text("Page not found").count()
    assert page.get_by_text("Polarized?").is_visible()


def test_changing_n_redraws_the_figure(server, page):
    page.goto(server.url + "/")
    before = wait_for_figure(page)
    thumb = page.get_by_role("slider", name="Tokens n")
    thumb.focus()
    start = time.perf_counter()
    thumb.press("ArrowRight")
    after = json.loads(wait_for_figure(page, different_from=before))
    assert after["n"] == 9, after
    assert time.perf_counter() - start < 10
    page.wait_for_function("() => window.location.search.includes('n=9')")


def test_a_shared_link_reproduces_its_settings(server, page):
    page.goto(server.url + "/?n=5&seed=3&loss=square&horizon=1000&V_init=nope&utm_source=x")
    signature = json.loads(wait_for_figure(page))
    assert signature["n"] == 5 and signature["t"] == 1000
    assert slider_value(page, "Tokens n") == "5"
    assert page.get_by_role("spinbutton", name="Seed").input_value() == "3"
    assert selectbox_value(page, "Loss") == "square"
    assert page.get_by_text("could not be used").is_visible()  # the value it could not use is reported
    assert page.get_by_text("V_init=nope").is_visible()
    assert not page.get_by_text("utm_source").count()  # a parameter that is not ours: not reported
    shot(page, "explorer-shared-link")
    # The configuration download is made on click, and reproduces this run with polarize run.
    with page.expect_download() as download:
        page.get_by_role("button", name="Configuration (JSON)").click()
    config = Experiment.from_json(download.value.path().read_text())
    assert (config.n, config.seed, config.loss, config.horizon) == (5, 3, "square", 1000.0)
    assert config.V0 is not None  # the drawn arrays are written in


@pytest.mark.parametrize("size", [(1280, 720), (390, 844)], ids=["projector", "phone"])
def test_a_link_typed_in_other_case_runs_its_choice_and_names_it(server, tabs, size):
    """``normalizer=L2`` (keys are lower case) ran softmax under a note that pushed Play off a projector's
    screen; now it runs L2, says so in the title and lead by its label, and notes nothing."""
    page = tabs.open(server.url + "/?normalizer=L2&loss=Logistic", width=size[0], height=size[1])
    wait_for_figure(page)
    wait_until_settled(page)
    title = page.locator("h1").first.inner_text()
    assert title == "Explorer: does L2: a\u00b2 / sum a\u00b2 polarize?", title
    assert page.get_by_text("in place of softmax").is_visible()
    assert not page.get_by_text("could not be used").count()
    assert selectbox_value(page, "Loss") == "logistic"


# JavaScript: each metric's value (Streamlit's ``stMetric`` element) and its text's width against the
# box that shows it (cut with an ellipsis when wider): [label, value, text px, box px].
METRIC_WIDTHS_JS = """() => [...document.querySelectorAll('.stMetric')].map((metric) => {
  const boxes = metric.querySelectorAll('.stMarkdownEllipsis');
  const value = boxes[boxes.length - 1];
  const text = document.createRange();
  text.selectNodeContents(value);
  return [boxes[0].textContent.trim(), value.textContent.trim(),
          text.getBoundingClientRect().width, value.clientWidth];
})"""


@pytest.mark.parametrize("size", [(1280, 720), (390, 844)], ids=["projector", "phone"])
def test_words_name_the_chosen_normalizer_by_its_label_and_no_value_is_cut(server, tabs, size):
    """Under L2 (issue 45, item 4) no sentence on the page names it by its key 'l2' (the replicator
    caption said 'under l2'), the fitness caption does not describe softmax's logits as this run's,
    and every metric's value fits its box: L2's default run ends with 1 - max s = 0.000234 and a loss
    of 9.91e-06, shown as "0.000..." and "9.91e..." at 1280 x 720."""
    page = tabs.fresh(width=size[0], height=size[1])
    for address in ("/?normalizer=l2", "/?normalizer=l2&repulsion=replicator"):
        page.goto(server.url + address)
        wait_for_figure(page)
        wait_until_settled(page)
        words = page.evaluate("() => document.body.innerText")
        assert not re.search(r"\bl2\b", words), re.findall(r".{60}\bl2\b.{20}", words)
        assert "under L2" in words and "Softmax moves the logits" not in words
        metrics = page.evaluate(METRIC_WIDTHS_JS)
        assert len(metrics) >= 6, metrics
        cut = [m for m in metrics if m[2] > m[3] + 1]
        assert not cut, f"values cut by their box ([label, value, text px, box px]): {cut}"
        values = {label: value for label, value, *_ in metrics}
        one_minus_max = float(values["1 \u2212 max s"])
        assert 1e-4 < one_minus_max < 1e-3 and 1e-6 < float(values["Final loss"]) < 1e-5


def test_the_exported_dashboard_plays_offline(browser, tmp_path):
    from polarize.web import export
    from polarize.web.pages import explorer

    view = explorer.explore(Experiment(n=4, d=4), frames=30)
    path = tmp_path / "dashboard.html"
    path.write_text(export.dashboard_html(view.plots()[0].figure))
    context = browser.new_context(offline=True, viewport={"width": 1600, "height": 900})
    page = context.new_page()
    page.goto(path.as_uri())
    assert json.loads(wait_for_figure(page))["n"] == 4
    page.locator(".updatemenu-button").first.click()
    page.wait_for_function(
        "() => document.querySelector('.js-plotly-plot')._fullLayout.sliders[0].active > 3")
    context.close()



# JavaScript: mark the main figure's chart element (its box, ``.polarize-chart``) and count the draws of
# its figures from now on (plotly.js's calls that draw a figure or change it).
MARK_MAIN_FIGURE_JS = """() => {
  document.querySelector('.st-key-main_figure .polarize-chart').__polarizeMarked = true;
  window.__mainDraws = 0;
  for (const name of ['newPlot', 'react', 'relayout', 'restyle', 'update']) {
    const call = window.Plotly[name];
    window.Plotly[name] = function (gd, ...rest) {
      if (gd.closest && gd.closest('.st-key-main_figure')) window.__mainDraws += 1;
      return call.call(this, gd, ...rest);
    };
  }
}"""


def test_a_new_random_start_redraws_the_same_chart_in_place_once(server, page):
    """The chart element is kept and updates its figure (``Plotly.react``, ``ui.charts``): a rerun with
    the same figure ("Reset to preset" on the preset's own values) draws nothing; after "New random
    start" the main figure is a new one, in the same chart element, drawn once (``st.plotly_chart``
    made a new element for a changed figure and drew it twice). The figure before it is kept aside by
    the element, to be put back if it comes again (``chart.js``)."""
    wire = listen(page)
    page.goto(server.url + "/")
    before = wait_for_figure(page)
    wait_until_settled(page)
    page.evaluate(MARK_MAIN_FIGURE_JS)
    runs = wire.full_runs
    page.get_by_role("button", name="Reset to preset").click()  # the page shows the preset already
    deadline = time.monotonic() + 60
    while wire.full_runs == runs:  # the tab's frames are counted while it waits
        assert time.monotonic() < deadline, "Reset to preset ran no script"
        page.wait_for_timeout(50)
    wait_until_settled(page)
    assert page.evaluate("() => window.__mainDraws") == 0 and wait_for_figure(page) == before
    page.get_by_role("button", name="New random start").click()
    after = wait_for_figure(page, different_from=before)
    wait_until_settled(page)
    assert json.loads(after)["end"] != json.loads(before)["end"]  # a new run's figure
    assert page.evaluate("() => document.querySelector('.st-key-main_figure .polarize-chart')"
                         ".__polarizeMarked === true"), "the figure was drawn in a new chart element"
    assert page.evaluate("() => window.__mainDraws") == 1


# JavaScript: the page's fetches of plotly.js (resource timing), and when the main figure's chart was
# first seen (``__mainChartAt``, kept by ``FIRST_CHART_JS`` from the navigation on).
PLOTLY_FETCHES_JS = """() => performance.getEntriesByType('resource')
  .filter((e) => /plotly[^/]*\\.js$/.test(new URL(e.name).pathname))
  .map((e) => ({url: e.name, start: e.startTime, transfer: e.transferSize, body: e.encodedBodySize}))"""
FIRST_CHART_JS = """
window.__mainChartAt = null;
new MutationObserver(() => {
  if (window.__mainChartAt === null && document.querySelector('.st-key-main_figure .js-plotly-plot'))
    window.__mainChartAt = performance.now();
}).observe(document, {childList: true, subtree: true});
"""


def test_plotly_js_is_the_apps_own_fetched_once_per_tab_early_and_kept_by_the_browser(server, browser):
    """plotly.js at the version the plotly package ships (the figures' schema), its cartesian bundle,
    comes from the app itself (``ui.plotly_js``). A new browser's first tab fetches it once, by its
    address, asked for before the main figure's chart exists (while the page computes); the app's server
    sends it gzipped once (the packed file's very bytes, never compressed again per request: about
    0.5 MB). The bundle is the version said and draws the trace types ``TRACES`` says, no fewer. The
    browser's next tab loads it from its cache, by the same address (so V8 keeps its compiled code),
    downloading nothing."""
    import gzip

    from ui import plotly_js

    plain = f"{server.url}/{plotly_js.ADDRESS}"
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.add_init_script(FIRST_CHART_JS)
    loaded = "() => document.querySelector('script[data-polarize=plotly]').src"
    try:
        fetches = []
        for _ in range(2):
            tab = context.new_page()
            asked = []
            tab.on("request", lambda r, asked=asked: asked.append(r.url) if ".js" in r.url
                   and "plotly" in r.url.rsplit("/", 1)[-1] else None)
            tab.goto(server.url + "/")
            wait_for_figure(tab)
            wait_until_settled(tab)
            assert asked == [plain] and tab.evaluate(loaded) == plain, asked
            fetched = tab.evaluate(PLOTLY_FETCHES_JS)
            assert fetched[0]["start"] < tab.evaluate("() => window.__mainChartAt")
            fetches.append(fetched)
            schema = "() => [Plotly.version, Object.keys(Plotly.PlotSchema.get().traces)]"
            version, traces = tab.evaluate(schema)
            assert version == plotly_js.VERSION and plotly_js.TRACES <= set(traces), (version, traces)
        (first,), second = fetches
        asked_gzip = urllib.request.Request(plain, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(asked_gzip, timeout=60) as reply:
            assert reply.headers.get("Content-Encoding") == "gzip"
            sent = reply.read()
        shipped = plotly_js.SOURCE.read_bytes()
        assert gzip.decompress(sent) == shipped
        assert sent == (plotly_js.STATIC / plotly_js.PACKED).read_bytes()  # packed once, sent as it is
        assert first["url"] == plain and 2e5 < first["transfer"] < len(shipped) / 2  # gzipped: about 0.5 MB
        assert all(f["url"] == plain and f["transfer"] < 1e4 for f in second), second  # cache (or a 304)
    finally:
        context.close()


BASIN_POINT_JS = """(k) => {
  for (const gd of document.querySelectorAll('.js-plotly-plot')) {
    const trace = (gd.data || []).find(t => t.name === 'start, coloured by its winner');
    if (!trace || !gd._fullLayout) continue;
    // While the page redraws, the run's trace can be missing for a moment: say so, do not throw.
    const found = gd.data.find(t => t.name === 'the run from the chosen start');
    const run = found ? [found.x[0], found.y[0]] : null;
    const layout = gd._fullLayout, box = gd.getBoundingClientRect();
    return {x: box.left + layout._size.l + layout.xaxis.l2p(trace.x[k]),
            y: box.top + layout._size.t + layout.yaxis.l2p(trace.y[k]), customdata: trace.customdata[k],
            square: [trace.x[k], trace.y[k]], run};
  }
  return null;
}"""


def test_clicking_the_basin_map_starts_a_run_there(server, page):
    page.goto(server.url + "/phase?resolution=30")
    page.wait_for_function(f"() => ({BASIN_POINT_JS})(0) !== null")
    wait_until_settled(page)  # fitted to the window: its one rerun redraws the map under the pointer
    first, second = (page.get_by_label(f"Start: share of the {nth} token", exact=True)
                     for nth in ("1st", "2nd"))
    assert (float(first.input_value()), float(second.input_value())) == (0.2, 0.5)  # the defaults
    page.locator(".js-plotly-plot").filter(has_text="Which token wins").scroll_into_view_if_needed()
    k = 4 * 30 + 15  # the grid square at shares (0.613, 0.187, 0.200): far from the default start
    point = page.evaluate(BASIN_POINT_JS, k)
    page.mouse.click(point["x"], point["y"])
    page.wait_for_function("() => /pick_a=0\\.6/.test(window.location.search)")
    link = dict(part.split("=") for part in page.evaluate("window.location.search")[1:].split("&"))
    # The sidebar follows the link (the number inputs redraw with the clicked start).
    page.wait_for_function(
        "([a, b]) => { const boxes = [...document.querySelectorAll('input[type=number]')];"
        " return boxes.some(x => x.value === a) && boxes.some(x => x.value === b); }",
        arg=[link["pick_a"], link["pick_b"]])
    assert float(first.input_value()) == float(link["pick_a"])
    assert float(second.input_value()) == float(link["pick_b"])
    # The page ran from there: the red run now starts on the clicked square (within its size).
    page.wait_for_function(f"() => {{ const p = ({BASIN_POINT_JS})({k}); "
                           "return p !== null && p.run !== null"
                           " && Math.hypot(p.run[0] - p.square[0], p.run[1] - p.square[1]) < 0.03; }")
    shot(page, "phase-clicked")
