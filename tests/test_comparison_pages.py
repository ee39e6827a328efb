"""The comparison pages: their logic and figures without Streamlit, and each page headless (AppTest)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest
from support.app import WHOLE_PAGE_SECONDS, figures, link_note, open_page, plain_tables
from support.app import page as app_page
from support.controls import control

from polarize.clips import animate
from polarize.config import Experiment
from polarize.integrate import simulate
from polarize.normalizers import NORMALIZERS
from polarize.plots import comparisons as cf
from polarize.plots import token_colors
from polarize.plots.paper import token_colors as paper_token_colors
from polarize.science import compare_normalizers, describe_normalizers, flow_vs_descent, polarization_rate
from polarize.web import export, limited, pages, precomputed
from polarize.web.links import read_link, to_query
from polarize.web.page import Problem
from polarize.web.pages import COMPARISONS as SPECS
from polarize.web.pages import normalizers
from polarize.web.view import Caption, View

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT = 60
PAGES = tuple(spec.name for spec in SPECS)


def compare(name: str, values: dict | None = None) -> View:
    """A page's view of its defaults with ``values`` over them (as the renderer makes it, uncached)."""
    spec = pages.by_name(name)
    job = spec.make_job({**spec.defaults(None), **(values or {})})
    return View(error=job.message) if isinstance(job, Problem) else spec.view(job)


