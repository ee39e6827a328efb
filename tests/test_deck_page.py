"""The Lecture decks page (AppTest): the list, export, and importing a file: an edited deck taken after
showing what changed, a copy under a new name, what is not a deck refused in one line; Replace applied
to the deck as it is when answered, and a long deck drawn a page of slides at a time."""

from __future__ import annotations

import json
from pathlib import Path

from support.app import open_page, table_column
from support.decks import SLIDES, relinked, tampered
from support.decks import many_slides as _many_slides

from polarize.web.deck_file import read, to_json
from polarize.web.deck_store import Deck, DeckStore, Slide

# ---- the Deck page ----------------------------------------------------------------------------


def _page_with_a_deck(tmp_path, monkeypatch):
    monkeypatch.setenv("POLARIZE_DATA_DIR", str(tmp_path))
    from polarize.web import pages

    DeckStore.shared().save(Deck(name="Lecture *3* <b>", slides=SLIDES))
    return pages.DECK


def test_the_deck_page_lists_exports_and_reorders(tmp_path, monkeypatch):
    from polarize.web.view import Action, Columns, Table, Text

    spec = _page_with_a_deck(tmp_path, monkeypatch)
    job = spec.make_job({}, DeckStore.shared())
    view = spec.view(job)
    (table,) = [b for b in view.blocks if isinstance(b, Table)]
    assert [row["title"] for row in table.rows] == [s.title for s in SLIDES]  # a table shows text as it is
    texts = [b.text for b in view.blocks if isinstance(b, Text)]
    # The deck's name as a code span: shown as typed, never Markdown, HTML or a link (test_injection).
    assert any("`Lecture *3* <b>`" in t for t in texts)
    assert read(view.downloads[0].data()) == read(to_json(Deck(name="Lecture *3* <b>", slides=SLIDES)))
    rows = [b for b in view.blocks if isinstance(b, Columns)]
    buttons = [a for column in rows[0].columns for a in column if isinstance(a, Action)]
    down = next(a for a in buttons if a.label == "\u2193")
    assert down.run()[0] is True
    assert DeckStore.shared().get("Lecture *3* <b>").slides == (SLIDES[1], SLIDES[0], SLIDES[2])
    assert spec.make_job({}, DeckStore.shared()) != job  # the cached view is made again after a write


def _view(spec):
    """The Deck page's view of the server's decks (the tests share the disk: ``POLARIZE_DATA_DIR``)."""
    return spec.view(spec.make_job({}, DeckStore.shared()))


def _importer(spec):
    from polarize.web.view import Action

    (importer,) = [b for b in _view(spec).blocks if isinstance(b, Action) and b.upload]
    return importer


def _exported_and_edited(spec) -> bytes:
    """The page's own export of its deck, edited by hand: slide 1 retitled, slide 2 dropped."""
    data = json.loads(_view(spec).downloads[0].data())
    data["deck"]["slides"][0]["title"] = "Softmax polarizes, fast"
    del data["deck"]["slides"][1]
    return json.dumps(data, indent=2).encode()


EDITED = (Slide(link=SLIDES[0].link, title="Softmax polarizes, fast", notes=SLIDES[0].notes), SLIDES[2])


def test_an_exported_deck_edited_by_hand_is_imported_after_showing_what_changed(tmp_path, monkeypatch):
    spec = _page_with_a_deck(tmp_path, monkeypatch)
    ok, message, choices = _importer(spec).run(_exported_and_edited(spec))
    assert ok and "edited after it was exported" in message and "exists already" in message
    lines = [line for line in message.splitlines() if line.startswith("- ")]
    assert lines == ["- slide 1, title: `Softmax polarizes` \u2192 `Softmax polarizes, fast`",
                     "- slide 2 removed: `Losses: *not* markdown <b>`"]
    assert [c.label for c in choices] == ["Replace", "Import as a copy", "Cancel"]
    assert DeckStore.shared().get("Lecture *3* <b>").slides == SLIDES  # nothing changes before the answer
    ok, said = choices[0].run()
    assert ok and said.startswith("Replaced the deck `Lecture *3* <b>`")
    assert DeckStore.shared().names() == ["Lecture *3* <b>"]
    assert DeckStore.shared().get("Lecture *3* <b>").slides == EDITED  # the edits kept


def test_a_deck_that_exists_can_be_imported_as_a_copy_under_a_new_name(tmp_path, monkeypatch):
    spec = _page_with_a_deck(tmp_path, monkeypatch)
    for number in (2, 3):
        _, _, choices = _importer(spec).run(_exported_and_edited(spec))
        ok, said = {c.label: c for c in choices}["Import as a copy"].run()
        assert ok and f"`Lecture *3* <b> ({number})`" in said
    assert DeckStore.shared().names() == ["Lecture *3* <b>", "Lecture *3* <b> (2)", "Lecture *3* <b> (3)"]
    assert DeckStore.shared().get("Lecture *3* <b>").slides == SLIDES
    assert DeckStore.shared().get("Lecture *3* <b> (3)").slides == EDITED


