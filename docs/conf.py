"""Sphinx configuration: the API reference (autodoc + numpydoc), the theory pages and the example notebooks.

Build with ``python -m sphinx -W -b html docs docs/_build/html`` (``-W``: a warning, such as a broken
docstring or reference, fails the build). The notebooks (``docs/examples`` links to ``examples/``) are
rendered as stored, without outputs: executing them is the test suite's job (tests/test_notebooks.py).
"""

from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # document this checkout, not an installed copy

project = "polarize"
author = "the polarize authors"
copyright = "2026, the polarize authors"
release = version = "0.1.0"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints", "*.png"]
root_doc = "index"

# The notebooks are executed by the test suite on a real kernel; the docs show them as stored.
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "amsmath"]

autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc sections say the types, with shapes
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "alabaster"
html_title = "polarize"
html_static_path: list[str] = []
