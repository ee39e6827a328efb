"""Tables sized for their room (issue 45, item 6), in headless Chromium.

On a 390 x 844 phone (normal and presented) and on a presented 1280 x 720 projector, every column of
every table of the comparison pages shows within the table's box and the window: nothing is hidden
behind a sideways scroll (the Normalizers grid had 541 px of columns in a 354 px box and showed 3
of 7 presented on a phone; Flow vs descent's table 506 px in 390), with no accessibility rule broken
(axe-core). And the Sweeps page's figure is on a presented projector's first screen (a grid table
above it pushed it to 471-996 px of 720). Widths and positions are read from the page. Skipped, with
the reason, when Debian's /usr/bin/chromium (or Playwright) is missing.
"""

from __future__ import annotations

import pytest
from support.axe import axe_violations
from support.browser import BROWSER, wait_until_settled

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

SIZES = {"phone": (390, 844, ""), "presented phone": (390, 844, "?present=true"),
         "presented": (1280, 720, "?present=true")}
PAGES = ("normalizers", "descent", "sweeps")

# JavaScript: each table of the page (a plain table, or the grid), with what of it is out of sight:
# the columns' header cells outside its box or the window, and any part of it that scrolls sideways
# (content wider than the box that shows it).
TABLES_JS = """(tol) => {
  const W = window.innerWidth;
  const tables = [...document.querySelectorAll(
    '.st-key-page [class*="st-key-table_"] table, .st-key-page [data-testid="stDataFrame"]')];
  return tables.map((table) => {
    const box = table.getBoundingClientRect();
    const hidden = [];
    if (box.left < -tol || box.right > W + tol) hidden.push(`the table spans ${box.left} to ${box.right} px`);
    for (const e of table.querySelectorAll('*')) {
      const s = getComputedStyle(e);
      if (['auto', 'scroll'].includes(s.overflowX) && e.scrollWidth > e.clientWidth + tol) {
        hidden.push(`${e.scrollWidth} px of content in a ${e.clientWidth} px box`);
      }
    }
    const heads = [...table.querySelectorAll('thead th')].map((th) => {
      const r = th.getBoundingClientRect();
      // The grid's header cells for screen readers are not laid out (0 x 0 px): it draws its own.
      const laid = r.width > 0 || r.height > 0;
      const out = laid && (r.left < Math.max(box.left, 0) - tol || r.right > Math.min(box.right, W) + tol);
      if (out) hidden.push(`column "${th.textContent.trim()}" at ${r.left} to ${r.right} px`);
      return th.textContent.trim();
    });
    return {heads, hidden: [...new Set(hidden)]};
  });
}"""


@pytest.mark.parametrize("path", PAGES)
@pytest.mark.parametrize("size", SIZES)
def test_every_column_of_a_table_shows_within_its_room(server, tabs, size, path):
    width, height, mode = SIZES[size]
    page = tabs.open(f"{server.url}/{path}{mode}", width=width, height=height)
    wait_until_settled(page, timeout=300)
    tables = page.evaluate(TABLES_JS, 2)
    assert tables, f"no table on {path}"
    assert [t["hidden"] for t in tables if t["hidden"]] == [], (size, path, tables)
    heads = [t["heads"] for t in tables if t["heads"]]
    # A table in parts names its rows in each part, by its first column.
    assert len({h[0] for h in heads}) <= 1, heads
    assert axe_violations(page) == []  # tables in parts are tables still, read out as such


# JavaScript: the top and bottom of the page's first figure as it opens.
FIGURE_JS = """() => {
  const svg = document.querySelector('.st-key-main_figure .js-plotly-plot .main-svg');
  const r = svg.getBoundingClientRect();
  return [r.top, r.bottom];
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_presented_sweep_s_figure_is_on_the_first_screen(server, tabs, scheme):
    """The grid's table comes after the figure: above it, it pushed the figure to 471-996 px of 720."""
    page = tabs.open(f"{server.url}/sweeps?present=true", scheme=scheme)
    wait_until_settled(page, timeout=300)
    top, bottom = page.evaluate(FIGURE_JS)
    assert 0 <= top and bottom <= 720 + 2, (top, bottom)
