"""Lecture decks: SQLite and JSON round trips, files that are not decks refused, hand-edited ones
taken after showing what changed, concurrent writers."""

from __future__ import annotations

import json
import multiprocessing
import sys
from pathlib import Path

import pytest
from app_support import open_page

from polarize.web.deck_file import digest, from_json, read, to_json
from polarize.web.deck_store import Deck, DeckError, DeckStore, Slide, data_dir

SLIDES = (
    Slide(link="/explorer?n=8&loss=logistic", title="Softmax polarizes", notes="Point at the winner."),
    Slide(link="/losses?n=8&horizon=1e6", title="Losses: *not* markdown <b>", notes=""),
    Slide(link="/rates", title="How slowly", notes="1/log t\nsecond line"),
)


@pytest.fixture
def store(tmp_path):
    return DeckStore(tmp_path / "data" / "decks.sqlite3")


def test_data_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("POLARIZE_DATA_DIR", str(tmp_path / "here"))
    assert data_dir() == tmp_path / "here"
    assert DeckStore().path == tmp_path / "here" / "decks.sqlite3"
    monkeypatch.delenv("POLARIZE_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):  # Windows and macOS have folders of their own
        assert data_dir() == tmp_path / "xdg" / "polarize"


def test_round_trip_through_sqlite_and_json(store, tmp_path):
    assert store.names() == [] and not store.path.exists()  # reading makes no file
    for slide in SLIDES:
        store.add_slide("Lecture 3", slide)
    deck = store.get("Lecture 3")
    assert deck == Deck(name="Lecture 3", slides=SLIDES)
    other = DeckStore(tmp_path / "elsewhere.sqlite3")  # another machine
    other.save(from_json(to_json(store.get("Lecture 3"))))
    assert other.get("Lecture 3") == deck and other.names() == ["Lecture 3"]


def test_reorder_and_remove(store):
    store.save(Deck(name="d", slides=SLIDES))
    assert store.move("d", 2, 0).slides == (SLIDES[2], SLIDES[0], SLIDES[1])
    assert store.get("d").slides == (SLIDES[2], SLIDES[0], SLIDES[1])
    assert store.remove("d", 1).slides == (SLIDES[2], SLIDES[1])
    with pytest.raises(DeckError) as info:
        store.move("d", 0, 5)
    assert info.value.field == "index"
    assert store.get("d").slides == (SLIDES[2], SLIDES[1])
    store.delete("d")
    assert store.names() == []


def test_saving_does_not_overwrite_unless_asked(store):
    store.save(Deck(name="d", slides=SLIDES[:1]))
    deck = from_json(to_json(Deck(name="d", slides=SLIDES)))
    with pytest.raises(DeckError) as info:
        store.save(deck)
    assert info.value.field == "name" and store.get("d").slides == SLIDES[:1]
    store.save(deck, replace=True)
    assert store.get("d").slides == SLIDES


def _tampered(edit, *, resign=False):
    """A deck file edited after export; ``resign``: its SHA-256 recomputed, as a deliberate forger would."""
    data = json.loads(to_json(Deck(name="d", slides=SLIDES)))
    edit(data["deck"])
    if resign:
        data["sha256"] = digest(data["deck"])
    return json.dumps(data)


def _relink(deck, link="javascript:alert(1)"):
    deck["slides"][0]["link"] = link


@pytest.mark.parametrize(("text", "field"), [
    ("{not json", "file"),
    (b"\x89PNG\r\n\x1a\n", "file"),
    ('{"format": "polarize-deck", "version": 2, "deck": {}, "sha256": ""}', "file"),
    ('[1, 2]', "file"),
    (_tampered(_relink), "slides.0.link"),  # edited by hand, and not a deck: the field named
    (_tampered(_relink, resign=True), "slides.0.link"),
    (_tampered(lambda d: _relink(d, "https://example.org/x"), resign=True), "slides.0.link"),
    (_tampered(lambda d: d["slides"][0].update(extra=1), resign=True), "slides.0"),
    (_tampered(lambda d: d.update(slides="all"), resign=True), "slides"),
    (_tampered(lambda d: d["slides"][0].update(notes="x" * 10001), resign=True), "slides.0.notes"),
])
def test_what_is_not_a_deck_is_refused_naming_the_field(store, text, field):
    store.save(Deck(name="d", slides=SLIDES[:1]))
    before = store.path.read_bytes()
    with pytest.raises(DeckError) as info:
        store.save(from_json(text), replace=True)
    assert info.value.field == field
    assert store.path.read_bytes() == before and store.get("d").slides == SLIDES[:1]


def test_fields_are_checked_once_naming_the_field():
    for kwargs, field in [(dict(link="", title="t"), "link"), (dict(link="/x", title=" "), "title"),
                          (dict(link="//evil.org/x", title="t"), "link"),
                          (dict(link="/x", title="t" * 201), "title"), (dict(link="/x", title=3), "title")]:
        with pytest.raises(DeckError) as info:
            Slide(**kwargs)
        assert info.value.field == field


def test_a_corrupt_database_is_a_clear_error_and_is_left_alone(tmp_path):
    path = tmp_path / "decks.sqlite3"
    path.write_bytes(b"this is not a database at all" * 100)
    before = path.read_bytes()
    store = DeckStore(path)
    for action in (store.names, lambda: store.add_slide("d", SLIDES[0]), lambda: store.save(
            Deck(name="d", slides=SLIDES))):
        with pytest.raises(DeckError, match="not a deck database") as info:
            action()
        assert info.value.field == "file"
    assert path.read_bytes() == before


def _writer(path, worker, count):
    store = DeckStore(path)
    for k in range(count):
        store.add_slide("shared", Slide(link=f"/explorer?seed={worker * 1000 + k}", title=f"{worker}-{k}"))


def test_concurrent_writers_lose_nothing(tmp_path):
    path, workers, count = tmp_path / "decks.sqlite3", 3, 15
    context = multiprocessing.get_context("spawn" if multiprocessing.get_start_method() != "fork" else "fork")
    processes = [context.Process(target=_writer, args=(path, w, count)) for w in range(workers)]
    for p in processes:
        p.start()
    for p in processes:
        p.join(60)
        assert p.exitcode == 0
    titles = [s.title for s in DeckStore(path).get("shared").slides]
    assert sorted(titles) == sorted(f"{w}-{k}" for w in range(workers) for k in range(count))
    for w in range(workers):  # each writer's slides stay in its own order
        mine = [t for t in titles if t.startswith(f"{w}-")]
        assert mine == [f"{w}-{k}" for k in range(count)]


# ---- the Deck page ----------------------------------------------------------------------------


def _page_with_a_deck(tmp_path, monkeypatch):
    monkeypatch.setenv("POLARIZE_DATA_DIR", str(tmp_path))
    from polarize.web import pages

    DeckStore().save(Deck(name="Lecture *3* <b>", slides=SLIDES))
    return pages.DECK


def test_the_deck_page_lists_exports_and_reorders(tmp_path, monkeypatch):
    from polarize.web.view import Action, Columns, Table, Text

    spec = _page_with_a_deck(tmp_path, monkeypatch)
    job = spec.make_job({})
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
    assert DeckStore().get("Lecture *3* <b>").slides == (SLIDES[1], SLIDES[0], SLIDES[2])
    assert spec.make_job({}) != job  # the cached view is made again after a write


def _importer(spec):
    from polarize.web.view import Action

    (importer,) = [b for b in spec.view(spec.make_job({})).blocks if isinstance(b, Action) and b.upload]
    return importer


def _exported_and_edited(spec) -> bytes:
    """The page's own export of its deck, edited by hand: slide 1 retitled, slide 2 dropped."""
    data = json.loads(spec.view(spec.make_job({})).downloads[0].data())
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
    assert DeckStore().get("Lecture *3* <b>").slides == SLIDES  # nothing changes before the answer
    ok, said = choices[0].run()
    assert ok and said.startswith("Replaced the deck `Lecture *3* <b>`")
    assert DeckStore().names() == ["Lecture *3* <b>"]
    assert DeckStore().get("Lecture *3* <b>").slides == EDITED  # the edits kept


def test_a_deck_that_exists_can_be_imported_as_a_copy_under_a_new_name(tmp_path, monkeypatch):
    spec = _page_with_a_deck(tmp_path, monkeypatch)
    for number in (2, 3):
        _, _, choices = _importer(spec).run(_exported_and_edited(spec))
        ok, said = {c.label: c for c in choices}["Import as a copy"].run()
        assert ok and f"`Lecture *3* <b> ({number})`" in said
    assert DeckStore().names() == ["Lecture *3* <b>", "Lecture *3* <b> (2)", "Lecture *3* <b> (3)"]
    assert DeckStore().get("Lecture *3* <b>").slides == SLIDES
    assert DeckStore().get("Lecture *3* <b> (3)").slides == EDITED


def test_reimporting_an_unchanged_export_says_so_and_offers_a_copy(tmp_path, monkeypatch):
    spec = _page_with_a_deck(tmp_path, monkeypatch)
    ok, message, choices = _importer(spec).run(spec.view(spec.make_job({})).downloads[0].data().encode())
    assert ok and "holds the same slides as the file" in message and "edited" not in message
    assert [c.label for c in choices] == ["Import as a copy", "Cancel"]
    assert choices[1].run() == (True, "Nothing was imported.") and DeckStore().names() == ["Lecture *3* <b>"]


def test_what_is_not_a_deck_is_refused_in_one_line_and_changes_nothing(tmp_path, monkeypatch):
    spec = _page_with_a_deck(tmp_path, monkeypatch)
    before = DeckStore().path.read_bytes()
    ok, message = _importer(spec).run(_tampered(_relink))
    assert not ok and "slides.0.link" in message and "\n" not in message
    assert DeckStore().path.read_bytes() == before
    ok, message = _importer(spec).run(_tampered(lambda d: d.update(name="New")).encode())  # edited, new name
    assert ok and "edited after it was exported" in message
    assert DeckStore().names() == ["Lecture *3* <b>", "New"] and DeckStore().get("New").slides == SLIDES


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
    assert DeckStore().get("Lecture *3* <b>").slides == SLIDES[1:]


# ---- hostile files and stores (issue 22): one sentence naming the folder, never a raw error --------


def _one_sentence(error: DeckError, folder: Path) -> None:
    text = str(error)
    assert "\n" not in text and str(folder) in text and ("POLARIZE_DATA_DIR" in text or "try again" in text)


def _every_call(store: DeckStore):
    """Each of the store's calls, the view documented never to raise among them."""
    from polarize.web.deck_store import use
    from polarize.web.pages.deck import deck_view

    use(store)
    return (store.names, store.revision, lambda: store.get("d"), lambda: store.add_slide("d", SLIDES[0]),
            lambda: store.move("d", 0, 0), lambda: store.remove("d", 0), lambda: store.delete("d"),
            lambda: store.save(Deck(name="d", slides=SLIDES), replace=True),
            lambda: (_ for _ in ()).throw(DeckError("view", deck_view().error or "no error")))


def test_a_folder_where_the_database_file_should_be_is_one_sentence(tmp_path):
    (tmp_path / "decks.sqlite3").mkdir()
    store = DeckStore(tmp_path / "decks.sqlite3")
    try:
        for call in _every_call(store):
            with pytest.raises(DeckError) as info:
                call()
            assert str(tmp_path) in str(info.value) and "\n" not in str(info.value)
    finally:
        from polarize.web.deck_store import use
        use(None)


def test_a_data_folder_inside_a_file_is_one_sentence(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    store = DeckStore(tmp_path / "file" / "data" / "decks.sqlite3")
    assert store.names() == []  # nothing to read: no decks
    with pytest.raises(DeckError) as info:
        store.add_slide("d", SLIDES[0])
    _one_sentence(info.value, tmp_path / "file" / "data")


def test_a_damaged_revision_is_one_sentence(store):
    import sqlite3

    store.add_slide("d", SLIDES[0])
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE revision SET value = 'abc'")
    with pytest.raises(DeckError) as info:
        store.revision()
    _one_sentence(info.value, store.path.parent)


@pytest.mark.parametrize(("index", "to"), [("0", 0), (0.5, 0), (0, "1"), (True, 0), (None, 0), (0, 1.0)])
def test_slide_places_must_be_whole_numbers(store, index, to):
    store.save(Deck(name="D", slides=SLIDES))
    with pytest.raises(DeckError) as info:
        store.move("D", index, to)
    assert info.value.field in ("index", "to")
    if not isinstance(index, int) or isinstance(index, bool):
        with pytest.raises(DeckError):
            store.remove("D", index)
    assert store.get("D").slides == SLIDES


READER = """
import sys
from polarize.web.deck_store import DeckStore, DeckError, Slide
store = DeckStore(sys.argv[1])
print(store.names(), store.get("D").slides[0].title, store.revision())
try:
    store.add_slide("D", Slide(link="/rates", title="x"))
except DeckError as exc:
    print("REFUSED", exc)
"""


def test_a_read_only_store_can_be_read_and_refuses_writes_in_one_sentence(tmp_path):
    """Reads write nothing (no schema); a write says what to do. As root, read as user nobody."""
    import os
    import shutil
    import subprocess
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="polarize-ro-"))
    try:
        path = folder / "decks.sqlite3"
        DeckStore(path).save(Deck(name="D", slides=SLIDES))
        before = path.read_bytes()
        path.chmod(0o444)
        folder.chmod(0o555)
        prefix = []
        if os.geteuid() == 0:
            if not shutil.which("setpriv"):
                pytest.skip("root, and no setpriv to read as another user")
            prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        root = Path(__file__).resolve().parents[1]
        done = subprocess.run([*prefix, sys.executable, "-c", READER, str(path)], capture_output=True,
                              text=True, timeout=120, cwd=folder, env={**os.environ, "PYTHONPATH": str(root)})
        assert done.returncode == 0, done.stderr
        listed, refused = done.stdout.splitlines()
        assert listed == "['D'] Softmax polarizes 1"
        assert refused.startswith("REFUSED file:") and str(folder) in refused
        assert "POLARIZE_DATA_DIR" in refused
        assert path.read_bytes() == before
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