def test_reimporting_an_unchanged_export_says_so_and_offers_a_copy(tmp_path, monkeypatch):
    spec = _page_with_a_deck(tmp_path, monkeypatch)
    ok, message, choices = _importer(spec).run(_view(spec).downloads[0].data().encode())
    assert ok and "holds the same slides as the file" in message and "edited" not in message
    assert [c.label for c in choices] == ["Import as a copy", "Cancel"]
    assert choices[1].run() == (True, "Nothing was imported.")
    assert DeckStore.shared().names() == ["Lecture *3* <b>"]


def test_what_is_not_a_deck_is_refused_in_one_line_and_changes_nothing(tmp_path, monkeypatch):
    spec = _page_with_a_deck(tmp_path, monkeypatch)
    before = DeckStore.shared().path.read_bytes()
    ok, message = _importer(spec).run(tampered(relinked))
    assert not ok and "slides.0.link" in message and "\n" not in message
    assert DeckStore.shared().path.read_bytes() == before
    ok, message = _importer(spec).run(tampered(lambda d: d.update(name="New")).encode())  # edited, new name
    assert ok and "edited after it was exported" in message
    assert DeckStore.shared().names() == ["Lecture *3* <b>", "New"]
    assert DeckStore.shared().get("New").slides == SLIDES


def test_changes_match_unchanged_slides_first():
    from polarize.web.deck_file import Change, changes

    a, b, c = SLIDES
    d = Slide(link="/rates?n=3", title="New one")
    assert changes(Deck(name="x", slides=SLIDES), Deck(name="x", slides=(a, d, b, c))) == [
        Change(kind="added", place=2, after="New one")]
    assert changes(Deck(name="x", slides=SLIDES), Deck(name="x", slides=(a, c))) == [
        Change(kind="removed", place=2, before=b.title)]
    retitled = Slide(link=c.link, title=c.title, notes="other notes")
    assert changes(Deck(name="x", slides=SLIDES), Deck(name="x", slides=(a, b, retitled))) == [
        Change(kind="notes", place=3, before=c.notes, after="other notes")]
    assert changes(Deck(name="x", slides=SLIDES), Deck(name="x", slides=SLIDES)) == []


def test_a_copy_gets_the_first_free_number_and_stays_within_the_longest_name():
    from polarize.web.deck_file import copy_name

    assert copy_name("Lecture", ["Lecture"]) == "Lecture (2)"
    assert copy_name("Lecture", {"Lecture", "Lecture (2)", "Lecture (3)"}) == "Lecture (4)"
    long = "x" * 100
    assert copy_name(long, [long]) == "x" * 96 + " (2)" and len(copy_name(long, [long])) == 100


def test_the_deck_page_in_the_app(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    _page_with_a_deck(tmp_path, monkeypatch)
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=60)
    at.run()
    open_page(at, "deck").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Lecture decks"
    at.button(key="deck_remove0_0").click().run()
    assert not at.exception and [s.value for s in at.success] == ["Removed slide 1."]
    assert DeckStore.shared().get("Lecture *3* <b>").slides == SLIDES[1:]


# ---- the import on the page (AppTest): upload, see the changes, answer ----------------------------


