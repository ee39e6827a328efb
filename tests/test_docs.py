"""The documentation builds with Sphinx with warnings as errors, and documents the whole public API."""

from __future__ import annotations

import html
import json
import pathlib
import re
import subprocess
import sys

import pytest

import polarize

pytest.importorskip("sphinx")
pytest.importorskip("numpydoc")
pytest.importorskip("myst_nb")

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs")
    # -W: any warning (a broken docstring, a bad reference, a missing page) fails the build; -E: from scratch.
    build = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-E", "-q", "-b", "html",
                            "-d", str(out / "doctrees"), str(ROOT / "docs"), str(out / "html")],
                           capture_output=True, text=True, cwd=ROOT)
    assert build.returncode == 0, build.stderr[-3000:]
    return out / "html"


def test_every_public_name_has_a_reference_entry(site):
    api = (site / "api.html").read_text()
    missing = [name for name in polarize.__all__ if f'id="polarize.{name}"' not in api]
    assert not missing


def test_theory_pages_and_notebooks_are_rendered(site):
    for page in ("theory/model", "theory/replicator", "theory/rate", "theory/piecewise"):
        assert "arXiv:2603.06248" in (site / f"{page}.html").read_text(), page
    for notebook in sorted((ROOT / "examples").glob("*.ipynb")):
        page = (site / "examples" / f"{notebook.stem}.html").read_text()
        # The notebook's own code is on the page: its first line of code, as text.
        cells = json.loads(notebook.read_text())["cells"]
        first = next("".join(cell["source"]).splitlines()[0] for cell in cells if cell["cell_type"] == "code")
        assert first in html.unescape(re.sub(r"<[^>]+>", "", page)), notebook.name
