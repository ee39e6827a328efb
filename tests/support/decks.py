"""Decks for the deck tests: three slides (one title with Markdown and HTML, shown as text), files
edited after export, and what a visitor does with decks in a real browser (add from the sidebar's box,
import a file, read what the page says)."""

from __future__ import annotations

import json
import re
import weakref
from typing import Any

from polarize.web.deck_file import digest, to_json
from polarize.web.deck_store import Deck, Slide
from support.browser import PATIENCE_MS, UNSETTLED_JS, browser_trouble, picture, wait_until_settled
from support.wire import Journal, journal

__all__ = ["A_WORDS", "DECK_BOX", "SLIDES", "add_from_deck_box", "exam", "import_deck", "many_slides",
           "relinked", "said", "shown_text", "tampered", "two_visitors"]

SLIDES = (
    Slide(link="/explorer?n=8&loss=logistic", title="Softmax polarizes", notes="Point at the winner."),
    Slide(link="/losses?n=8&horizon=1e6", title="Losses: *not* markdown <b>", notes=""),
    Slide(link="/rates", title="How slowly", notes="1/log t\nsecond line"),
)


def tampered(edit, *, resign=False):
    """A deck file edited after export; ``resign``: its SHA-256 recomputed, as a deliberate forger would."""
    data = json.loads(to_json(Deck(name="d", slides=SLIDES)))
    edit(data["deck"])
    if resign:
        data["sha256"] = digest(data["deck"])
    return json.dumps(data)


def relinked(deck, link="javascript:alert(1)"):
    deck["slides"][0]["link"] = link


# ---- a visitor's decks in a real browser ---------------------------------------------------------------

DECK_BOX = "Present or add to a deck"
"""The sidebar box that adds the view on screen to a deck (``ui.deckbar``)."""


def exam(title: str, notes: str, *, slides: int = 2) -> dict[str, Any]:
    """A deck file named "Exam" whose first slide is titled ``title`` with speaker notes ``notes``, as
    a file input takes it (Playwright's ``set_input_files``)."""
    more = tuple(Slide(link=f"/rates?n={3 + k}", title=f"{title} ({k + 2})") for k in range(slides - 1))
    deck = Deck(name="Exam", slides=(Slide(link="/rates?n=4", title=title, notes=notes), *more))
    return {"name": "Exam.json", "mimeType": "application/json", "buffer": to_json(deck).encode()}


_JOURNALS: weakref.WeakKeyDictionary[Any, Journal] = weakref.WeakKeyDictionary()
"""Each page's ``support.wire.Journal``, by its Playwright page (``_open`` starts it): what ran on it."""


def said(page: Any, pattern: str) -> str:
    """Wait for a message matching ``pattern`` (a regular expression) on ``page``; its text.

    A message that does not come within the browser's patience (``PATIENCE_MS``) fails with what the
    page showed: its state (``UNSETTLED_JS``), its sidebar's text (where the deck box says what it
    did), what the browser saw go wrong, what ran on it (its ``Journal``, when ``_open`` opened it),
    and its picture, kept in ``test-artifacts/``.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    found = page.get_by_text(re.compile(pattern)).first
    try:
        found.wait_for(timeout=PATIENCE_MS)
    except PlaywrightTimeout as waited:
        raise AssertionError(unsaid(page, pattern)) from waited
    return found.inner_text()


def unsaid(page: Any, pattern: str) -> str:
    """Why ``page`` did not say ``pattern``, in words (``said``)."""
    sidebar = page.locator("[data-testid='stSidebar']")
    shown = sidebar.inner_text().strip()[-600:] if sidebar.count() else None
    kept = _JOURNALS.get(page)
    ran = kept.last() if kept is not None else "not journaled"
    return (f"{page.url} did not say {pattern!r} within {PATIENCE_MS / 1000:g} s: "
            f"{page.evaluate(UNSETTLED_JS)}; sidebar: {shown!r}; {browser_trouble(page)}; "
            f"ran: {ran} (picture: {picture(page, 'unsaid')})")


def add_from_deck_box(page: Any, title: str, notes: str) -> str:
    """Add the view to the deck "Lecture" from the sidebar's box, as a visitor does; what the box says."""
    if not page.get_by_role("button", name="Add to deck").is_visible():
        page.get_by_text(DECK_BOX).click()
        # Opening the box reruns its fragment (the expander's on_change): the box is typed into once
        # that rerun has ended, as a reader would.
        wait_until_settled(page)
    page.get_by_label("Slide title").fill(title)
    page.get_by_label("Speaker notes").fill(notes)
    page.get_by_role("button", name="Add to deck").click()
    return said(page, r"Added slide \d+ to the deck|could not")


