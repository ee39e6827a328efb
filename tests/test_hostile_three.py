"""Hostile input, round three (issue 33): each probe of the issue, as a test that failed before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from polarize.fields import ConfigError

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


# ---- 3. sweeps bounded before anything is built ---------------------------------------------------------


def _sweep_error(table, **kw) -> ConfigError:
    from polarize.sweeps import parse_sweep

    with pytest.raises(ConfigError) as info:
        parse_sweep(table, **kw)
    return info.value


@pytest.mark.parametrize("allow_large", [False, True])
def test_an_ensemble_of_a_billion_chunks_is_refused_naming_the_field_and_the_cap(allow_large):
    table = {"kind": "ensemble", "grid": {"seed": [0]}, "ensemble": {"starts": 10**9, "chunk": 1}}
    error = _sweep_error(table, allow_large=allow_large)
    assert error.field == "ensemble.chunk"
    assert ("10,000,000" if allow_large else "100,000") in str(error) and "\n" not in str(error)


def test_a_dry_run_counts_cells_and_tasks_without_building_them(tmp_path, capsys, monkeypatch):
    from polarize.cli import main
    from polarize.sweeps import tasks

    monkeypatch.setattr(tasks, "make_cells", lambda sweep: pytest.fail("a dry run built the cells"))
    path = tmp_path / "s.toml"
    path.write_text('kind = "ensemble"\n[grid]\nseed = {from = 0, to = 9}\n[ensemble]\nstarts = 25000\n'
                    'chunk = 10\n')
    assert main(["sweep", "run", str(path), "-o", str(tmp_path / "r"), "--dry-run", "--allow-large"]) == 0
    assert "10 grid cells, 25,000 result cells, 25,000 tasks" in capsys.readouterr().out.replace(
        "25000", "25,000")


def test_a_manifest_with_a_long_axis_is_refused_naming_the_axis_and_the_cap():
    from polarize.sweeps.spec import MAX_AXIS
    from polarize.sweeps.store import manifest_sweep

    with pytest.raises(ConfigError) as info:
        manifest_sweep({"sweep": {"kind": "runs", "grid": {"seed": list(range(200_000))}}})
    assert info.value.field == "grid.seed" and f"{MAX_AXIS:,}" in str(info.value)
    assert MAX_AXIS <= 10_000


# ---- 15. ranges that repeat a value or overflow ----------------------------------------------------------


@pytest.mark.parametrize("spec", [{"from": 1.0, "to": 1.0, "count": 5},
                                  {"from": 1.0, "to": 1.0 + 1e-14, "count": 3}])
def test_a_range_that_repeats_a_value_is_refused_like_a_list(spec):
    error = _sweep_error({"kind": "runs", "grid": {"kappa": spec}, "base": {"loss": "square"}})
    assert error.field == "grid.kappa" and "twice" in str(error)


@pytest.mark.parametrize("key", ["horizon", "seed"])
def test_a_range_that_overflows_says_so_not_nan(key):
    error = _sweep_error({"kind": "runs", "grid": {key: {"from": -1.7e308, "to": 1.7e308, "count": 3}}})
    assert error.field == f"grid.{key}" and "nan" not in str(error).lower()
    assert "overflow" in str(error) or "too wide" in str(error)