def _page_after_upload(tmp_path, monkeypatch, upload: bytes):
    from support.app import page

    spec = _page_with_a_deck(tmp_path, monkeypatch)
    at = page("deck", timeout=60).run()
    at.file_uploader(key="deck_import").set_value(("lecture.json", upload(spec), "application/json")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_page_shows_an_edited_decks_changes_and_replaces_it_when_asked(tmp_path, monkeypatch):
    at = _page_after_upload(tmp_path, monkeypatch, _exported_and_edited)
    (question,) = at.info
    assert "slide 2 removed: `Losses: *not* markdown <b>`" in question.value
    assert "`Softmax polarizes` \u2192 `Softmax polarizes, fast`" in question.value
    assert at.button(key="deck_import_replace").label == "Replace"
    assert DeckStore.shared().get("Lecture *3* <b>").slides == SLIDES
    at.run()  # the question stays until it is answered
    assert len(at.info) == 1
    at.button(key="deck_import_replace").click().run()
    assert not at.exception and [s.value for s in at.success] == [
        "Replaced the deck `Lecture *3* <b>`: it has the file's 2 slides."]
    assert not at.info and DeckStore.shared().get("Lecture *3* <b>").slides == EDITED
    assert table_column(at, "title") == [s.title for s in EDITED]  # the page shows it


def test_the_page_imports_a_copy_or_nothing_as_answered(tmp_path, monkeypatch):
    at = _page_after_upload(tmp_path, monkeypatch, _exported_and_edited)
    at.button(key="deck_import_copy").click().run()
    assert [s.value for s in at.success] == ["Imported the deck as `Lecture *3* <b> (2)` (2 slides)."]
    assert DeckStore.shared().names() == ["Lecture *3* <b>", "Lecture *3* <b> (2)"]
    at.file_uploader(key="deck_import").set_value(("again.json", _exported_and_edited(pages_deck()),
                                                   "application/json")).run()
    at.button(key="deck_import_cancel").click().run()
    assert [s.value for s in at.success] == ["Nothing was imported."]
    assert DeckStore.shared().names() == ["Lecture *3* <b>", "Lecture *3* <b> (2)"]


def test_the_page_refuses_what_is_not_a_deck_in_one_line(tmp_path, monkeypatch):
    at = _page_after_upload(tmp_path, monkeypatch, lambda spec: b'{"format": "polarize-deck"}')
    (error,) = at.error
    assert "file" in error.value and "\n" not in error.value and not at.info


def pages_deck():
    from polarize.web import pages

    return pages.DECK


# ---- Replace as the deck is now; a long deck drawn a page at a time ----------------------------------


def test_replace_asks_again_when_the_deck_changed_after_the_question(tmp_path, monkeypatch):
    import json

    from polarize.web import deck_file, pages
    from polarize.web.deck_store import Deck, DeckStore, Slide
    from polarize.web.view import Action

    monkeypatch.setenv("POLARIZE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("POLARIZE_HOSTED", raising=False)
    first = Slide(link="/rates", title="one")
    DeckStore.shared().save(Deck(name="Lecture", slides=(first,)))
    spec = pages.DECK
    job = spec.make_job({}, DeckStore.shared())
    (importer,) = [b for b in spec.view(job).blocks if isinstance(b, Action) and b.upload]
    data = json.loads(deck_file.to_json(Deck(name="Lecture", slides=(Slide(link="/rates", title="file"),))))
    ok, _, choices = importer.run(json.dumps(data).encode())
    assert ok and choices[0].label == "Replace"
    late = Slide(link="/explorer?n=5", title="added after the question")
    DeckStore.shared().add_slide("Lecture", late)
    answer = choices[0].run()
    assert DeckStore.shared().get("Lecture").slides == (first, late)  # nothing lost
    assert len(answer) == 3 and "changed" in answer[1] and "added after the question" in answer[1]
    again = {c.label: c for c in answer[2]}
    ok, _ = again["Replace"].run()  # asked about the deck as it is now: Replace applies
    assert ok and DeckStore.shared().get("Lecture").slides == (Slide(link="/rates", title="file"),)


def test_the_deck_page_draws_a_page_of_slides_whatever_the_decks_length(tmp_path, monkeypatch):
    from polarize.web import pages
    from polarize.web.deck_store import Deck, DeckStore
    from polarize.web.view import Columns

    monkeypatch.setenv("POLARIZE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("POLARIZE_HOSTED", raising=False)
    spec = pages.DECK
    DeckStore.shared().save(Deck(name="short", slides=_many_slides(30)))
    short = spec.view(spec.make_job({}, DeckStore.shared()))
    DeckStore.shared().save(Deck(name="short", slides=_many_slides(500)), replace=True)
    long = spec.view(spec.make_job({}, DeckStore.shared()))
    rows = [b for b in long.blocks if isinstance(b, Columns)]
    assert len(long.blocks) == len(short.blocks) and len(rows) <= 30
    later = spec.view(spec.make_job({"page": 3}, DeckStore.shared()))
    titles = " ".join(getattr(b, "text", "") for col in [b for b in later.blocks if isinstance(b, Columns)]
                      for column in col.columns for b in column)
    first = (3 - 1) * len(rows)
    assert f"slide {first}`" in titles and "slide 0`" not in titles


def test_deleting_the_only_deck_says_so(tmp_path, monkeypatch):
    """The answer of a button the rerun no longer draws (the last deck's Delete) is still shown."""
    from support.app import page

    _page_with_a_deck(tmp_path, monkeypatch)
    at = page("deck", timeout=60).run()
    at.button(key="deck_delete0").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [s.value for s in at.success] == ["Deleted the deck `Lecture *3* <b>`."]
    assert DeckStore.shared().names() == []
    at.run()  # a rerun queued behind the action's (a fragment's) drew it again: the answer stays
    assert [s.value for s in at.success] == ["Deleted the deck `Lecture *3* <b>`."]


def test_the_page_shows_what_its_last_action_said_until_the_next(tmp_path, monkeypatch):
    """An answer stays through the reruns that follow (one queued behind the action's drew the page
    again at once, and the answer shown once was gone before a visitor could read it), and the next
    action's answer takes its place: one answer at a time."""
    from support.app import page

    _page_with_a_deck(tmp_path, monkeypatch)
    at = page("deck", timeout=60).run()
    at.button(key="deck_down0_0").click().run()
    first = [s.value for s in at.success]
    assert len(first) == 1, first
    at.run()
    assert [s.value for s in at.success] == first
    at.button(key="deck_remove0_2").click().run()
    second = [s.value for s in at.success]
    assert len(second) == 1 and second != first, (first, second)
    assert not at.exception, [e.value for e in at.exception]
