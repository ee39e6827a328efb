"""A visitor's decks are theirs alone, along the path a person takes: two visitors in real Chromium (a
lecturer at 1280x720, a student on a phone at 390x844) on a server an operator set up without any
``POLARIZE_*`` variable. The hosted layout (``POLARIZE_HOSTED=1``, two replicas behind the proxy, runs on
a Dask cluster) is the same journey's in ``test_deploy_proxy``: a hosted server alone here as well took
40 s of the suite and tested no path the proxy's does not.

Each adds slides from the sidebar's box on two pages (a fragment's rerun), imports, presents, replaces
and deletes; neither sees the other's decks or any of their words, a deck of the same name is a deck of
one's own, and nothing is written to the server's disk (its home folder, where the decks' file would
go).
"""

from __future__ import annotations

import pytest
from support.browser import BROWSER, AppServer, next_frames, wait_until_settled
from support.decks import DECK_BOX, exam, import_deck, two_visitors

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture(scope="module")
def server():
    """The app as an operator starts it: no ``POLARIZE_*`` variable at all."""
    with AppServer(env={}) as running:
        yield running


def test_two_visitors_see_only_their_own_decks_and_the_server_writes_none(server, browser):
    two_visitors(browser, server.url)
    assert server.kept() == []


HIGHLIGHTER = "**/StreamlitSyntaxHighlighter*.js"
"""The script of ``st.code``'s syntax highlighter, fetched when the page first draws a code block."""


def test_the_deck_box_s_button_stays_put_while_the_box_s_late_code_arrives(server, browser):
    """The box's form is drawn before its link's code block: Streamlit fetches that block's syntax
    highlighter (1.5 MB) when the box first opens, and the block then grows by its wrapped lines. Held
    back here (the chunk by its name in Streamlit's build), "Add to deck" is where it was drawn once the
    block arrives: above the form, the block moved it 300 px away from a click (a CI run at load 9: "Add
    to deck" pressed, nothing sent)."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        page.goto(server.url + "/")
        wait_until_settled(page)
        held: list = []

        def hold(route):
            held.append(route)

        page.route(HIGHLIGHTER, hold)
        with page.expect_request(HIGHLIGHTER):  # Streamlit's build names it so: this says when it does not
            page.get_by_text(DECK_BOX).click()
        button = page.get_by_role("button", name="Add to deck")
        page.get_by_label("Speaker notes").wait_for()
        # Everything drawn but the block, which waits for its highlighter (the page is busy till then).
        next_frames(page)
        first = button.bounding_box()
        for route in held:
            route.continue_()
        page.get_by_text("present=true").wait_for()  # the link's block, drawn
        wait_until_settled(page)
        assert button.bounding_box() == first, (first, button.bounding_box())
    finally:
        context.close()


HOSTILE = "**bold** [Log in](https://evil.example) www.evil.example $x^2$ :red[red] <b>b</b>"
"""A slide title as a shared deck file may bring it: Markdown, a link, a bare address, maths, HTML."""

# JavaScript: the deck page's tables (plain tables in keyed containers, or the grid), with the elements
# in them that are markup (a link, emphasis, maths, colour), and the main column's links to evil.example.
MARKUP_JS = """() => {
  const tables = [...document.querySelectorAll(
    '.st-key-page [class*="st-key-table_"], .st-key-page [class*="st-key-deck_table"]')];
  const marked = (t) => [...t.querySelectorAll('a, strong, em, b, .katex, [class*="red"]')];
  return {tables: tables.map((t) => t.innerText),
          markup: tables.flatMap((t) => marked(t).map((e) => e.outerHTML)),
          links: [...document.querySelectorAll('.st-key-page a[href*="evil"]')].map((a) => a.outerHTML)};
}"""


@pytest.mark.parametrize("size", [(390, 844), (1280, 720)], ids=["phone", "projector"])
def test_a_deck_s_titles_and_notes_show_as_typed_in_its_table(server, tabs, size):
    """A deck's slide titled with Markdown and HTML shows that text in the Deck page's table, no link or
    markup made of it (``st.table`` rendered a cell's Markdown: the title was a link to evil.example)."""
    page = tabs.open(server.url + "/deck", width=size[0], height=size[1])
    wait_until_settled(page)
    said = import_deck(page, exam(HOSTILE, "notes *x* www.notes.example", slides=1), "Imported|exists")
    assert said.startswith("Imported the deck Exam"), said
    wait_until_settled(page)
    shown = page.evaluate(MARKUP_JS)
    assert shown["tables"] and any(HOSTILE in t for t in shown["tables"]), shown["tables"]
    assert any("notes *x* www.notes.example" in t for t in shown["tables"]), shown["tables"]
    assert shown["markup"] == [] and shown["links"] == [], shown
