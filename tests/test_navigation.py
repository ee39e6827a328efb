"""The app's pages are the scripts of ``pages/``, one a page spec, routed by ``st.navigation``."""

from __future__ import annotations

import ast

import pytest
from streamlit.testing.v1 import AppTest
from support.app import APP, ROOT, open_page, page

from polarize.web.pages import PAGES
from ui.navigation import script


def _rendered(path) -> list[str]:
    """The page names a script hands to ``ui.render`` (its calls of ``ui.render("name")``)."""
    calls = [node for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Call) and ast.unparse(node.func) == "ui.render"]
    return [ast.literal_eval(call.args[0]) for call in calls]


def test_one_script_a_page_and_one_page_a_script():
    scripts = sorted(p.name for p in (ROOT / "pages").glob("*.py"))
    assert scripts == sorted(f"{spec.name}.py" for spec in PAGES)
    for spec in PAGES:
        path = ROOT / script(spec)
        assert _rendered(path) == [spec.name], f"{path.name} must be one call of ui.render({spec.name!r})"
        body = [node for node in ast.parse(path.read_text()).body if not isinstance(node, ast.Expr)
                or not isinstance(node.value, ast.Constant)]  # the docstring aside
        assert len(body) == 2, f"{path.name}: `import ui` and the one call, nothing else"


@pytest.fixture(scope="module")
def app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_app_routes_every_script(app):
    for spec in PAGES:
        app.switch_page(script(spec))  # raises ValueError for a file st.navigation did not register


@pytest.mark.parametrize("name", ["rates", "maths"])
def test_a_menu_entry_opens_its_page(app, name):
    open_page(app, name).run()
    assert not app.exception, [e.value for e in app.exception]
    spec = next(spec for spec in PAGES if spec.name == name)
    assert app.title[0].value.startswith(spec.title.split(":")[0])


def test_every_page_is_known_by_its_script_name():
    """A page's address is its script's name (``/rates`` runs ``pages/rates.py``)."""
    assert all(spec.url_path == spec.name for spec in PAGES)


def test_a_link_to_a_page_opens_it_inside_the_app():
    """(A fresh server's first request by such a link, which Streamlit then runs in its legacy mode
    for ``pages/``: tests/browser/test_browser_comparisons.py, in a real browser.)"""
    at = page("maths").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value.startswith("About the maths")
    at.run()  # and stays inside the app
    assert not at.exception and at.title[0].value.startswith("About the maths")
