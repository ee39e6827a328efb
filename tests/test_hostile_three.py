"""Hostile input, round three (issue 33): each probe of the issue, as a test that failed before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

# ---- 1. decks private unless an operator shares them ---------------------------------------------------


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
    from app_support import open_page
    from streamlit.testing.v1 import AppTest

    from polarize.web.deck_store import DeckStore

    monkeypatch.delenv("POLARIZE_HOSTED", raising=False)
    monkeypatch.delenv("POLARIZE_DATA_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    app = str(Path(__file__).parent.parent / "app.py")
    one, other = AppTest.from_file(app, default_timeout=120), AppTest.from_file(app, default_timeout=120)
    one.run()
    one.text_input(key="explorer_deckbar_title").input("mine")
    next(b for b in one.button if b.label == "Add to deck").click().run()
    assert not one.exception
    assert [s.value for s in one.success] == ["Added slide 1 to the deck `Lecture`."]
    open_page(other, "deck").run()
    assert not other.exception
    assert not [m.value for m in other.markdown if "mine" in m.value]
    assert not any(str(tmp_path) in c.value for c in other.caption)
    assert any("for this visit only" in c.value for c in other.caption)
    assert DeckStore().names() == [] and not list(tmp_path.rglob("decks.sqlite3"))


def test_the_readme_says_which_setting_keeps_decks_private_on_each_host():
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    hosting = readme[readme.index("## Host it"):readme.index("## The library")]
    table = hosting[hosting.index("| Host |"):]
    for host in ("Hugging Face Spaces", "Any Docker host", "Streamlit Community Cloud"):
        (row,) = [line for line in table.splitlines() if line.startswith(f"| {host} |")]
        assert "private" in row
    assert "POLARIZE_HOSTED=0" in hosting and "POLARIZE_DATA_DIR" in hosting