def test_an_upload_of_deeply_nested_json_is_one_line():
    with pytest.raises(DeckError, match="deeper") as info:
        from_json("[" * 200_000 + "]" * 200_000)
    assert info.value.field == "file"


def test_a_lone_surrogate_in_a_title_is_refused_in_words():
    content = {"name": "D", "slides": [{"title": "bad \ud800 title", "link": "/rates", "notes": ""}]}
    text = json.dumps({"format": "polarize-deck", "version": 1, "deck": content, "sha256": digest(content)})
    assert "\\ud800" in text  # a valid JSON escape, with a correct checksum
    store = DeckStore.in_memory()
    with pytest.raises(DeckError, match="surrogate") as info:
        store.save(from_json(text))
    assert info.value.field == "slides.0.title" and store.names() == []


@pytest.mark.parametrize("upload", [("[" * 100_000).encode(), b'{"format": "\\ud800"}', b"\xff\xfe",
                                    b"{" * 5])
def test_the_deck_page_import_says_one_line_for_any_upload(upload):
    from polarize.web.deck_store import use
    from polarize.web.pages.deck import _import

    use(DeckStore.in_memory())
    try:
        ok, message = _import(upload)
    finally:
        use(None)
    assert not ok and "\n" not in message


# ---- the import on the page (AppTest): upload, see the changes, answer ----------------------------