def import_deck(page: Any, file: dict[str, Any], answer: str) -> str:
    """Import ``file`` on the Deck page (its upload box) and wait for the ``answer`` (a regular
    expression: what the page last said may still show); what the page said or asked."""
    page.locator("input[type='file']").set_input_files(files=[file])
    return said(page, answer)


def shown_text(page: Any) -> str:
    """Everything the page shows as text (its main column and sidebar)."""
    return page.locator("body").inner_text()


A_WORDS = ("A's explorer view", "A's rates view", "Q1 answer: 42", "secret notes of A")
"""What visitor A types or imports: no page of visitor B's may show any of it."""


def _open(browser: Any, url: str, *, phone: bool) -> tuple[Any, Any]:
    context = browser.new_context(viewport={"width": 390, "height": 844} if phone else
                                  {"width": 1280, "height": 720})
    page = context.new_page()
    _JOURNALS[page] = journal(page)
    page.goto(url)
    wait_until_settled(page)
    return context, page


def _nav(page: Any, entry: str, path: str) -> None:
    """Open another page of the app from the sidebar's menu: the same session, as a visitor moves."""
    page.get_by_role("link", name=entry).click()
    page.wait_for_url(f"**/{path}*")
    wait_until_settled(page)


def two_visitors(browser: Any, url: str) -> None:
    """A lecturer (1280x720) and a student (a phone, 390x844) use decks on the app at ``url`` at once:
    each adds, imports, presents, replaces or deletes, and sees only their own decks and words."""
    lecturer, a = _open(browser, url + "/", phone=False)
    student, b = _open(browser, url + "/deck", phone=True)
    try:
        # A adds the Explorer's view and the Rates page's from the sidebar's box (a fragment each time).
        assert add_from_deck_box(a, A_WORDS[0], A_WORDS[3]) == "Added slide 1 to the deck Lecture."
        _nav(a, "Rates", "rates")
        assert add_from_deck_box(a, A_WORDS[1], A_WORDS[3]) == "Added slide 2 to the deck Lecture."
        _nav(a, "Lecture decks", "deck")
        said(a, r"Lecture \(2 slides\)")
        assert "for this visit only" in shown_text(a) and "Decks are kept in" not in shown_text(a)
        answer = import_deck(a, exam(A_WORDS[2], A_WORDS[3]), "Imported|exists")
        assert answer.startswith("Imported the deck Exam"), answer

        # B, on a phone, has no decks; a deck named as A's is B's own, and says nothing of A's.
        b.get_by_text("No decks yet").wait_for()
        answer = import_deck(b, exam("B's question", "notes of B"), "Imported|exists")
        assert answer.startswith("Imported the deck Exam"), answer
        said(b, r"Exam \(2 slides\)")
        text = shown_text(b)
        assert not [w for w in A_WORDS if w in text] and "Lecture" not in text.replace("Lecture decks", "")

        # B presents its deck (the first slide's view, with its bar), comes back, and deletes it.
        b.get_by_role("button", name="Present deck 1").click()
        said(b, r"Slide 1 of 2: B's question")
        wait_until_settled(b)
        b.get_by_role("button", name="End").click()
        said(b, r"Exam \(2 slides\)")
        b.get_by_role("button", name="Delete deck 1").click()
        b.get_by_text("No decks yet").wait_for()
        said(b, r"Deleted the deck Exam")  # its button is gone with the deck; the answer is not

        # A's decks are as A left them: A's Exam asks about A's own slides, and is replaced.
        import_deck(a, exam("Q1 answer: 43", A_WORDS[3]), "exists already")
        assert "Q1 answer: 42 \u2192 Q1 answer: 43" in shown_text(a) and "B's" not in shown_text(a)
        a.get_by_role("button", name="Replace").click()
        said(a, r"Replaced the deck Exam")
        said(a, r"Lecture \(2 slides\)")
        a.get_by_role("button", name="Present deck 2").click()
        said(a, r"Slide 1 of 2: A's explorer view")
        wait_until_settled(a)
        assert A_WORDS[3] in shown_text(a)  # the speaker notes, in the sidebar
        a.get_by_role("button", name="End").click()
        a.get_by_role("button", name="Delete deck 1").click()
        said(a, r"Deleted the deck Exam")
        assert "Q1 answer" not in shown_text(a) and "A's rates view" in shown_text(a)
    finally:
        lecturer.close()
        student.close()


def many_slides(count: int):
    """``count`` slides, each its own title (``slide k``), over five links."""
    from polarize.web.deck_store import Slide

    return tuple(Slide(link=f"/rates?n={3 + k % 5}", title=f"slide {k}") for k in range(count))
