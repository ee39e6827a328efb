"""The Sweeps page on the shipped examples: no warning, and every figure equal to an independent count.

The counts are DuckDB's SQL over the Parquet files; the Wilson bands scipy's ``binomtest``. A folder's
stored errors are shown as text and what is wrong with a folder said in words; the page's cache follows
the folder's contents.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from scipy.stats import binomtest
from support.sweeps import example_copy as _example_copy
from support.sweeps import within as _within

from polarize.sweeps.examples import EXAMPLES, build_sinks_example, example
from polarize.web import pages
from polarize.web.pages.sweeps import PAGE

duckdb = pytest.importorskip("duckdb")


def _view(sweep: str, **values):
    return PAGE.view(tuple(sorted((PAGE.defaults(None) | {"sweep": sweep, **values}).items())))


def _sql(name: str, sql: str):
    files = [str(p) for p in sorted(example(name).glob("task-*.parquet"))]
    return duckdb.sql(sql.replace("runs", f"read_parquet({files!r})")).fetchall()


def _lines(figure):
    """Each named line (not its band): name -> {x: y}."""
    return {t.name: dict(zip(t.x, t.y, strict=True)) for t in figure.data if t.mode == "lines+markers"}


def _bands(figure):
    return [t for t in figure.data if t.fill == "toself"]


def test_the_page_is_registered_in_the_navigation():
    assert pages.by_name("sweeps") is PAGE and PAGE in pages.PAGES


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("fraction", ["polarized", "naive_holds"])
def test_every_shipped_example_opens_without_a_warning(name, fraction):
    view = _view(f"example-{name}", fraction=fraction)
    assert view.error is None and view.warnings == ()
    assert len(view.plots()) == 2 if name != "ensemble" else len(view.plots()) == 1


def test_the_grid_table_says_what_every_cell_shares_as_well_as_the_axes():
    from polarize.web.view import Table

    (table,) = [b for b in _view("example-runs").blocks if isinstance(b, Table)]
    rows = {row["axis"]: row["values"] for row in table.rows}
    assert rows["normalizer \u03c3"] == "softmax, sparsemax, l2"
    assert rows["seed"] == "0, 1, 2, 3, 4, 5, 6, 7, 8, 9"
    (horizon,) = {r[0] for r in _sql("runs", "SELECT DISTINCT t_end FROM runs")} or {None}
    assert rows["horizon (final time)"] == "1000 (every cell)" and horizon == pytest.approx(1000)
    assert rows["tokens n"] == "4, 8, 16" and rows["logits a(0)"] == "gaussian (every cell)"  # words


def test_the_runs_fraction_is_the_share_sql_counts_in_its_wilson_band():
    figure = go.Figure(_view("example-runs").plots()[0].figure)
    rows = _sql("runs", "SELECT normalizer, n, sum(polarized::int), count(*) FROM runs "
                        "WHERE status != 'error' GROUP BY ALL")
    lines = _lines(figure)
    assert sum(len(v) for v in lines.values()) == len(rows) == 9
    for normalizer, n, hits, trials in rows:
        assert lines[f"normalizer = {normalizer}"][n] == pytest.approx(hits / trials)
    bands = {t.name: t for t in _bands(figure)}
    for normalizer, n, hits, trials in rows:
        band = bands[f"normalizer = {normalizer}"]
        xs, ys = list(band.x), list(band.y)
        low, high = binomtest(int(hits), int(trials)).proportion_ci(method="wilson")
        half = len(xs) // 2
        assert ys[xs[:half].index(n)] == pytest.approx(high, abs=1e-6)
        assert ys[half:][xs[half:].index(n)] == pytest.approx(low, abs=1e-6)


def test_the_ensemble_fraction_pools_every_start_of_every_chunk():
    figure = go.Figure(_view("example-ensemble", fraction="naive_holds").plots()[0].figure)
    rows = _sql("ensemble", "SELECT scale, sum(n_naive), sum(n_starts) FROM runs GROUP BY ALL")
    (line,) = _lines(figure).values()
    assert {s: h / t for s, h, t in rows} == pytest.approx(line)
    assert all(t == 3 * 4000 for _, _, t in rows)  # three seeds of 4,000 starts: every chunk counted


def test_the_spread_is_the_median_over_seeds():
    figure = go.Figure(_view("example-runs", measure="entropy_end").plots()[1].figure)
    rows = _sql("runs", "SELECT normalizer, n, median(entropy_end) FROM runs GROUP BY ALL")
    lines = _lines(figure)
    for normalizer, n, median in rows:
        assert lines[f"normalizer = {normalizer}"][n] == pytest.approx(median)


def test_the_sink_figure_shows_every_layer1_head_of_every_run():
    figure = go.Figure(_view("example-sinks").plots()[1].figure)
    rows = _sql("sinks", "SELECT seed, sink_scores[5:8] FROM runs")  # layer 1 of 2 x 4 heads (1-based)
    shown = sorted(y for t in figure.data if t.mode == "markers" for y in t.y)
    assert shown == sorted(v for _, scores in rows for v in scores) and len(shown) == 14 * 4
    shares = go.Figure(_view("example-sinks").plots()[0].figure)
    counted = dict(_sql("sinks", "SELECT variant, avg((layer1_sinks > 0)::int) FROM runs "
                        "WHERE NOT starts_with(variant, 'raw') GROUP BY 1"))  # raw: no sinks to count
    (line,) = _lines(shares).values()
    names = dict(zip(shares.layout.xaxis.tickvals, shares.layout.xaxis.ticktext, strict=True))
    assert {names[x].replace("<br>", "-"): y for x, y in line.items()} == pytest.approx(counted)


def test_the_sinks_example_is_the_shipped_trainings(tmp_path):
    from polarize.sinks.runs import read_run, shipped_runs
    from polarize.sweeps import load

    assert build_sinks_example(tmp_path) == 14
    frame = load(tmp_path)
    shipped = load(example("sinks"))
    cols = ["variant", "seed", "accuracy", "sinks", "top_sink"]
    assert frame[cols].equals(shipped[cols])
    record = read_run(shipped_runs()["paper-softmax-seed0"])
    row = frame[(frame["variant"] == "softmax") & (frame["seed"] == 0)].iloc[0]
    assert np.allclose(row["sink_scores"], np.ravel(record["sink_scores"]))


def test_a_hand_edited_sweep_json_is_validated_and_shown_as_text(monkeypatch):
    """sweep.json lives in the user's results folder: what it says is checked as a sweep file is, and
    a wrong value gives one line naming the field, shown as text (a code span), not Markdown."""
    import copy

    from polarize.web.pages import sweeps as page

    manifest, frame = page._read("example-runs")
    cases = {"[log in](https://evil.example)": lambda m: m["sweep"]["grid"].update(
                 {"[log in](https://evil.example)": [1]}),
             "grid.n": lambda m: m["sweep"]["grid"].update(n=["many"]),
             "kind": lambda m: m["sweep"].update(kind="everything")}
    for field, edit in cases.items():
        edited = copy.deepcopy(manifest)
        edit(edited)
        monkeypatch.setattr(page, "_read", lambda name, edited=edited: (edited, frame))
        error = _view("example-runs").error
        assert error.startswith("This results folder's sweep.json cannot be read: `"), error
        assert field in error and "\n" not in error, error
        assert "](" not in error.split("`")[0]  # the value only inside the code span
    monkeypatch.setattr(page, "_read", lambda name: (None, frame))
    assert "sweep.json: is missing" in _view("example-runs").error


@pytest.mark.parametrize("name", ["runs", "ensemble", "sinks"])
def test_a_stored_sweep_reads_back_as_the_sweep_that_wrote_it(name):
    """The stored form (every section with its defaults) is a valid sweep, with the digest it was
    stored under: the page reads kind, axes and settings from it."""
    from polarize.sweeps.store import manifest_sweep, read_manifest

    manifest = read_manifest(example(name))
    sweep = manifest_sweep(manifest)
    assert sweep.digest() == manifest["digest"] and sweep.kind == manifest["kind"]
    assert [key for key, _ in sweep.grid] == list(manifest["sweep"]["grid"])


FIELD_NAMES = ("polarized_below", "options.", "one_minus_max", "entropy_end", "a_init", "naive_holds")


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("measure", ["one_minus_max", "entropy_end"])
def test_tables_captions_and_axes_say_words_not_field_names(name, measure):
    from polarize.web.view import Caption, Table, Text, walk

    view = _view(f"example-{name}", measure=measure)
    words = [b.text for b in walk(view.blocks) if isinstance(b, (Text, Caption))]
    words += [str(value) for b in walk(view.blocks) if isinstance(b, Table) for row in b.rows
              for value in row.values() if not str(value).endswith("(every cell)")]
    words += [p.caption for p in view.plots()]
    words += [go.Figure(p.figure).layout.yaxis.title.text or "" for p in view.plots()]
    for field in FIELD_NAMES:
        assert not [w for w in words if field in w], field
    if name == "runs":
        assert "1 - max s ends below the sweep's threshold for polarized (0.01)" in view.plots()[0].caption


def test_why_softmax_is_never_polarized_in_the_runs_example_is_what_the_runs_do():
    """The line under the figure, checked against the shipped rows and runs made again to a longer
    horizon from the same settings (the earliest and the latest of the 30 to cross 0.01 there)."""
    import dataclasses
    import json

    from polarize import Experiment, simulate
    from polarize.sweeps import load
    from polarize.web.pages.sweeps import WHY

    line = WHY["example-runs"]
    assert line in [b.text for b in _view("example-runs").blocks if hasattr(b, "text")]
    frame = load(example("runs"))
    softmax = frame[frame["normalizer"] == "softmax"]
    logistic = softmax[softmax["loss"] == "logistic"]["one_minus_max"]
    square = softmax[softmax["loss"] == "square"]["one_minus_max"]
    assert not softmax["polarized"].any()
    assert (round(logistic.min(), 2), round(logistic.max(), 2)) == (0.05, 0.55)
    assert "0.05 to 0.55" in line and (round(square.min(), 1), round(square.max(), 2)) == (0.6, 0.92)
    assert "0.6 to 0.92" in line and "between t \u2248 1e6 and 4.5e8" in line

    def crossing(loss, n, seed, horizon):
        (config,) = frame[(frame["normalizer"] == "softmax") & (frame["loss"] == loss) & (frame["n"] == n)
                          & (frame["seed"] == seed)]["config"]
        config = json.loads(config) if isinstance(config, str) else config
        run = simulate(dataclasses.replace(Experiment.from_dict(config), horizon=horizon))
        gap = 1 - run.s.max(axis=1)
        return float(run.t[np.argmax(gap < 0.01)]) if (gap < 0.01).any() else None, float(gap[-1])

    assert 1e6 <= crossing("logistic", 4, 4, 1e7)[0] <= 1.2e6  # the earliest to polarize
    assert 4e8 <= crossing("logistic", 8, 0, 1e9)[0] <= 5e8  # the latest (to the times saved)
    never, end = crossing("square", 16, 0, 1e9)
    assert never is None and end == pytest.approx(square[(frame["n"] == 16) & (frame["seed"] == 0)].iloc[0],
                                                  abs=1e-3)  # settled by t = 1000: it stays there


def test_a_results_folder_written_while_the_app_runs_is_offered_and_its_manifest_read_once(tmp_path,
                                                                                          monkeypatch):
    """The folders are listed at every rerun (the page once listed them at import, so a sweep run
    afterwards never appeared until the server restarted); each sweep.json is read once until it
    changes, however many controls and views ask for it."""
    import shutil

    from polarize.sweeps import store
    from polarize.web.pages import sweeps as page

    monkeypatch.setenv("POLARIZE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("POLARIZE_HOSTED", "0")
    menu = next(c for c in page.CONTROLS if c.key == "sweep")
    assert "data:late" not in menu.options
    shutil.copytree(example("runs"), tmp_path / "sweeps" / "late")
    assert "data:late" in menu.options and menu.parse("data:late") == "data:late"
    reads = []
    real = store.read_manifest
    monkeypatch.setattr(store, "read_manifest", lambda folder: reads.append(folder) or real(folder))
    values = PAGE.defaults(None) | {"sweep": "data:late"}
    for _ in range(3):
        assert [c.enabled(values) for c in page.CONTROLS] == [True, True, True]
        assert PAGE.view(tuple(sorted(values.items()))).error is None
    assert reads == [tmp_path / "sweeps" / "late"]
    manifest = tmp_path / "sweeps" / "late" / store.MANIFEST
    manifest.write_text(manifest.read_text().replace('"kind": "runs"', '"kind": "nothing"', 1))
    # read again once it changed: a kind no registry knows leaves the kind's controls nothing to offer
    assert not any(c.enabled(values) for c in page.CONTROLS if c.key != "sweep") and len(reads) == 2


# ---- a stored folder's errors said in words, shown as text -------------------------------------------


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