def _page_after_upload(tmp_path, monkeypatch, upload: bytes):
    from app_support import page

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
    assert DeckStore().get("Lecture *3* <b>").slides == SLIDES
    at.run()  # the question stays until it is answered
    assert len(at.info) == 1
    at.button(key="deck_import_replace").click().run()
    assert not at.exception and [s.value for s in at.success] == [
        "Replaced the deck `Lecture *3* <b>`: it has the file's 2 slides."]
    assert not at.info and DeckStore().get("Lecture *3* <b>").slides == EDITED
    assert [row for row in at.dataframe[0].value["title"]] == [s.title for s in EDITED]  # the page shows it


def test_the_page_imports_a_copy_or_nothing_as_answered(tmp_path, monkeypatch):
    at = _page_after_upload(tmp_path, monkeypatch, _exported_and_edited)
    at.button(key="deck_import_copy").click().run()
    assert [s.value for s in at.success] == ["Imported the deck as `Lecture *3* <b> (2)` (2 slides)."]
    assert DeckStore().names() == ["Lecture *3* <b>", "Lecture *3* <b> (2)"]
    at.file_uploader(key="deck_import").set_value(("again.json", _exported_and_edited(pages_deck()),
                                                   "application/json")).run()
    at.button(key="deck_import_cancel").click().run()
    assert [s.value for s in at.success] == ["Nothing was imported."]
    assert DeckStore().names() == ["Lecture *3* <b>", "Lecture *3* <b> (2)"]


def test_the_page_refuses_what_is_not_a_deck_in_one_line(tmp_path, monkeypatch):
    at = _page_after_upload(tmp_path, monkeypatch, lambda spec: b'{"format": "polarize-deck"}')
    (error,) = at.error
    assert "file" in error.value and "\n" not in error.value and not at.info


def pages_deck():
    from polarize.web import pages

    return pages.DECK
