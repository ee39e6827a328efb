"""Lecture decks: SQLite and JSON round trips, files that are not decks refused, hand-edited ones
taken after showing what changed, concurrent writers; a visitor's decks private to their session unless
an operator shares them (and the README says which setting does), a session's decks bounded."""

from __future__ import annotations

import json
import multiprocessing
import sys
from pathlib import Path

import pytest
from support.decks import SLIDES, relinked, tampered
from support.decks import many_slides as _many_slides

from polarize.web.deck_file import digest, from_json, to_json
from polarize.web.deck_store import Deck, DeckError, DeckStore, Slide, data_dir


@pytest.fixture
def store(tmp_path):
    return DeckStore(tmp_path / "data" / "decks.sqlite3")


def test_data_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("POLARIZE_DATA_DIR", str(tmp_path / "here"))
    assert data_dir() == tmp_path / "here"
    assert DeckStore.shared().path == tmp_path / "here" / "decks.sqlite3"
    monkeypatch.delenv("POLARIZE_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):  # Windows and macOS have folders of their own
        assert data_dir() == tmp_path / "xdg" / "polarize"


@pytest.mark.parametrize(("env", "shared"), [
    ({}, False), ({"POLARIZE_HOSTED": "1"}, False),
    ({"POLARIZE_HOSTED": "1", "POLARIZE_DATA_DIR": "x"}, False),
    ({"POLARIZE_HOSTED": "0"}, True), ({"POLARIZE_DATA_DIR": "x"}, True)])
def test_the_servers_file_is_reached_only_where_an_operator_shares_the_disk(tmp_path, monkeypatch, env,
                                                                           shared):
    for name in ("POLARIZE_HOSTED", "POLARIZE_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    for name, value in env.items():
        monkeypatch.setenv(name, str(tmp_path / value) if name == "POLARIZE_DATA_DIR" else value)
    if shared:
        DeckStore.shared().add_slide("d", SLIDES[0])
        assert DeckStore.shared().names() == ["d"]
        return
    with pytest.raises(DeckError) as info:
        DeckStore.shared()
    assert info.value.field == "POLARIZE_HOSTED" and "\n" not in str(info.value)
    assert not any(tmp_path.rglob("*"))  # nothing made on the way


def test_the_deck_page_is_handed_its_visitors_store_or_refuses():
    """No ambient store to fall back to: the Deck page's job needs the visitor's store, and its view
    and every button act on that store alone."""
    from polarize.web import pages
    from polarize.web.view import Action, Columns

    with pytest.raises(TypeError, match="deck store"):
        pages.DECK.make_job({})
    mine, theirs = DeckStore.in_memory(), DeckStore.in_memory()
    for store in (mine, theirs):
        store.save(Deck(name="Lecture", slides=SLIDES))
    view = pages.DECK.view(pages.DECK.make_job({}, mine))
    rows = [b for b in view.blocks if isinstance(b, Columns)]
    remove = next(a for column in rows[0].columns for a in column
                  if isinstance(a, Action) and a.label == "\u2715")
    assert remove.run()[0] and len(mine.get("Lecture").slides) == 2 and theirs.get("Lecture").slides == SLIDES
    (delete,) = [b for b in view.blocks if isinstance(b, Action) and b.label == "Delete deck 1"]
    assert delete.run()[0] and mine.names() == [] and theirs.names() == ["Lecture"]
    assert pages.DECK.make_job({}, mine) != pages.DECK.make_job({}, theirs)  # one view each in the cache


def test_the_app_makes_deck_stores_in_one_place():
    """Every store the app uses comes from ``ui.deckbar.visitor_store`` (the session's own, or the server's
    file where shared): no page, view or renderer makes one of its own, which could be the disk's."""
    import ast

    root = Path(__file__).resolve().parents[1]
    made = set()
    for path in [*root.glob("polarize/**/*.py"), *root.glob("ui/**/*.py"), *root.glob("pages/*.py"),
                 root / "app.py"]:
        tree = ast.parse(path.read_text())
        for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
            for call in [n for n in ast.walk(function) if isinstance(n, ast.Call)]:
                called = ast.unparse(call.func)
                if called == "DeckStore" or called.startswith(("DeckStore.", "deck.DeckStore")):
                    made.add((str(path.relative_to(root)), function.name, called.rsplit(".", 1)[-1]))
    assert made == {("ui/deckbar.py", "visitor_store", "shared"),
                    ("ui/deckbar.py", "visitor_store", "in_memory")}


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


@pytest.mark.parametrize(("text", "field"), [
    ("{not json", "file"),
    (b"\x89PNG\r\n\x1a\n", "file"),
    ('{"format": "polarize-deck", "version": 2, "deck": {}, "sha256": ""}', "file"),
    ('[1, 2]', "file"),
    (tampered(relinked), "slides.0.link"),  # edited by hand, and not a deck: the field named
    (tampered(relinked, resign=True), "slides.0.link"),
    (tampered(lambda d: relinked(d, "https://example.org/x"), resign=True), "slides.0.link"),
    (tampered(lambda d: d["slides"][0].update(extra=1), resign=True), "slides.0"),
    (tampered(lambda d: d.update(slides="all"), resign=True), "slides"),
    (tampered(lambda d: d["slides"][0].update(notes="x" * 10001), resign=True), "slides.0.notes"),
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


# ---- hostile files and stores (issue 22): one sentence naming the folder, never a raw error --------


def _one_sentence(error: DeckError, folder: Path) -> None:
    text = str(error)
    assert "\n" not in text and str(folder) in text and ("POLARIZE_DATA_DIR" in text or "try again" in text)


def _every_call(store: DeckStore):
    """Each of the store's calls, the view documented never to raise among them."""
    from polarize.web.pages.deck import DeckJob, deck_view

    return (store.names, store.revision, lambda: store.get("d"), lambda: store.add_slide("d", SLIDES[0]),
            lambda: store.move("d", 0, 0), lambda: store.remove("d", 0), lambda: store.delete("d"),
            lambda: store.save(Deck(name="d", slides=SLIDES), replace=True),
            lambda: (_ for _ in ()).throw(DeckError("view", deck_view(DeckJob.of({}, store)).error
                                                                  or "no error")))


def test_a_folder_where_the_database_file_should_be_is_one_sentence(tmp_path):
    (tmp_path / "decks.sqlite3").mkdir()
    store = DeckStore(tmp_path / "decks.sqlite3")
    for call in _every_call(store):
        with pytest.raises(DeckError) as info:
            call()
        assert str(tmp_path) in str(info.value) and "\n" not in str(info.value)


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
    from polarize.web.pages.deck import _import

    ok, message = _import(DeckStore.in_memory(), upload)
    assert not ok and "\n" not in message


# ---- private to a session unless an operator shares them; bounded per session -----------------------


@pytest.mark.parametrize(("hosted", "data_dir", "shared"), [
    (None, None, False), ("0", None, True), ("off", None, True), (None, "SET", True),
    ("1", "SET", False), ("1", None, False), ("", None, False)])
def test_decks_are_shared_only_where_an_operator_asked(monkeypatch, tmp_path, hosted, data_dir, shared):
    from polarize.env import shares_disk

    for var, value in (("POLARIZE_HOSTED", hosted), ("POLARIZE_DATA_DIR", data_dir and str(tmp_path))):
        if value is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, value)
    assert shares_disk() is shared


def test_decks_stay_in_their_session_on_a_host_that_sets_nothing(tmp_path, monkeypatch):
    """Streamlit Community Cloud sets neither variable: one visitor's decks are not another's."""
    from streamlit.testing.v1 import AppTest
    from support.app import open_deck_box, open_page

    from polarize.web.deck_store import DeckError, DeckStore

    monkeypatch.delenv("POLARIZE_HOSTED", raising=False)
    monkeypatch.delenv("POLARIZE_DATA_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    app = str(Path(__file__).resolve().parents[1] / "app.py")
    one, other = AppTest.from_file(app, default_timeout=120), AppTest.from_file(app, default_timeout=120)
    open_deck_box(one).run()
    one.text_input(key="explorer_deckbar_title").input("mine")
    next(b for b in one.button if b.label == "Add to deck").click().run()
    assert not one.exception
    assert [s.value for s in one.success] == ["Added slide 1 to the deck `Lecture`."]
    open_page(other, "deck").run()
    assert not other.exception
    assert not [m.value for m in other.markdown if "mine" in m.value]
    assert not any(str(tmp_path) in c.value for c in other.caption)
    assert any("for this visit only" in c.value for c in other.caption)
    assert not list(tmp_path.rglob("decks.sqlite3"))
    with pytest.raises(DeckError, match="POLARIZE_HOSTED=0"):  # the server's file: refused, not made
        DeckStore.shared()


def test_the_readme_says_which_setting_keeps_decks_private_on_each_host():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    hosting = readme[readme.index("## Host it"):readme.index("## The library")]
    table = hosting[hosting.index("| Host |"):]
    for host in ("Hugging Face Spaces", "Any Docker host", "Streamlit Community Cloud"):
        (row,) = [line for line in table.splitlines() if line.startswith(f"| {host} |")]
        assert "private" in row
    assert "POLARIZE_HOSTED=0" in hosting and "POLARIZE_DATA_DIR" in hosting


def test_a_session_holds_a_bounded_number_of_decks_and_slides():
    from polarize.web.deck_store import SESSION, Deck, DeckError, DeckStore

    store = DeckStore.in_memory()
    big = _many_slides(500)
    saved = 0
    with pytest.raises(DeckError) as info:
        for k in range(100):
            store.save(Deck(name=f"deck {k}", slides=big))
            saved += 1
    cap = str(SESSION[info.value.field])
    assert info.value.field in ("decks", "slides") and cap in str(info.value).replace(",", "")
    assert saved * 500 <= SESSION["slides"] and len(store.names()) <= SESSION["decks"]
    with pytest.raises(DeckError) as info:
        for k in range(SESSION["decks"] + 1):
            store.save(Deck(name=f"small {k}"))
    assert info.value.field == "decks" and len(store.names()) <= SESSION["decks"]
    with pytest.raises(DeckError):
        for _ in range(SESSION["slides"] + 1):
            store.add_slide("small 0", _many_slides(1)[0])


def test_the_deck_box_keeps_what_the_last_add_said_on_its_page_until_the_next(tmp_path, monkeypatch):
    """Through the reruns that follow (one queued behind the add's drew the box again at once: in CI
    the answer was never seen), not on another page."""
    from streamlit.testing.v1 import AppTest
    from support.app import open_deck_box, open_page

    monkeypatch.setenv("HOME", str(tmp_path))
    app = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=120)
    open_deck_box(app).run()
    app.text_input(key="explorer_deckbar_title").input("first")
    next(b for b in app.button if b.label == "Add to deck").click().run()
    assert [s.value for s in app.success] == ["Added slide 1 to the deck `Lecture`."]
    app.run()
    assert [s.value for s in app.success] == ["Added slide 1 to the deck `Lecture`."]
    open_page(app, "rates").run()
    assert not app.exception and not app.success
    open_page(app, "explorer").run()
    assert not app.success  # another page dropped it