# ---- without Streamlit -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def views() -> dict[str, View]:
    """Every page at its defaults (one study each), whole (``support.app.WHOLE_PAGE_SECONDS``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("POLARIZE_APP_TIMEOUT", WHOLE_PAGE_SECONDS)
        return {name: compare(name) for name in PAGES}


def animated(figure: go.Figure) -> tuple[int, int]:
    """(number of frames, number of moving traces), checking every frame moves the same traces."""
    meta = figure.layout.meta
    for frame in figure.frames:
        assert list(frame.traces) == list(meta["animated"])
        assert len(frame.data) == len(meta["animated"])
    return len(figure.frames), len(meta["animated"])


def test_every_page_runs_at_its_defaults(views):
    for name, view in views.items():
        assert view.error is None, (name, view.error)
        assert not view.passing, name  # complete: kept for every session
        assert view.plots() and all(plot.caption for plot in view.plots()), name
        drawn = view.data
        assert drawn.runs and drawn.table, name
        go.Figure(view.plots()[0].figure)  # valid plotly (built without validation)
        downloads = {d.key: d for d in view.downloads}
        data = json.loads(downloads["json"].data())  # strict JSON: no NaN
        assert data["page"] == name and data["runs"]
        assert downloads["csv"].data().count("\n") == len(drawn.table) + 1
        assert downloads["csv"].filename == f"polarize-{name}.csv"
        plot = view.plots()[0]
        html = downloads[plot.key].data()
        assert "<h1" in html and f"polarize: {name}" in html  # the offline HTML says what it shows
        for suffix in (".gif", ".mp4"):
            clips = {d.key for d in view.downloads if d.filename.endswith(suffix)}
            if animate.available(suffix):  # one clip of each kind per animated figure, made on click
                assert clips == {f"{p.key}-{suffix[1:]}" for p in view.plots() if p.figure["frames"]}, name


def test_normalizers_play_together_in_eight_panels(views):
    view = views["normalizers"]
    figure = go.Figure(view.plots()[0].figure)
    assert figure.layout.meta["panels"] == 8
    frames, moving = animated(figure)
    assert moving == 8 and 60 <= frames <= 100
    times = np.array(figure.layout.meta["frame_times"])
    ratios = times[1:] / times[:-1]
    assert np.allclose(ratios, ratios[0], rtol=1e-3)  # evenly spaced in log time
    html = export.dashboard_html(figure, title="polarize-normalizers")
    assert html.count("<script") >= 2 and 'addFrames' in html  # plotly.js embedded, the frames with it
    assert [row["normalizer"] for row in view.data.table] == ["softmax", "sigmoid", "relu", "l1", "sum", "l2",
                                                         "linear", "sparsemax"]
    # Every normalizer reaches the horizon, across the kinks of relu, l1 and sparsemax: no warning.
    assert all(row["status"] == "finished" for row in view.data.table) and not view.warnings
    # The caption's account of each normalizer is built from these very runs.
    rows = compare_normalizers(Experiment.from_dict(view.data.runs["softmax"].experiment.to_dict()))
    assert describe_normalizers(rows) in view.plots()[0].caption


def test_fixed_axis_ranges_and_shared_time_axes(views):
    layout = go.Figure(views["normalizers"].plots()[0].figure).layout
    ranges = [tuple(layout[f"xaxis{'' if i == 1 else i}"].range) for i in range(1, 9)]
    assert len(set(ranges)) == 1  # every panel on the same time axis
    for i in range(1, 9):
        assert layout[f"yaxis{'' if i == 1 else i}"].range is not None


def test_animated_grid_counts_and_static_panels():
    t = np.array([0.0, 0.1, 1.0, 10.0, 100.0])
    panels = [cf.Panel(title="a", lines=(cf.Line(x=t, y=t + 1, name="u"),
                                         cf.Line(x=t, y=2 * t + 1, name="v", moving=False))),
              cf.Panel(title="b", lines=(cf.Line(x=t, y=np.array([1, 2, np.nan, 4, 5.0]), name="w"),),
                       log_y=True),
              cf.Panel(title="c", lines=(cf.Line(x=t, y=t, name="k"),), log_x=False)]
    fig = go.Figure(cf.animated_grid(panels, cols=2, frames=10))
    assert len(fig.data) == 4 + 2  # four curves, two panels with a moving curve on a time axis
    assert len(fig.frames) == 10 and fig.layout.meta["panels"] == 3
    assert all(np.isfinite(fig.data[3].y)) and len(fig.data[3].y) == 3  # NaN and t = 0 left out
    assert [tuple(fig.layout[f"xaxis{i}"].range) for i in ("", "2")] == [tuple(fig.layout.xaxis.range)] * 2
    static = go.Figure(cf.animated_grid(panels[2:], cols=1))
    assert not static.frames and not static.layout.updatemenus


def test_losses_page_draws_the_kl_floor(views):
    view = views["losses"]
    plots = view.plots()
    floor = [trace for trace in go.Figure(plots[0].figure).data if trace.name.startswith("H(p*)")]
    assert len(floor) == 1 and floor[0].y[0] == pytest.approx(floor[0].y[1])
    kappa = go.Figure(plots[2].figure)
    assert list(kappa.data[0].x) == [1, 2, 3, 4, 5]
    assert kappa.data[0].y[-1] < kappa.data[0].y[0]  # more ill-conditioned, lower entropy
    assert len(plots[1].figure["layout"]["meta"]["animated"]) == 5  # one a(t) panel per kappa


def test_tied_page_shows_the_winning_column_growing(views):
    view = views["tied"]
    assert [row["D"] for row in view.data.table] == [10, 100]  # the paper's smallest and largest
    for row in view.data.table:
        assert row["winner column norm"] > 3 * row["largest other norm"]
    figure = go.Figure(view.plots()[0].figure)
    assert figure.layout.meta["panels"] == 6
    assert [figure.layout.yaxis.title.text, figure.layout.yaxis4.title.text] == ["D = 10", "D = 100"]  # rows



def test_tied_page_alpha_colours_mean_one_thing_in_every_row(views):
    """One legend for all rows: each name has one colour everywhere, and in each row the line drawn as
    the winner is the alpha that ends largest (read off the chart's own data). Coloured by rank per
    row, the D = 20 row drew its winner alpha 3 blue while the legend said orange."""
    figure = go.Figure(views["tied"].plots()[0].figure)
    alphas = [t for t in figure.data if t.name and t.name.startswith("\u03b1 of")]
    colours: dict[str, set] = {}
    for trace in alphas:
        colours.setdefault(trace.name, set()).add(trace.line.color)
    assert all(len(c) == 1 for c in colours.values()) and len(set.union(*colours.values())) == len(colours)
    rows = {}
    for trace in alphas:
        rows.setdefault(trace.xaxis, []).append(trace)
    assert len(rows) == 2
    for traces in rows.values():
        final = [float(np.asarray(t.y, dtype=float)[-1]) for t in traces]
        (winner,) = [t for t in traces if t.name == "\u03b1 of the winning token"]
        assert float(np.asarray(winner.y, dtype=float)[-1]) == max(final)


def test_descent_page_reports_divergence_in_words(views):
    view = views["descent"]
    assert any("diverges" in note for note in view.warnings)
    assert any("ends on token" in note for note in view.warnings)
    for trace in go.Figure(view.plots()[0].figure).data:
        assert all(np.isfinite(np.asarray(trace.y, dtype=float))), trace.name


def test_descent_table_is_words_and_numbers_not_python(views):
    """A diverged descent's winner read "None", and flags read True/False: every cell is now text a
    student reads, and what it says matches the runs (a diverged row names no winner)."""
    view = views["descent"]
    assert any(row["diverged"] == "yes" for row in view.data.table)
    for row in view.data.table:
        assert all(isinstance(v, str) and v not in ("None", "True", "False") and not v.startswith(("(", "["))
                   for v in row.values()), row
        assert (row["descent winner"] == "none: it diverged") == (row["diverged"] == "yes")
        assert row["flow winner"].startswith("token ")


def test_descent_refuses_too_many_steps():
    view = compare("descent", {"lrs": (0.01,), "horizon": 1e5})
    assert view.error and view.error.startswith("Learning rates:") and "200,000" in view.error


def test_rates_page_fits_the_slope(views):
    view = views["rates"]
    slope, predicted, _ = view.data.metrics
    assert slope.label == "Fitted slope" and -3.2 < float(slope.value) < -1.8
    # The corrected asymptotics 2(n-1)/(n (z - qbar)^2) predicts the fitted slope.
    assert predicted.label == "Predicted slope" and abs(float(predicted.value) - float(slope.value)) < 0.01
    figure = go.Figure(view.plots()[0].figure)
    for i in range(1, 4):
        assert figure.layout[f"yaxis{'' if i == 1 else i}"].type == "log"
        assert figure.layout[f"xaxis{'' if i == 1 else i}"].type == "log"
    assert view.data.runs["logistic flow"].t[-1] == 1e12


def test_builders_directly():
    e = Experiment(n=4, d=4, horizon=100.0, a_init="shifted", a_shift=1.0, a_scale=0.1)
    rows = compare_normalizers(e)
    assert go.Figure(cf.normalizers_figure(rows, frames=12)).layout.meta["panels"] == 8
    descent = go.Figure(cf.descent_figure(flow_vs_descent(Experiment(n=3, d=3, horizon=10.0), (0.5, 2.0)),
                                          frames=12))
    assert descent.layout.meta["panels"] == 4 and len(descent.frames) == 12
    run = simulate(Experiment(n=3, d=3, horizon=1e8))
    rate = go.Figure(cf.rate_figure(run, polarization_rate(run), frames=12))
    assert len(rate.frames) == 12


def test_paper_figures_share_the_token_colours():
    assert paper_token_colors is token_colors


def test_links_report_what_they_ignore():
    spec = pages.TIED
    values, ignored = read_link(spec, {"sizes": "10,zz", "bogus": "1", "horizon": "7", "utm_source": "x"})
    assert values == spec.defaults(None)
    assert set(ignored) == {"sizes", "horizon"}  # keys that are not the page's are not its to judge
    values, ignored = read_link(spec, {"sizes": "20,10"})
    assert values["sizes"] == (10, 20) and not ignored
    assert to_query(spec, values)["sizes"] == "10,20"


def test_a_clash_drops_only_the_field_at_fault():
    values, ignored = read_link(pages.DESCENT, {"lrs": "0.01", "horizon": "1e4", "n": "4"})
    assert set(ignored) == {"lrs"} and "200,000" in ignored["lrs"]
    assert (values["horizon"], values["n"]) == (1e4, 4)  # the rest of the link is kept
    values, ignored = read_link(pages.NORMALIZERS, {"method": "gd", "lr": "0.01", "seed": "7"})
    assert set(ignored) == {"lr"} and values["seed"] == 7 and values["method"] == "gd"


@pytest.mark.parametrize("spec", SPECS, ids=PAGES)
def test_every_page_reads_back_its_own_link(spec):
    values = spec.defaults(None)
    assert read_link(spec, {**to_query(spec, values), "fbclid": "1"}) == (values, {})


def test_old_links_still_open_the_same_view():
    values, ignored = read_link(pages.RATES, {"n": "5", "seed": "1"})
    assert ignored == {} and values == pages.RATES.defaults(None)


# ---- the paper's descent comparison, computed ahead --------------------------------------------

PAPER_GD = {**normalizers.defaults("paper-compare-logistic"), "method": "gd"}


def test_the_papers_descent_comparison_is_shown_from_its_stored_runs(monkeypatch):
    rows = precomputed.stored_rows(normalizers.experiment(PAPER_GD))
    assert [r.normalizer for r in rows] == list(NORMALIZERS)
    assert all(r.result.finished and r.result.n_evaluations == 100_000 for r in rows)  # 1e5 steps of 0.5
    for other in ({"seed": 43}, {"method": "flow"}, {"lr": 0.2}):  # any other value runs live
        assert precomputed.stored_rows(normalizers.experiment({**PAPER_GD, **other})) is None, other

    def no_run(*args, **kwargs):
        raise AssertionError("the stored comparison was run again")

    monkeypatch.setattr(limited, "call_with_timeout", no_run)
    view = compare("normalizers", PAPER_GD)
    assert view.error is None and view.blocks[0] == Caption(precomputed.NOTE)  # it says so
    assert [row["normalizer"] for row in view.data.table] == list(NORMALIZERS)


def test_the_stored_runs_are_what_the_code_computes():
    """Each stored run's state after about 1,000 steps is that of a fresh descent, to rounding."""
    for row in precomputed.stored_rows(normalizers.experiment(PAPER_GD)):
        r = row.result
        k = int(np.searchsorted(r.t, 500.0))
        fresh = simulate(dataclasses.replace(r.experiment, horizon=float(r.t[k])))
        assert fresh.n_evaluations == round(r.t[k] / r.experiment.lr), row.normalizer
        for name in ("a", "s", "u", "column_norms"):
            assert np.allclose(getattr(fresh, name)[-1], getattr(r, name)[k], rtol=1e-9, atol=1e-12), name


@pytest.mark.slow
def test_the_stored_softmax_run_is_the_whole_descent():
    (stored,) = [r.result for r in precomputed.stored_rows(normalizers.experiment(PAPER_GD))
                 if r.normalizer == "softmax"]
    fresh = simulate(stored.experiment)
    assert np.array_equal(fresh.t, stored.t)
    assert np.allclose(fresh.s, stored.s, rtol=1e-9, atol=1e-12)
    assert np.allclose(fresh.loss, stored.loss, rtol=1e-9, atol=1e-15)


# ---- headless pages (AppTest) ------------------------------------------------------------------


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def page(name: str, query: dict[str, str] | None = None) -> AppTest:
    at = app_page(name, timeout=TIMEOUT)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


@pytest.mark.parametrize("name", PAGES)
def test_every_page_runs_from_the_app(name):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    open_page(at, name).run()
    no_exception(at)
    spec = pages.by_name(name)
    view = compare(name)
    assert at.title[0].value == spec.title
    assert len(figures(at)) == len(view.plots()) and (at.dataframe or plain_tables(at))
    assert [b.label for b in at.get("download_button")] == [d.label for d in view.downloads if not d.slow]
    made = [b.label for b in at.button if b.label.startswith("Make ")]  # a clip: made when asked
    assert made == [f"Make {d.label[0].lower()}{d.label[1:]}" for d in view.downloads if d.slow]
    assert not [w for w in at.warning if "link" in w.value]  # the Explorer's address is not a link here
    captions = [c.value for c in at.caption]
    assert spec.caption(spec.defaults(None)) in captions  # under the main figure (it fits the window)
    for plot in view.plots():
        assert plot.caption.split(":")[0] in "\n".join(captions)  # what to notice, under each figure


def test_a_widget_change_changes_the_page():
    at = page("tied")
    before = figures(at)[0]["layout"]["meta"]["panels"]
    control(at, key="tied_sizes").set_value([10, 20, 50]).run()
    no_exception(at)
    after = figures(at)[0]["layout"]["meta"]["panels"]
    assert (before, after) == (6, 9)
    assert at.query_params["sizes"] in (["10,20,50"], "10,20,50")


def test_the_preset_loads_its_values():
    at = page("normalizers")
    control(at, key="normalizers_preset").set_value("paper-compare-square").run()
    no_exception(at)
    assert control(at, key="normalizers_loss").value == "square"
    assert at.query_params["horizon"] in (["500"], "500")


@pytest.mark.parametrize("name", ["normalizers", "rates"])
def test_a_garbage_link_warns_and_uses_the_defaults(name):
    at = page(name, {"horizon": "banana", "seed": "-3", "nonsense": "1", "utm_source": "x"})
    no_exception(at)
    warning = link_note(at)
    assert "`horizon=banana`: must be a number" in warning
    assert "`seed=-3`: must be between 0 and 4294967295" in warning
    assert "nonsense" not in warning and "utm_source" not in warning  # not ours to judge
    defaults = pages.by_name(name).defaults(None)
    assert at.query_params["seed"] in ([str(defaults["seed"])], str(defaults["seed"]))
    assert figures(at)


def test_bad_input_names_the_field():
    at = page("descent")
    control(at, key="descent_lrs").set_value([]).run()
    no_exception(at)
    assert at.error and at.error[0].value.startswith("Learning rates")


def test_a_study_is_stopped_at_its_time_limit(monkeypatch):
    import time

    from polarize.serve.runner import RunTimeout, call_with_timeout

    monkeypatch.delenv("POLARIZE_APP_INPROCESS", raising=False)
    start = time.perf_counter()
    with pytest.raises(RunTimeout):
        call_with_timeout(time.sleep, 30, timeout=0.5)
    assert time.perf_counter() - start < 10
    assert call_with_timeout(max, 2, 3) == 3  # a fresh worker takes over


def test_a_foreign_parameter_opens_the_page_without_a_warning():
    at = page("rates", {"utm_source": "x", "fbclid": "y", "n": "4"})
    no_exception(at)
    assert not at.warning and control(at, key="rates_n").value == 4


def test_link_values_are_shown_as_text_not_markdown():
    at = page("rates", {"seed": "**x** `y` $z$"})
    warning = link_note(at)
    assert "`` seed=**x** `y` $z$ ``: must be a number" in warning


def test_flow_vs_descent_shows_what_happened_whole():
    """The grid cut "what happened" to "descent ends on tok..."; a table of sentences wraps instead."""
    at = app_page("descent").run()
    assert not at.exception
    (table,) = plain_tables(at)
    shown = table["what happened"]
    spec = pages.by_name("descent")
    expected = [row["what happened"] for row in spec.view(spec.make_job(spec.defaults(None))).data.table]
    assert shown == expected and max(map(len, shown)) > 40
