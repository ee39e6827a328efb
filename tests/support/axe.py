"""axe-core (the accessibility engine, from npm) for the browser tests: installed once, run in a page.

Why npm and not a vendored copy: axe-core is MPL-2.0, which would let us ship its one file
``axe.min.js`` unchanged with its notice, but that is half a megabyte of someone else's minified
code in the repository to keep current by hand. The npm registry is reachable wherever the tests
run (CI has npm), so ``axe_source`` installs the pinned version into a cache folder of the work
tree (``.cache/``, ignored by git) the first time and reads it from there afterwards.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
AXE_VERSION = "4.14.1"
"""The axe-core release the accessibility tests hold the pages to (its rules change between releases)."""
CACHE = ROOT / ".cache" / f"axe-core-{AXE_VERSION}"
WCAG_AA = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")
"""The axe rule tags of WCAG 2.1 levels A and AA."""


def axe_source() -> str:
    """The text of ``axe.min.js``, installed from npm into ``CACHE`` if it is not there yet.

    Skips the calling test when npm is missing (as the browser tests skip without Chromium).
    """
    script = CACHE / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm is missing: it installs axe-core for the accessibility tests")
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([npm, "install", "--prefix", str(CACHE), "--no-save", "--no-audit", "--no-fund",
                        "--ignore-scripts", f"axe-core@{AXE_VERSION}"], check=True, capture_output=True,
                       timeout=300)
    return script.read_text(encoding="utf-8")


def axe_violations(page: Any, *, exclude: tuple[str, ...] = ()) -> list[str]:
    """Run axe-core's WCAG 2.1 A/AA rules on ``page`` (Playwright) now; one line per violating node.

    Parameters
    ----------
    exclude : tuple of str
        CSS selectors of parts axe should not look at.
    """
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=axe_source())
    results = page.evaluate(
        """async ([tags, exclude]) => {
          const context = exclude.length ? {exclude: exclude.map((s) => [s])} : document;
          const r = await window.axe.run(context, {runOnly: {type: 'tag', values: tags}});
          return r.violations.map((v) => v.nodes.map((n) =>
            `${v.id} (${v.impact}): ${n.html.slice(0, 160)}: `
            + (n.failureSummary || '').split('\\n').slice(1).join('; ')
          )).flat();
        }""", [list(WCAG_AA), list(exclude)])
    return list(results)
