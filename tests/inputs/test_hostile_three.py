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
    from streamlit.testing.v1 import AppTest
    from support.app import open_deck_box, open_page

    from polarize.web.deck_store import DeckError, DeckStore

    monkeypatch.delenv("POLARIZE_HOSTED", raising=False)
    monkeypatch.delenv("POLARIZE_DATA_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    app = str(Path(__file__).resolve().parents[2] / "app.py")
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
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
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
    from polarize.sweeps import run, tasks

    built = lambda sweep: pytest.fail("a dry run built the cells")  # noqa: E731
    monkeypatch.setattr(tasks, "make_cells", built)
    monkeypatch.setattr(run, "make_cells", built)
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


# ---- 4, 6, 7. results folders ----------------------------------------------------------------------------

_RUNS = {"kind": "runs", "grid": {"seed": [0, 1]}, "base": {"horizon": 10.0}}


def _runs_sweep(**grid):
    from polarize.sweeps import parse_sweep

    return parse_sweep({**_RUNS, "grid": grid or _RUNS["grid"]})


def _contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("manifest", [None, '{"name": "x", "kind": "ru', '{"name": "other"}', "[" * 50_000])
def test_a_results_folder_is_resumed_only_by_the_sweep_that_wrote_it(tmp_path, manifest):
    import pyarrow as pa

    from polarize.sweeps import store

    folder = tmp_path / "results"
    folder.mkdir()
    store.write_task(folder, "foreign", pa.table({"hash": ["elsewhere"], "cell": [0], "status": ["ok"]}))
    if manifest is not None:
        (folder / store.MANIFEST).write_text(manifest)
    before = _contents(folder)
    with pytest.raises(ConfigError) as info:
        store.write_manifest(folder, _runs_sweep())
    assert info.value.field == "output" and "\n" not in str(info.value)
    assert _contents(folder) == before


def test_a_results_folder_is_resumed_by_its_own_sweep_and_a_new_one_taken(tmp_path):
    from polarize.sweeps import store

    sweep = _runs_sweep()
    store.write_manifest(tmp_path / "new", sweep)  # a new folder
    store.write_manifest(tmp_path / "new", sweep)  # resumed
    (tmp_path / "empty").mkdir()
    store.write_manifest(tmp_path / "empty", sweep)
    with pytest.raises(ConfigError):
        store.write_manifest(tmp_path / "new", _runs_sweep(seed=[5]))
    assert store.read_manifest(tmp_path / "new")["digest"] == sweep.digest()


@pytest.fixture
def fifo_cleanup():
    """FIFOs made by a test: opened for writing at its end, so that a reader blocked before the fix ends."""
    made: list[Path] = []
    yield made
    import os

    for path in made:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass


def _within(call, seconds: float = 20.0):
    """``call()``'s result, or a failure when it blocks (run in a daemon thread)."""
    import threading

    box: dict = {}

    def target():
        try:
            box["value"] = call()
        except BaseException as exc:  # handed back to the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked"
    if "error" in box:
        raise box["error"]
    return box["value"]


def _example_copy(tmp_path: Path, name: str = "runs") -> Path:
    import shutil

    from polarize.sweeps.examples import example

    return Path(shutil.copytree(example(name), tmp_path / name))


@pytest.mark.parametrize("name", ["task-fifo.parquet", "traj-fifo.parquet", "sweep.json"])
def test_a_fifo_in_a_results_folder_blocks_nothing(tmp_path, fifo_cleanup, name):
    import os

    from polarize.sweeps import load, query, store

    folder = _example_copy(tmp_path)
    if name == "sweep.json":
        os.unlink(folder / name)
    os.mkfifo(folder / name)
    fifo_cleanup.append(folder / name)
    rows = _within(lambda: len(load(folder)))
    assert rows == 180
    assert _within(lambda: int(query(folder, "SELECT count(*) AS n FROM runs")["n"][0])) == 180
    assert _within(lambda: store.finished_hashes(folder)) and _within(lambda: store.result_files(folder))
    if name == "sweep.json":
        assert _within(lambda: store.read_manifest(folder)) is None
        with pytest.raises(ConfigError) as info:
            _within(lambda: store.write_manifest(folder, _runs_sweep()))
        assert info.value.field == "output"


def test_a_foreign_schema_is_one_line_naming_the_file(tmp_path, capsys):
    import pyarrow as pa

    from polarize.cli import main
    from polarize.sweeps import load, query, store

    folder = _example_copy(tmp_path)
    store.write_task(folder, "zzz-foreign", pa.table({"hash": [[1, 2]], "cell": [{"a": "b"}],
                                                     "status": [3.5]}))
    for read in (lambda: load(folder), lambda: query(folder, "SELECT 1")):
        with pytest.raises(ConfigError) as info:
            read()
        assert info.value.field == "results" and "task-zzz-foreign.parquet" in str(info.value)
    assert main(["sweep", "query", str(folder), "SELECT count(*) FROM runs"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unexpected" not in err and "Arrow" not in err


def test_a_deep_manifest_is_refused_in_words(tmp_path):
    from polarize.sweeps import store

    folder = _example_copy(tmp_path)
    (folder / store.MANIFEST).write_text("[" * 100_000 + "]" * 100_000)
    assert store.read_manifest(folder) is None
    with pytest.raises(ConfigError):
        store.manifest_sweep(store.read_manifest(folder))
    (folder / store.MANIFEST).write_text('{"sweep": ' + '{"a": ' * 5000 + "1" + "}" * 5001)
    with pytest.raises(ConfigError):
        store.manifest_sweep(store.read_manifest(folder))


def _page_at(monkeypatch, folder: Path):
    from polarize.web.pages import sweeps as page

    found = page.sources()
    monkeypatch.setattr(page, "sources", lambda: {**found, "data:probe": folder})
    return lambda: page.PAGE.view(tuple(sorted((page.PAGE.defaults(None) | {"sweep": "data:probe"}).items())))


def _markdown_links(text: str) -> list[str]:
    from markdown_it import MarkdownIt

    return [token.type for block in MarkdownIt("commonmark").parse(text) for token in block.children or ()
            if token.type in ("link_open", "image")]


def test_the_sweeps_page_shows_a_stored_error_as_text(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    folder = _example_copy(tmp_path)
    first = sorted(folder.glob("task-*.parquet"))[0]
    table = pq.read_table(first).to_pandas()
    table["status"], table["message"] = "error", "[log in](https://evil.example) ![x](https://evil.example/i.png)"
    table.to_parquet(first)
    view = _page_at(monkeypatch, folder)()
    assert view.warnings and all(not _markdown_links(w) for w in view.warnings), view.warnings
    assert any("evil.example" in w for w in view.warnings)


def test_the_sweeps_page_says_in_words_what_is_wrong_with_a_folder(tmp_path, monkeypatch, fifo_cleanup):
    import os

    import pyarrow as pa

    from polarize.sweeps import store

    folder = _example_copy(tmp_path)
    show = _page_at(monkeypatch, folder)
    os.mkfifo(folder / "task-fifo.parquet")
    fifo_cleanup.append(folder / "task-fifo.parquet")
    assert _within(show).error is None
    store.write_task(folder, "zzz", pa.table({"hash": [[1]], "cell": ["x"], "status": [1.5]}))
    error = _within(show).error
    assert error and "task-zzz.parquet" in error and "Arrow" not in error and not _markdown_links(error)
    os.unlink(folder / "task-zzz.parquet")
    (folder / store.MANIFEST).write_text("[" * 100_000)
    assert "sweep.json" in _within(show).error


def test_the_sweeps_page_cache_follows_the_folder_contents(tmp_path, monkeypatch):
    import os

    folder = _example_copy(tmp_path)
    show = _page_at(monkeypatch, folder)
    assert len(show().data) == 180
    stamp = os.stat(folder)
    for path in sorted(folder.glob("task-*.parquet"))[:90]:
        path.unlink()
    os.utime(folder, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # the folder's own time says nothing
    assert len(show().data) == 90


# ---- 10. notebook objects that always display ----------------------------------------------------------


@pytest.fixture(scope="module")
def nothing_done():
    """An ensemble whose budget ran out before any start finished."""
    import numpy as np

    from polarize import Experiment, simulate_many

    many = simulate_many(Experiment(n=3, d=3, horizon=1e4), np.random.default_rng(0).normal(size=(500, 3)),
                         budget=1e-9)
    assert len(many) == 0
    return many


def _figure_text(figure) -> str:
    return " ".join(a.text or "" for a in figure.layout.annotations) + " " + (figure.layout.title.text or "")


def test_an_ensemble_that_finished_no_start_displays_and_says_so(nothing_done):
    import plotly.graph_objects as go

    text, page = repr(nothing_done), nothing_done._repr_html_()
    assert "all finished" not in text and "nan" not in text and "out of time" in text
    assert "out of time" in page and "nan" not in page
    figure = nothing_done.figure()
    assert isinstance(figure, go.Figure) and "no start" in _figure_text(figure).lower()


def test_a_rate_figure_of_a_run_cut_off_at_once_says_so():
    import plotly.graph_objects as go

    from polarize import Experiment, simulate

    cut = simulate(Experiment(n=3, d=3, horizon=1e4), budget=1e-9)
    assert len(cut.t) == 1
    figure = cut.figure("rate")
    assert isinstance(figure, go.Figure) and "too little" in _figure_text(figure).lower()


@pytest.mark.parametrize(("options", "field"), [
    ({"frames": "x"}, "frames"), ({"frames": -1}, "frames"), ({"frames": 10**9}, "frames"),
    ({"height": -5}, "height"), ({"height": 1e9}, "height"), ({"height": True}, "height"),
    ({"colour": "red"}, "colour"), ({"kind": "pie"}, "kind")])
def test_result_figure_options_are_validated_naming_the_field(options, field):
    from polarize import Experiment, simulate

    run = simulate(Experiment(n=3, d=3, horizon=100))
    with pytest.raises(ConfigError) as info:
        run.figure(**options)
    assert info.value.field == field and "\n" not in str(info.value)


@pytest.mark.parametrize(("options", "field"), [
    ({"tokens": "abc"}, "tokens"), ({"tokens": None}, "tokens"), ({"tokens": (0, 1, 7)}, "tokens"),
    ({"tokens": (0, 1, 2.5)}, "tokens"), ({"height": -1}, "height"), ({"title": 5}, "title")])
def test_ensemble_figure_options_are_validated_naming_the_field(options, field):
    import numpy as np

    from polarize import Experiment, simulate_many

    many = simulate_many(Experiment(n=3, d=3, horizon=100), np.eye(3))
    with pytest.raises(ConfigError) as info:
        many.figure(**options)
    assert info.value.field == field and "\n" not in str(info.value)


# ---- 11. environment -------------------------------------------------------------------------------------


def test_a_data_dir_of_an_unknown_users_home_is_one_line(monkeypatch, capsys):
    from polarize.cli import main
    from polarize.env import data_dir, environment_problem

    monkeypatch.setenv("POLARIZE_DATA_DIR", "~nosuchuser3317/x")
    with pytest.raises(ConfigError) as info:
        data_dir()
    assert info.value.field == "POLARIZE_DATA_DIR"
    assert "POLARIZE_DATA_DIR" in environment_problem()
    assert main(["presets"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "POLARIZE_DATA_DIR" in err and "Traceback" not in err


@pytest.mark.parametrize(("var", "raw"), [("POLARIZE_MAX_N", "1"), ("POLARIZE_MAX_SIZE", "1"),
                                          ("POLARIZE_MAX_SAMPLES", "1"), ("POLARIZE_MAX_HORIZON", "1e-13")])
def test_a_cap_below_what_any_setting_takes_names_the_variable(monkeypatch, var, raw):
    from polarize import Experiment
    from polarize.env import environment_problem

    monkeypatch.setenv(var, raw)
    problem = environment_problem()
    assert problem and problem.startswith(f"{var}: ")
    with pytest.raises(ConfigError) as info:
        Experiment(n=2, d=1, samples=2, horizon=1e-12)
    assert info.value.field == var


def test_the_floors_of_the_caps_are_what_the_settings_take(monkeypatch):
    """At its floor each cap still lets the least setting run: the floors are not above what is needed."""
    from polarize import Experiment, env
    from polarize.config import MIN_TIME

    for key, least in env.FLOORS.items():
        monkeypatch.setenv(env.CAPS[key][0], str(least))
    assert env.environment_problem() is None and env.FLOORS["max_horizon"] == MIN_TIME
    Experiment(n=2, d=1, samples=2, horizon=MIN_TIME, method="gd", lr=MIN_TIME)


# ---- 13. sweep query ------------------------------------------------------------------------------------


@pytest.mark.parametrize("sql", ["", "   ", "-- only a comment", ";", "/* c */"])
def test_a_query_without_a_statement_is_one_line(tmp_path, capsys, sql):
    from polarize.cli import main
    from polarize.sweeps import query

    folder = _example_copy(tmp_path)
    with pytest.raises(ConfigError) as info:
        query(folder, sql)
    assert info.value.field == "query"
    assert main(["sweep", "query", str(folder), sql]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unexpected" not in err


def _folder_state(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_the_librarys_query_reaches_no_file_outside_the_results_folder(tmp_path):
    from polarize.sweeps import query

    folder = _example_copy(tmp_path)
    outside = tmp_path / "secret.csv"
    outside.write_text("a\n1\n")
    assert int(query(folder, "SELECT count(*) AS n FROM runs")["n"][0]) == 180
    for sql in (f"SELECT * FROM read_csv('{outside}')", f"COPY (SELECT 1) TO '{tmp_path / 'out.csv'}'",
                f"ATTACH '{tmp_path / 'db.duckdb'}'", "SET enable_external_access = true",
                "SET allowed_directories = ['/']"):
        with pytest.raises(ConfigError) as info:
            query(folder, sql)
        assert info.value.field == "query"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs", "secret.csv"]


@pytest.mark.parametrize("sql", [
    "COPY (SELECT * FROM runs) TO '{folder}/task-x.parquet' (FORMAT parquet)",
    "COPY (SELECT 1 AS sweep) TO '{folder}/sweep.json'",
    "ATTACH '{folder}/made.duckdb' AS made",
    "SELECT 1; COPY (SELECT 1) TO '{folder}/x.csv'",
    "EXPORT DATABASE '{folder}/exported'",
    "SELECT count(*) FROM read_parquet('{folder}/task-*.parquet')",  # DuckDB's own refusal: no file at all
])
def test_the_librarys_query_writes_nothing_into_the_results_folder(tmp_path, sql):
    """Issue 43: a COPY into the folder added rows to every later load, or replaced the manifest."""
    from polarize.sweeps import load, query

    folder = _example_copy(tmp_path)
    before = _folder_state(folder)
    with pytest.raises(ConfigError) as info:
        query(folder, sql.format(folder=folder))
    assert info.value.field == "query" and "\n" not in str(info.value)
    assert _folder_state(folder) == before and len(load(folder)) == 180


def test_a_query_that_only_reads_runs_as_before(tmp_path):
    from polarize.sweeps import query

    folder = _example_copy(tmp_path)
    frame = query(folder, "SELECT 1; WITH r AS (SELECT * FROM runs) SELECT count(*) AS n FROM r")
    assert int(frame["n"][0]) == 180
    assert len(query(folder, "DESCRIBE runs")) > 0


def test_the_query_help_says_what_sql_may_do_on_ones_own_machine(capsys):
    from polarize.cli import main

    with pytest.raises(SystemExit):
        main(["sweep", "query", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "any file" in said and "COPY" in said


# ---- 2. clips that cannot exhaust a server -------------------------------------------------------------


@pytest.mark.parametrize(("options", "field"), [({"width": 2560}, "width"), ({"width": 3840}, "width"),
                                                ({"width": 100}, "width"), ({"width": 640.5}, "width")])
def test_a_clip_beyond_its_caps_is_refused_before_anything_is_drawn(tmp_path, monkeypatch, options, field):
    from polarize.clips import animate
    from polarize.plots import static

    monkeypatch.setattr(static, "start_browser", lambda **kw: pytest.fail("drew before checking"))
    with pytest.raises(ConfigError) as info:
        animate.write_clip({"data": [], "layout": {}, "frames": [{}] * 3}, tmp_path / "c.gif", **options)
    assert info.value.field == field and f"{animate.MOST_WIDTH:,}" in str(info.value)


def test_a_clip_of_too_many_frames_is_refused_naming_the_cap(tmp_path, monkeypatch):
    from polarize.clips import animate
    from polarize.plots import static

    monkeypatch.setattr(static, "start_browser", lambda **kw: pytest.fail("drew before checking"))
    with pytest.raises(ConfigError) as info:
        animate.write_clip({"data": [], "layout": {}, "frames": [{}] * (animate.MOST_FRAMES + 1)},
                           tmp_path / "c.gif")
    assert info.value.field == "frames" and f"{animate.MOST_FRAMES:,}" in str(info.value)


@pytest.mark.parametrize(("flag", "value"), [("--width", "2560"), ("--width", "3840"),
                                             ("--frames", "1000")])
def test_the_animate_command_names_the_caps(tmp_path, capsys, flag, value):
    from polarize.cli import main
    from polarize.clips import animate

    status = main(["animate", "--preset", "default", "-o", str(tmp_path / "c.gif"), flag, value])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    cap = animate.MOST_WIDTH if flag == "--width" else animate.MOST_FRAMES
    assert f"{cap:,}" in err or str(cap) in err


def test_gif_frames_stream_to_the_file_as_they_are_drawn(tmp_path):
    """Each frame is written when it comes (with one kept back to merge a repeat), never all held."""
    import numpy as np
    from PIL import Image

    from polarize.clips import animate

    path = tmp_path / "c.gif"
    rng = np.random.default_rng(0)
    pictures = [Image.fromarray(rng.integers(0, 255, (48, 64, 3), dtype=np.uint8)) for _ in range(8)]
    palette = animate._palette(pictures)
    sizes = []

    def drawn():
        for k, picture in enumerate(pictures):
            sizes.append(path.stat().st_size if path.exists() else 0)
            if k >= 3:
                assert sizes[-1] > sizes[-2] > 0, "frames held back, not written as they came"
            yield picture

    count, size = animate._write_gif(drawn(), path, 5, palette)
    assert count == 8 and size == (64, 48)
    with Image.open(path) as gif:
        assert gif.n_frames == 8 and gif.info["duration"] == 200 and gif.info.get("loop") == 0
        for k, picture in enumerate(pictures):
            gif.seek(k)
            want = picture.quantize(palette=palette, dither=Image.Dither.NONE).convert("RGB")
            assert np.array_equal(np.asarray(gif.convert("RGB")), np.asarray(want))


def test_clips_queue_like_runs_and_are_told_their_place(monkeypatch):
    import threading

    from polarize.clips import animate
    from polarize.web import export, progress

    monkeypatch.setattr(animate, "available", lambda suffix=".gif": True)
    monkeypatch.setattr(animate, "clip_bytes", lambda *a, **k: b"GIF89a")
    (button, *_) = export.clip_downloads({"frames": []}, key="k", name="Clip", title=(), stem="s",
                                         help_text="")
    held = export.CLIP_QUEUE.enter()
    said: list[str] = []
    out: dict = {}

    def make():
        with progress.progress_notices(lambda fraction, text: said.append(text)):
            out["data"] = button.data()

    worker = threading.Thread(target=make, daemon=True)
    worker.start()
    try:
        for _ in range(400):
            if said:
                break
            worker.join(0.05)
        assert said and "1" in said[0] and "clip" in said[0].lower() and "data" not in out
    finally:
        export.CLIP_QUEUE.leave(held)
    worker.join(20)
    assert out["data"] == b"GIF89a" and export.CLIP_QUEUE.counts() == (0, 0)


# ---- 8. Replace applies to the deck as it was when asked ------------------------------------------------


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


# ---- 9. decks that cannot exhaust a server -------------------------------------------------------------


def _many_slides(count: int):
    from polarize.web.deck_store import Slide

    return tuple(Slide(link=f"/rates?n={3 + k % 5}", title=f"slide {k}") for k in range(count))


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


# ---- 5. --scheduler honoured ---------------------------------------------------------------------------


@pytest.mark.parametrize("address", ["nonsense", "tcp://", "tcp://host", "tcp://host:port", "127.0.0.1:8786",
                                     "", 8786])
def test_a_malformed_scheduler_is_refused_before_any_work(tmp_path, address):
    from polarize.sweeps import run_sweep

    out = tmp_path / "results"
    with pytest.raises(ConfigError) as info:
        run_sweep(_runs_sweep(), out, scheduler=address)
    assert info.value.field == "scheduler" and "\n" not in str(info.value)
    assert not out.exists()


def test_the_command_line_refuses_a_malformed_scheduler_in_one_line(tmp_path, capsys):
    from polarize.cli import main

    path = tmp_path / "s.toml"
    path.write_text('kind = "runs"\n[base]\nhorizon = 10\n[grid]\nseed = [0, 1]\n')
    out = tmp_path / "results"
    assert main(["sweep", "run", str(path), "-o", str(out), "--scheduler", "tcp://host:port"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("polarize: error: scheduler: ") and err.count("\n") == 1 and not out.exists()


def test_an_unreachable_scheduler_is_refused_before_any_work(tmp_path):
    import socket

    from polarize.sweeps import run_sweep

    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "results"
    with pytest.raises(ConfigError) as info:
        run_sweep(_runs_sweep(), out, scheduler=f"tcp://127.0.0.1:{port}")
    assert info.value.field == "scheduler" and not out.exists()


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    pytest.importorskip("distributed")
    import test_sweeps_cluster

    yield from test_sweeps_cluster.cluster.__wrapped__(tmp_path_factory)


def test_every_task_of_a_scheduler_run_runs_on_that_cluster(dask_cluster, tmp_path):
    import os

    from polarize.sweeps import load, run_sweep

    progress = run_sweep(_runs_sweep(), tmp_path / "two", scheduler=dask_cluster["address"])
    frame = load(tmp_path / "two")
    assert progress.done == 2 and len(frame) == 2
    assert not any(w.endswith(f":{os.getpid()}") for w in frame["worker"]), list(frame["worker"])



# ---- 12. the image ----------------------------------------------------------------------------------


def test_the_app_user_cannot_rename_the_code_folder():
    """The code's folder lies in a folder of root's, not in the app user's home (which it could rename)."""
    import re

    text = re.sub(r"\\\n\s*", " ", (Path(__file__).resolve().parents[2] / "Dockerfile").read_text())
    (workdir,) = re.findall(r"^WORKDIR (\S+)$", text, flags=re.M)
    home = re.search(r"useradd .*--home-dir (\S+)", text)
    home = home.group(1) if home else "/home/app"
    assert not (workdir + "/").startswith(home.rstrip("/") + "/"), (workdir, home)
    assert str(Path(workdir).parent) in ("/", "/opt", "/srv", "/usr/local")


# ---- 14. Ctrl-C while the local cluster starts -----------------------------------------------------------


def test_ctrl_c_while_the_local_cluster_starts_says_one_line(tmp_path):
    """SIGINT to the whole process group (as a terminal sends it) just as the cluster starts."""
    import os
    import signal
    import subprocess
    import sys

    pytest.importorskip("distributed")
    root = Path(__file__).resolve().parents[2]
    path = tmp_path / "s.toml"
    path.write_text('kind = "runs"\n[base]\nhorizon = 10\n[grid]\nseed = {from = 0, to = 7}\n')
    proc = subprocess.Popen([sys.executable, "-m", "polarize", "sweep", "run", str(path), "-o",
                             str(tmp_path / "r"), "--workers", "2"], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(root)},
                            start_new_session=True)
    try:
        for line in proc.stdout:  # the sample is done: the cluster starts next
            if line.startswith("estimate from"):
                break
        _wait_for_workers_starting(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("\r")]
    after = lines[next(k for k, line in enumerate(lines) if "interrupted" in line):]
    assert len(after) <= 2 and "Traceback" not in err, err


def _wait_for_workers_starting(pid: int) -> None:
    """Until ``pid`` has a worker process importing Dask (``spawn_main``, with a C extension of Dask's
    imports loaded): the moment a Ctrl-C made it print its traceback."""
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
                if int(stat.rsplit(")", 1)[1].split()[1]) != pid or b"spawn_main" not in cmdline:
                    continue
                maps = (entry / "maps").read_text()
            except (OSError, ValueError, IndexError):
                continue
            if "yaml" in maps or "msgpack" in maps or "psutil" in maps:
                return
        time.sleep(0.01)
    pytest.fail("no worker process started")
