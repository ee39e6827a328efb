"""Sweeps without a cluster: the sweep file's validation, cells and their hashes, the store, the outcomes.

Also what a sweep refuses before building anything (too many chunks or cells, ranges that repeat a
value or overflow), its results folder (resumed only by the sweep that wrote it, read without blocking
on a FIFO, a foreign or deep file refused in words) and its SQL query (one statement at least, nothing
read or written outside the folder).

The runs on Dask (a real scheduler and workers) are in ``test_sweeps_cluster.py``.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from support.sweeps import example_copy as _example_copy
from support.sweeps import runs_sweep as _runs_sweep
from support.sweeps import within as _within

from polarize import Experiment, simulate, simulate_many
from polarize.cli import main
from polarize.fields import ConfigError
from polarize.presets import get_preset
from polarize.science.flow_field import naive_winner
from polarize.sweeps import read_sweep, store
from polarize.sweeps.kinds import KINDS
from polarize.sweeps.kinds.ensemble import ensemble_starts
from polarize.sweeps.rows import table
from polarize.sweeps.tasks import make_cells, make_tasks, run_task

SMALLEST = """kind = "runs"
[base]
preset = "default"
horizon = 1000
[grid]
normalizer = ["softmax", "l2"]
seed = [0, 1, 2]
"""


def _write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_issues_smallest_sweep_reads_as_six_cells_in_order(tmp_path):
    sweep = read_sweep(_write(tmp_path, SMALLEST))
    cells = list(sweep.cells())
    assert sweep.kind == "runs" and sweep.n_cells == 6 == len(cells)
    assert cells[0] == {"normalizer": "softmax", "seed": 0} and cells[-1] == {"normalizer": "l2", "seed": 2}
    config = sweep.config(cells[4])
    assert config == get_preset("default").with_changes(horizon=1000, normalizer="l2", seed=1)


def test_ranges_expand_inclusively_and_log_spaced(tmp_path):
    sweep = read_sweep(_write(tmp_path, 'kind = "runs"\n[grid]\nseed = {from = 3, to = 7}\n'
                              'kappa = {from = 1, to = 100, count = 3, log = true}\n'
                              '[base]\nloss = "square"\n'))
    assert dict(sweep.grid) == {"seed": (3, 4, 5, 6, 7), "kappa": (1.0, 10.0, 100.0)}


HOSTILE = [
    ('kind = "grids"\n[grid]\nseed = [0]\n', "kind"),
    ('kind = 3\n[grid]\nseed = [0]\n', "kind"),
    ('kind = "runs"\n', "grid"),
    ('kind = "runs"\n[grid]\n', "grid"),
    ('kind = "runs"\n[grid]\nseed = []\n', "grid.seed"),
    ('kind = "runs"\n[grid]\nseed = 3\n', "grid.seed"),
    ('kind = "runs"\n[grid]\ncolour = ["red"]\n', "grid.colour"),
    ('kind = "runs"\n[grid]\nseed = {from = 9, to = 2}\n', "grid.seed"),
    ('kind = "runs"\n[grid]\nseed = {from = 0, to = 9999}\nn = {from = 2, to = 999}\n', "grid"),
    ('kind = "runs"\n[grid]\nseed = {from = 0, to = 100000000000}\n', "grid.seed"),
    ('kind = "runs"\n[grid]\nnormalizer = ["softmax", "nope"]\n', "grid.normalizer"),
    ('kind = "runs"\n[grid]\nhorizon = [1, -5]\n', "grid.horizon"),
    ('kind = "runs"\n[grid]\nseed = [0, "1"]\n', "grid.seed"),
    ('kind = "runs"\n[grid]\nseed = [[0]]\n', "grid.seed[0]"),
    ('kind = "runs"\n[grid]\nseed = [0, 0]\n', "grid.seed"),
    ('kind = "runs"\n[base]\npreset = "nope"\n[grid]\nseed = [0]\n', "base.preset"),
    ('kind = "runs"\n[base]\nhorizon = "long"\n[grid]\nseed = [0]\n', "base.horizon"),
    ('kind = "runs"\n[base]\na0 = [1.0, 2.0]\n[grid]\nseed = [0]\n', "base.a0"),
    ('kind = "runs"\n[base]\nwho = 1\n[grid]\nseed = [0]\n', "base.who"),
    ('kind = "runs"\nbase = 5\n[grid]\nseed = [0]\n', "base"),
    ('kind = "runs"\nname = "../../etc/passwd"\n[grid]\nseed = [0]\n', "name"),
    ('kind = "runs"\nname = "/tmp/x"\n[grid]\nseed = [0]\n', "name"),
    ('kind = "runs"\noutput = "/etc"\n[grid]\nseed = [0]\n', "output"),
    ('kind = "runs"\n[grid]\nseed = [0]\n[ensemble]\nstarts = 5\n', "ensemble"),
    ('kind = "runs"\n[grid]\nseed = [0]\n[options]\ncells_per_task = "many"\n', "options.cells_per_task"),
    ('kind = "runs"\n[grid]\nseed = [0]\n[options]\npolarized_below = 2\n', "options.polarized_below"),
    ('kind = "ensemble"\n[grid]\nseed = [0]\n[ensemble]\nstarts = 0\n', "ensemble.starts"),
    ('kind = "ensemble"\n[grid]\nseed = {from = 0, to = 99}\n[ensemble]\nstarts = 100000000\n',
     "ensemble.starts"),
    ('kind = "ensemble"\n[grid]\nscale = [1.0, -2.0]\n', "grid.scale"),
    ('kind = "sinks"\n[grid]\nvariant = ["softmax", "cosine"]\n', "grid.variant"),
    ('kind = "sinks"\n[grid]\nsize = ["huge"]\n', "grid.size"),
    ('kind = "sinks"\n[base]\nsteps = -1\n[grid]\nseed = [0]\n', "base.steps"),
    ('kind = "runs"\n[grid\nseed = [0]\n', "sweep"),
    ('kind = "runs"\n[grid]\nhorizon = [nan]\n', "grid.horizon[0]"),
]


@pytest.mark.parametrize(("text", "key"), HOSTILE)
def test_a_hostile_sweep_file_gets_one_line_naming_the_key(tmp_path, capsys, text, key):
    out = tmp_path / "results"
    status = main(["sweep", "run", str(_write(tmp_path, text)), "-o", str(out), "--dry-run"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and err.startswith(f"polarize: error: {key}: "), err
    assert not out.exists()


def test_binary_and_oversized_files_are_refused_unread(tmp_path, capsys):
    binary = tmp_path / "b.toml"
    binary.write_bytes(b"\xff\xfe\x00kind")
    huge = _write(tmp_path, "# " + "x" * (2 << 20), "h.toml")
    for path in (binary, huge, tmp_path / "missing.toml"):
        assert main(["sweep", "run", str(path), "-o", str(tmp_path / "r"), "--dry-run"]) == 2
        assert capsys.readouterr().err.startswith("polarize: error: sweep: ")


def test_a_dry_run_prints_cells_and_tasks(tmp_path, capsys):
    text = SMALLEST.replace('kind = "runs"', 'kind = "ensemble"') + "[ensemble]\nstarts = 250\nchunk = 100\n"
    assert main(["sweep", "run", str(_write(tmp_path, text)), "-o", str(tmp_path / "r"), "--dry-run"]) == 0
    assert "6 grid cells, 18 result cells, 18 tasks" in capsys.readouterr().out


def test_the_command_line_and_the_package_import_neither_dask_nor_duckdb():
    code = ("import sys, polarize.cli, polarize.sweeps, polarize.cli.sweep;"
            "print(sorted(m for m in ('dask', 'distributed', 'duckdb') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parents[1]).stdout
    assert out.strip() == "[]"


def test_without_the_extra_a_sweep_says_what_is_missing(tmp_path, capsys, monkeypatch):
    import polarize.sweeps.run as run

    monkeypatch.setattr(run, "dask_available", lambda: False)
    assert main(["sweep", "run", str(_write(tmp_path, SMALLEST)), "-o", str(tmp_path / "r")]) == 2
    assert "pip install 'polarize[sweep]'" in capsys.readouterr().err


def test_hashes_follow_the_config_not_the_grid_order(tmp_path):
    one = read_sweep(_write(tmp_path, SMALLEST))
    other = read_sweep(_write(tmp_path, SMALLEST.replace('["softmax", "l2"]', '["l2", "softmax"]'), "o.toml"))
    by_params = lambda sweep: {tuple(sorted(c.params.items())): c.hash for c in make_cells(sweep)}  # noqa: E731
    assert by_params(one) == by_params(other)
    assert len(set(by_params(one).values())) == 6


def test_a_cell_that_fails_is_a_row_with_its_error_in_words(tmp_path):
    sweep = read_sweep(_write(tmp_path, SMALLEST))
    rows, series = run_task(make_tasks(sweep, make_cells(sweep))[3])  # l2 from a(0) = 0: undefined
    row = rows.to_pylist()[0]
    assert series is None and row["status"] == "error" and row["normalizer"] == "l2"
    assert "undefined" in row["message"] and row["winner"] is None
    ok = run_task(make_tasks(sweep, make_cells(sweep))[0])[0].to_pylist()[0]
    assert ok["status"] == "finished" and ok["winner"] == simulate(sweep.config({"normalizer": "softmax",
                                                                                 "seed": 0})).winner


def test_an_impossible_combination_is_a_row_not_a_refusal(tmp_path):
    sweep = read_sweep(_write(tmp_path, 'kind = "runs"\n[base]\nhorizon = 10\n[grid]\n'
                              'model = ["value", "tied"]\nd = [3, 8]\n'))
    rows = [run_task(t)[0].to_pylist()[0] for t in make_tasks(sweep, make_cells(sweep))]
    assert [r["status"] for r in rows] == ["finished", "finished", "error", "finished"]
    assert rows[2]["message"].startswith("d: must equal n")


def test_an_ensemble_chunk_counts_what_simulate_finds_start_by_start():
    e = Experiment(n=3, d=3, horizon=200.0, seed=4, a_init="gaussian")
    cell = next(make_cells(_ensemble_sweep()))
    settings = KINDS["ensemble"].Settings(polarized_below=0.01, draw_seed=0, rows="cells")
    row = KINDS["ensemble"].run_cell(dataclasses.replace(cell, config=e.to_json()), settings, {})[0][0]
    starts = ensemble_starts(3, 0, 12, 2.0, 0)
    winners = [simulate(dataclasses.replace(e.resolved(), a0=a)).winner for a in starts]
    assert row["n_starts"] == 12 and row["wins"] == np.bincount(winners, minlength=3).tolist()
    assert row["n_naive"] == sum(w == naive_winner(e) for w in winners)
    assert row["mean_one_minus_max"] == pytest.approx(np.mean(simulate_many(e, starts).one_minus_max))
    assert "one_minus_max" not in row  # a chunk's row holds the mean over its starts, named as one


def _ensemble_sweep():
    from polarize.sweeps import parse_sweep

    return parse_sweep({"kind": "ensemble", "grid": {"scale": [2.0]},
                        "ensemble": {"starts": 30, "chunk": 12}})


def test_ensemble_cells_are_chunked_to_cover_every_start_once():
    cells = list(make_cells(_ensemble_sweep()))
    assert [c.chunk for c in cells] == [(0, 12), (12, 24), (24, 30)]
    assert len({c.hash for c in cells}) == 3


def test_a_truncated_file_is_invisible_and_its_cells_not_done(tmp_path):
    rows = table(KINDS["runs"].schema, [{"hash": "a", "status": "finished", "message": ""}])
    good = store.write_task(tmp_path, "good", rows)
    other = table(KINDS["runs"].schema, [{"hash": "b", "status": "finished", "message": ""}])
    cut = store.write_task(tmp_path, "cut", other)
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])
    (tmp_path / "task-junk.parquet").write_text("not parquet")
    assert store.result_files(tmp_path) == [good]
    assert store.finished_hashes(tmp_path) == {"a"}


def test_a_failed_write_leaves_no_file_behind(tmp_path):
    bad = pa.table({"hash": ["x"]})

    def boom(path):
        Path(path).write_bytes(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError):
        store._atomic_write(tmp_path / "task-x.parquet", boom)
    assert list(tmp_path.iterdir()) == [] and bad.num_rows == 1


@pytest.mark.parametrize("path", sorted((Path(__file__).parents[1] / "sweeps").glob("*.toml")),
                         ids=lambda p: p.name)
def test_the_ready_made_sweeps_are_valid(path):
    sweep = read_sweep(path)
    assert sweep.name == path.stem and sweep.n_cells >= 9


@pytest.mark.parametrize("name", ["runs", "ensemble", "sinks"])
def test_each_shipped_example_is_its_sweep_file_complete(name):
    from polarize.sweeps import load
    from polarize.sweeps.examples import example

    folder = example(name)
    sweep = read_sweep(folder / "sweep.toml")
    assert store.read_manifest(folder)["digest"] == sweep.digest()
    assert store.finished_hashes(folder) == {c.hash for c in make_cells(sweep)}
    assert len(load(folder)) == len(list(make_cells(sweep)))


def test_ensemble_settings_belong_to_ensemble_sweeps_but_their_defaults_are_no_setting():
    """A runs sweep with [ensemble] starts is refused, naming the section; the stored form of any
    sweep lists the ensemble's defaults, which read back as the same sweep."""
    from polarize.fields import ConfigError
    from polarize.sweeps import parse_sweep

    table = {"kind": "runs", "grid": {"seed": [0, 1]}}
    with pytest.raises(ConfigError) as caught:
        parse_sweep({**table, "ensemble": {"starts": 5}})
    assert caught.value.field == "ensemble"
    sweep = parse_sweep(table)
    assert parse_sweep(sweep.to_dict()).digest() == sweep.digest()


# ---- sweeps bounded before anything is built; ranges that repeat a value or overflow -----------------


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


# ---- results folders: resumed only by their own sweep, read without blocking, refused in words -------


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


# ---- the sweep query: one statement at least, nothing read or written outside the folder -------------


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
