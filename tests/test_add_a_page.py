"""The README's recipe "a page", followed in this file: a ``PageSpec`` with one control and a view.

Its controls give the link (every value written, a bad one named and dropped), its view is a pure
function of the values, and the deck's link resolver finds it by its address. The other half of the
recipe (its one-line script in ``pages/``, ``ui.render("name")``, and its place in ``PAGES``) is held
by ``tests/test_navigation.py`` for every page shipped.
"""

from __future__ import annotations

from polarize.web.controls import Control
from polarize.web.links import link, read_link, resolve, to_query
from polarize.web.page import PageSpec
from polarize.web.pages import PAGES
from polarize.web.view import Metric, View


def _view(job, narrow: bool = False) -> View:
    values = dict(job)
    return View(blocks=(Metric("n squared", str(values["n"] ** 2)),))


SQUARES = PageSpec(
    name="squares", nav_title="Squares", title="Squares", icon=":material/square:", url_path="squares",
    controls=(Control("n", "n", "slider", low=1, high=10, step=1, integer=True, help="a whole number"),),
    defaults=lambda preset: {"n": 3}, view=_view, lead="A number and its square.")


def test_a_page_spec_reads_and_writes_its_link_and_views_its_values():
    values, ignored = read_link(SQUARES, {"n": "7"})
    assert values == {"n": 7} and not ignored
    assert to_query(SQUARES, values) == {"n": "7"}
    values, ignored = read_link(SQUARES, {"n": "70"})  # out of range: named, and the default kept
    assert values == {"n": 3} and set(ignored) == {"n"}
    (metric,) = SQUARES.view(tuple(sorted({"n": 7}.items()))).blocks
    assert metric.value == "49"


def test_its_address_leads_back_to_it_among_the_pages():
    address = link(SQUARES, {"n": 5})
    spec, query = resolve(address, (*PAGES, SQUARES))
    assert spec is SQUARES and read_link(spec, query)[0] == {"n": 5}
