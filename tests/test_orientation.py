"""Every page says what it is and what to try first; the Explorer guides a first visit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from support.app import APP, open_page, page

from polarize.web import pages
from polarize.web.leads import LEADS, TOURS
from polarize.web.pages import PAGES


@pytest.mark.parametrize("spec", PAGES, ids=lambda p: p.name)
def test_every_page_opens_with_a_two_sentence_lead(spec):
    lead = spec.lead
    assert lead == LEADS[spec.name]  # the page carries its lead; its words live in one place
    assert len(re.findall(r"[.!?](?:\s|$)", lead)) == 2, lead
    at = page(spec.name).run()
    assert not at.exception
    assert lead in [m.value for m in at.markdown]


def test_the_explorer_s_guided_visit_is_first_in_the_sidebar():
    """Under the figure it started at 1250 px of a 1280 x 720 window (issue 45): it is now folded at
    the top of the sidebar's controls, where it shows without scrolling, on every visit."""
    at = AppTest.from_file(APP, default_timeout=120).run()
    (tour,) = [e for e in at.sidebar.expander if "First visit" in e.label]
    assert not tour.proto.expanded
    text = tour.markdown[0].value
    for panel in ("Simplex of scores", "Entropy", "Fitness vs score", "Loss", "Play", "Normalizer"):
        assert panel in text
    assert text.count("\n") == len(TOURS["explorer"]) - 1 and pages.EXPLORER.tour == TOURS["explorer"]
    assert not [e for e in at.main.expander if "First visit" in e.label]  # one tour, not two
    open_page(at, "deck").run()
    assert not [e for e in at.expander if "First visit" in e.label]  # the deck page has none


def test_a_slide_has_no_lead_or_tour():
    at = page("explorer")
    at.query_params["present"] = "true"
    at.run()
    assert LEADS["explorer"] not in [m.value for m in at.markdown]
    assert not [e for e in at.expander if "First visit" in e.label]


def test_about_the_maths_is_near_the_top_of_the_menu():
    names = [spec.name for spec in PAGES]
    assert names[0] == "explorer" and names.index("maths") <= 2


def test_only_the_page_spec_says_which_page_has_a_lead_or_tour():
    source = (Path(__file__).resolve().parent.parent / "ui" / "renderer.py").read_text()
    assert "LEADS" not in source and "TOURS" not in source
    assert [spec.name for spec in PAGES if spec.tour] == list(TOURS)


def test_a_lecturer_can_keep_the_verdict_for_after_play():
    from polarize.web.pages.explorer import AFTER_PLAY

    at = page("explorer")
    at.query_params["verdict"] = "after"
    at.run()
    assert not at.exception and at.query_params["verdict"] in (["after"], "after")  # kept in the link
    (folded,) = [e for e in at.expander if e.label == AFTER_PLAY]
    assert not folded.proto.expanded and "Polarized?" in [m.label for m in folded.metric]
    assert len([m for m in at.metric if m.label == "Polarized?"]) == 1  # only there
    at = page("explorer").run()  # by default, as before: beside the figure
    assert not [e for e in at.expander if e.label == AFTER_PLAY]
    assert "Polarized?" in [m.label for m in at.metric]
