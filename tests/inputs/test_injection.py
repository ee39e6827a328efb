"""Links cannot be turned against the viewer: every value a link brings is shown as text, on every page.

Each page is opened (headless, ``AppTest``) with a link whose every key holds an
attack: a phishing link, an image, raw HTML, a colour directive, maths, a bare
URL, backticks that try to close a code span early. Everything the page then
shows as Markdown is parsed with a CommonMark parser: the attacks' text may
appear only inside code spans, and no link, image or HTML may appear at all.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest
from support.app import link_note
from support.app import page as app_page

from polarize.web.deck_file import to_json
from polarize.web.deck_store import Deck, DeckStore, Slide
from polarize.web.echo import echo, literal
from polarize.web.pages import PAGES

ROOT = Path(__file__).resolve().parents[2]

MARK = "evil.example"
"""In every attack: wherever it shows outside a code span, the attack got through."""

ATTACKS = (
    f"[Session expired: log in](https://{MARK}/login)",
    f"![logo](https://{MARK}/x.png)",
    f"<img src=x onerror=alert(1)> <a href='https://{MARK}'>{MARK}</a>",
    f":red[**{MARK} says: your session expired**]",
    f"`` ` {MARK}` [x](https://{MARK}) ```",
    f"x` [click](https://{MARK}) `y",
    f"$\\href{{https://{MARK}}}{{\\text{{log in}}}}$",
    f"https://{MARK}/\n\n# {MARK} <script>alert(1)</script>",
)
BARE = (
    f"https://{MARK}/login",
    f"Log in again at www.{MARK}/session",
    f"http://www.{MARK}",
    f"see {MARK}.com or mail admin@{MARK}",
    f"ftp://{MARK}/x (www.{MARK})",
)
"""Bare URLs and ``www.`` names: Streamlit's Markdown (GFM) links them even when every character is
escaped (``literal``), so a user's text must never be prose."""
LINKIFIED = re.compile(r"(?i)(https?://|ftp://|www\.|\S@\S)")
"""What GFM's autolinking turns into a link in text (CommonMark, and so the parser here, does not)."""

PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def exposed(markdown: str) -> list[str]:
    """What of ``markdown`` a reader would get as anything but literal code: attack text, links, HTML."""
    found = []
    for block in PARSER.parse(markdown):
        if block.type == "html_block" or (block.type != "inline" and MARK in block.content):
            found.append(block.content)
        for token in block.children or ():
            if token.type in ("link_open", "image", "html_inline") or (token.type != "code_inline" and (
                    MARK in token.content or LINKIFIED.search(token.content))):
                found.append(f"{token.type}: {token.content}")
    return found


def shown_markdown(at: AppTest) -> list[str]:
    """Every piece of Markdown the page put on screen (main area and sidebar)."""
    kinds = ("markdown", "caption", "warning", "error", "info", "success", "title", "header", "subheader")
    return [element.value for kind in kinds for element in getattr(at, kind)] + [
        element.proto.help for element in at.caption if element.proto.help]  # a tooltip's words too


@pytest.mark.parametrize("attack", ATTACKS)
def test_echo_keeps_any_text_literal(attack):
    span = echo(attack, most=500)
    (paragraph,) = [t for t in PARSER.parse(span) if t.type == "inline"]
    (token,) = paragraph.children
    assert token.type == "code_inline"
    assert token.content == " ".join(attack.split())


@pytest.mark.parametrize("attack", ATTACKS)
def test_literal_prose_shows_any_text_as_typed(attack):
    (paragraph,) = [t for t in PARSER.parse(literal(attack)) if t.type == "inline"]
    assert [token.type for token in paragraph.children] == ["text"]  # no link, image, HTML or emphasis
    assert paragraph.children[0].content == attack.replace("\n", " ")


def test_echo_shortens_long_text():
    assert echo("x" * 100, most=10) == "`" + "x" * 9 + "\u2026`"


@pytest.mark.slow
@pytest.mark.parametrize("spec", PAGES, ids=[p.name for p in PAGES])
def test_no_link_can_inject_markdown_into_a_page(spec):
    at = app_page(spec.name, timeout=120)
    for i, key in enumerate(spec.keys or ("seed",)):
        at.query_params[key] = ATTACKS[i % len(ATTACKS)]
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = shown_markdown(at)
    warning = link_note(at) if spec.keys else ""
    assert all(f"{key}=" in warning for key in spec.keys)  # each attack was shown, and refused
    assert [bad for text in shown for bad in exposed(text)] == []


# ---- deck text: what one user types, others see -------------------------------------------------


@pytest.mark.parametrize("attack", ATTACKS + BARE)
def test_echo_keeps_bare_urls_in_a_code_span(attack):
    assert exposed(echo(attack, most=500)) == []
    assert exposed(literal(attack)), "escaped prose would still be auto-linked: the test must see it"


def _deck(attack: str) -> Deck:
    return Deck(name=attack[:100], slides=(Slide(link="/rates?n=4", title=attack[:200], notes=attack),))


@pytest.mark.parametrize("attack", ATTACKS + BARE)
def test_deck_messages_show_names_and_titles_as_text(attack, tmp_path, monkeypatch):
    from polarize.web.deck_store import DeckError
    from polarize.web.pages import deck as web_deck
    from ui import deckbar

    monkeypatch.setenv("POLARIZE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("POLARIZE_HOSTED", raising=False)
    ok, imported = web_deck._import(DeckStore.shared(), to_json(_deck(attack)).encode())
    assert ok and exposed(imported) == []
    ok, added = deckbar._add(attack[:100], "/rates?n=4", attack[:200], attack)
    assert ok and exposed(added) == []
    store = DeckStore.shared()
    ok, again, choices = web_deck._import(store, to_json(_deck(attack)).encode())  # exists already: it asks
    assert ok and exposed(again) == [] and choices
    backwards = attack[::-1]
    edited = Deck(name=attack[:100], slides=(Slide(link="/losses", title=backwards[:200], notes=backwards),))
    ok, asked, choices = web_deck._import(store, to_json(edited).encode())  # its changes listed, as text
    assert ok and exposed(asked) == [] and "title" in asked and "notes" in asked
    assert exposed(choices[1].run()[1]) == []  # imported as a copy
    assert exposed(web_deck.shown_error(DeckError("name", f"there is no deck called {attack!r}"))) == []
    assert exposed(web_deck.bar_title(_deck(attack).slides, 0)) == []
    assert exposed(web_deck._delete(DeckStore.shared(), attack[:100])[1]) == []


@pytest.mark.slow
def test_no_deck_can_put_a_link_on_the_deck_page(tmp_path, monkeypatch):
    monkeypatch.setenv("POLARIZE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("POLARIZE_HOSTED", raising=False)
    store = DeckStore.shared()
    for attack in ATTACKS + BARE:
        store.save(_deck(attack))
    at = app_page("deck", timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = shown_markdown(at)
    assert any("www" in text for text in shown)  # the decks are on the page
    assert [bad for text in shown for bad in exposed(text)] == []
