"""A page's link (``polarize.web.links.read_link``), property-based: whatever values a link brings,
every page reads it without raising, ignores only keys the link had, and keeps what runs.

The links are drawn by ``support.fuzz`` (derandomized: the same examples every run).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from support.fuzz import LINK_VALUES, assert_round_trips, fuzz, links

from polarize.web.links import read_link
from polarize.web.pages import PAGES
from polarize.web.pages.explorer import EXPLORER, build_experiment


@fuzz(200)
@given(links)
def test_explorer_links_from_any_config_give_runnable_experiments(link):
    values, ignored = read_link(EXPLORER, link)
    assert set(ignored) <= set(link)
    assert_round_trips(build_experiment(values))


@fuzz(100)
@given(st.data())
def test_every_page_reads_any_link_without_raising(data):
    spec = data.draw(st.sampled_from(PAGES))
    keys = [c.key for c in spec.controls] + ["utm_source"]
    link = data.draw(st.dictionaries(st.sampled_from(keys), st.one_of(LINK_VALUES, st.lists(LINK_VALUES,
                                                                                            max_size=2))))
    values, ignored = read_link(spec, link)
    assert set(ignored) <= set(link)
    assert spec.check(values) is None  # what the reader keeps is runnable
