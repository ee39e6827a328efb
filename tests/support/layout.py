"""What a page in headless Chromium shows wrongly, found by bounding boxes (used by the layout tests).

- ``layout_problems``: text boxes of a figure that overlap, text running into a panel's plot area it
  does not belong to, text cut off by its box, a figure wider than its place, a sidebar over the
  page, a page wider than the window;
- ``fit_problems``: in presentation mode, a figure taller than the window or a control outside it;
- ``main_figure_problems``: the page's main figure and its Play button, slider and time counter not
  inside the window together;
- ``drawn``: what each figure draws: its panels' heights, its rows' labels, its legend, its least type.
"""

from __future__ import annotations

from typing import Any

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
  document.querySelectorAll('.polarize-chart').forEach((chart, p) => {
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
    // Text against the panels' plot areas: a title, a tick label or a note that runs into a panel it
    // does not belong to (its middle is outside that panel: a row's title drawn across the panel above).
    const areas = [...g.querySelectorAll('.draglayer .nsewdrag')].map((el) => el.getBoundingClientRect())
      .filter((r) => r.width >= 1 && r.height >= 1);
    for (const {el, r} of items) {
      if (el.classList.contains('updatemenu-button')) continue;
      const x = (r.left + r.right) / 2, y = (r.top + r.bottom) / 2;
      for (const area of areas) {
        const inside = area.left <= x && x <= area.right && area.top <= y && y <= area.bottom;
        if (!inside && cross(area, r)) {
          problems.push(`${title}: ${name(el)} runs into a panel's plot area`);
          break;
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
               '[data-testid="stCaptionContainer"]', '.pz-label', '.pz-button', '.pz-choice span'];
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
  document.querySelectorAll('.polarize-chart').forEach((chart, p) => {
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
  const chart = document.querySelector('.polarize-chart');
  const svg = chart && chart.querySelector('.js-plotly-plot .main-svg');
  const shown = (selector) => svg
    ? [...chart.querySelectorAll(selector)].find((e) => e.checkVisibility()) : null;
  // The time counter is the slider's first label, its own child (the steps' labels are grouped).
  const parts = {Play: shown('.updatemenu-button'), slider: shown('.slider-rail-rect'),
                 time: shown('.slider-group > text.slider-label')};
  if (!parts.Play) return null;
  // A figure with more rows of panels than the window holds legibly says so (``presented``).
  const meta = chart.querySelector('.js-plotly-plot').layout.meta;
  whole = whole && !(meta && meta.taller);
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
        The figure too, not only its controls, unless the figure says it is taller than the window
        (``layout.meta.taller``: more rows of panels than a phone's window holds legibly).

    Returns
    -------
    list of str or None
        One line a problem; None when the page's first figure does not play.
    """
    return page.evaluate(MAIN_FIGURE_JS, [tolerance, at_top, whole])


# ---- what each figure draws: its panels' heights, its rows' labels, its legend, its least type -------

# JavaScript: for each figure of the page (in order), as drawn: the heights (px) of its panels' plot
# areas, the texts of its y axis titles (a row's label) and of its legend's entries, and its smallest
# type with that text: every visible text of the figure but its legend's, its transport's, its hover
# labels' and its toolbar's (ticks, axis and panel titles, notes, a heatmap's labels, a colour bar's);
# and its legends' smallest type (every legend's title and entries).
DRAWN_JS = """() => [...document.querySelectorAll('.st-key-page .polarize-chart')].map((chart) => {
  const g = chart.querySelector('.js-plotly-plot');
  const shown = (t) => t.checkVisibility() && t.textContent.trim() && t.getBoundingClientRect().width > 0;
  const size = (t) => parseFloat(getComputedStyle(t).fontSize);
  const texts = [...g.querySelectorAll('.main-svg text')].filter(shown);
  const data = texts.filter((t) => !t.closest(
    '.legend, .updatemenu-container, .slider-container, .hoverlayer, .modebar'));
  const least = (some) => some.reduce((m, t) => (size(t) < m[0] ? [size(t), t.textContent.trim()] : m),
                                      [Infinity, '']);
  const smallest = least(data);
  const keys = texts.filter((t) => t.closest('.legend, [class^="legend"]')
    && !t.closest('.updatemenu-container, .slider-container, .hoverlayer, .modebar'));
  return {
    panels: [...g.querySelectorAll('.draglayer .nsewdrag')].map((r) => r.getBoundingClientRect().height)
      .filter((h) => h >= 1),
    rows: texts.filter((t) => /^y\\d*title$/.test(t.getAttribute('class') || ''))
      .map((t) => t.textContent.trim()),
    legend: texts.filter((t) => t.classList.contains('legendtext')).map((t) => t.textContent.trim()),
    smallest,
    legend_smallest: least(keys),
  };
})"""


def drawn(page: Any) -> list[dict[str, Any]]:
    """Each figure of the page as drawn (``DRAWN_JS``): ``panels`` (px tall), ``rows`` (y titles),
    ``legend`` (entries), ``smallest`` ([px, text] of its least type, its legend and controls aside),
    ``legend_smallest`` (the same of its legends' text, titles and entries; [inf, ''] without one)."""
    return page.evaluate(DRAWN_JS)


# ---- what the layout tests make of those readings, at any size or mode ---------------------------------

TALLER_JS = "() => { const g = document.querySelector('.js-plotly-plot'); " \
    "return !!(g && g.layout.meta && g.layout.meta.taller); }"
"""JavaScript: whether the page's first figure says it is fitted taller than the window
(``layout.meta.taller``)."""

MAIN_READS = {"main at top": lambda tab: main_figure_problems(tab, at_top=True),
              "main": lambda tab: main_figure_problems(tab, at_top=False),
              "taller": lambda tab: tab.evaluate(TALLER_JS)}
"""The readings ``main_figures`` and ``grid_problems`` take of a page (``support.browser.Views``): its main
figure measured as the page opens, then scrolled by the least that shows it (and back to the top)."""


def main_figures(seen: dict, found: dict, *, phone: bool, present: bool) -> list[str]:
    """Each page's main figure and its transport as ``seen`` (``MAIN_READS``) into ``found`` (name ->
    problems); the pages whose main figure plays.

    On a desktop the Explorer's as the page opens (a lecturer's first screen: Play without scrolling),
    the others scrolled to at most. A figure may say it is taller than the window (settings chosen may ask
    it), but no page as it opens."""
    played, mode = [], "presented" if present else "normal"
    for name, read in seen.items():
        at_top = name == "explorer" and not phone
        problems = read["main at top" if at_top else "main"]
        if problems is not None and read["taller"]:  # allowed for settings chosen, not defaults
            problems = [*problems, "the figure is fitted taller than the window (layout.meta.taller)"]
        if problems is not None:
            played.append(name)
            found.setdefault(f"{name} ({mode})", []).extend(problems)
    return played


LEAST_PANEL = 80
"""Fewest pixels of a panel's plot area a person reads at 1280 x 720 (issue 45)."""
GRIDS = ("explorer", "descent", "tied", "normalizers", "sinks", "losses")
"""The pages whose main figure is a grid of panels."""
ROWS_AND_KEYS = {"descent": ("legend", {"flow (solid)", "descent (dashed)"}),
                 "tied": ("rows", {"D = 10", "D = 100"}),
                 "sinks": ("rows", {"layer 0", "layer 1"}),
                 "losses": ("legend", {"token 0", "token 7", "logistic", "square"})}
"""Page -> what its main figure must say, as drawn: the legend's entries or the rows' labels."""


def grid_problems(seen: dict, *, phone: bool) -> list[str]:
    """Issue 45, item 5, in the grids ``seen`` (``GRIDS``, read by ``drawn`` and ``MAIN_READS``): on a
    desktop every panel at least ``LEAST_PANEL`` px tall and the figure with its Play on the first screen;
    the legend's entries or the rows' labels ``ROWS_AND_KEYS`` names, on a phone too. One line a problem."""
    found = []
    for name, read in seen.items():
        figure = read["figures"][0]
        if not phone:
            if min(figure["panels"]) < LEAST_PANEL - 0.5:
                found.append(f"{name}: panels {sorted(round(h) for h in figure['panels'])} px tall")
            found += [f"{name}: {line}" for line in read["main at top"] or []]
        if name in ROWS_AND_KEYS:
            part, said = ROWS_AND_KEYS[name]
            if not said <= set(figure[part]):
                found.append(f"{name}: its {part} says {figure[part]}, not all of {sorted(said)}")
    return found
