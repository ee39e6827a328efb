"""Tables sized for their room (issue 45, item 6): what of a page's tables is out of sight.

On a 390 x 844 phone (normal and presented) and on a presented 1280 x 720 projector, every column of
every table of the comparison pages (``TABLE_PAGES``) must show within the table's box and the window:
nothing hidden behind a sideways scroll (the Normalizers grid had 541 px of columns in a 354 px box and
showed 3 of 7 presented on a phone; Flow vs descent's table 506 px in 390), with no accessibility rule
broken (axe-core: tables in parts are tables still, read out as such). Widths and positions are read
from the page. The tests read them where those pages are opened anyway: on a phone in
tests/browser/test_layout_browser.py, presented at 1280 x 720 in tests/browser/test_browser_present.py.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from support.axe import axe_violations

TABLE_PAGES = ("normalizers", "descent", "sweeps")
"""The pages whose tables are checked (their paths)."""

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


def read_tables(tab: Any) -> dict[str, Any] | None:
    """A reading for ``support.browser.Views``: on a page of ``TABLE_PAGES``, its tables (``TABLES_JS``)
    and what axe-core finds on the page (``axe_violations``); None on any other page (axe costs seconds)."""
    if urlsplit(tab.url).path.strip("/") not in TABLE_PAGES:
        return None
    return {"tables": tab.evaluate(TABLES_JS, 2), "axe": axe_violations(tab)}


def table_problems(name: str, read: dict[str, Any] | None) -> list[str]:
    """What ``read_tables`` read on page ``name`` says is wrong: no table, a table partly out of sight,
    a table in parts that does not name its rows by the same first column in each, axe's violations."""
    if read is None or not read["tables"]:
        return [f"{name}: no table"]
    tables = read["tables"]
    problems = [f"{name}: {t['hidden']} of {t['heads']}" for t in tables if t["hidden"]]
    heads = [t["heads"] for t in tables if t["heads"]]
    if len({h[0] for h in heads}) > 1:  # a table in parts names its rows in each part, by its first column
        problems.append(f"{name}: its parts' first columns are {[h[0] for h in heads]}")
    return problems + [f"{name}: {line}" for line in read["axe"]]
