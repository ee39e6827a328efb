"""A comparison's runs handed to the workers at once: together, drawn as they come, kept by content.

``polarize.web.study.study_view`` with ``Runs`` of fake parts, in the app's process
(``POLARIZE_APP_INPROCESS``, each call on a thread of ``runner.call_all``): the parts meet at a
barrier or wait for an event, so what is asserted is how many ran at once and what was drawn before
the last one returned, never how long anything took.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from support.app import charts_drawn
from support.app import page as app_page

from polarize.serve import runner
from polarize.web import limited, study
from polarize.web.progress import draft_notices
from polarize.web.study import Drawn, Runs, study_view
from polarize.web.view import Plot, View

_WAIT = 60.0  # seconds a part waits for the others before the test fails (never reached when it passes)

_LOCK = threading.Lock()
_COUNTS = {"running": 0, "most": 0, "calls": 0}
_MEET: dict[str, threading.Barrier] = {}
_GO: dict[str, threading.Event] = {}


def _part(name: str, meet: str = "", *, deadline: Any) -> dict[str, str]:
    """A fake run: counted while it runs; it waits at barrier ``meet`` (if named) or for its ``_GO`` event."""
    with _LOCK:
        _COUNTS["calls"] += 1
        _COUNTS["running"] += 1
        _COUNTS["most"] = max(_COUNTS["most"], _COUNTS["running"])
    try:
        if meet:
            _MEET[meet].wait(_WAIT)  # BrokenBarrierError when the others never come: run one by one
        elif name in _GO:
            _GO[name].wait(_WAIT)
        if name.startswith("broken"):
            raise RuntimeError("the engine broke")
        return {name: f"result of {name}"}
    finally:
        with _LOCK:
            _COUNTS["running"] -= 1


def _runs(names: tuple[str, ...], meet: str = "") -> Runs:
    return Runs({name: (_part, (name, meet)) for name in names},
                lambda parts: {k: v for part in parts.values() for k, v in part.items()})


def _draw(values: Any, outcome: dict[str, str], narrow: bool = False) -> Drawn:
    """One figure with a panel (a trace) per run done: its name."""
    figure = {"data": [{"type": "scatter", "name": name, "x": [0], "y": [0]} for name in outcome],
              "layout": {}, "frames": []}
    return Drawn(plots=(Plot("grid", figure),), table=[{"run": name} for name in outcome], runs={})


def _view(runs: Runs) -> View:
    return study_view("fake", {"k": 1}, lambda values: runs, _draw, advise=lambda values, partial: "")


def _panels(view: View) -> list[str]:
    return [trace["name"] for plot in view.plots() for trace in plot.figure["data"]]


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setenv("POLARIZE_APP_INPROCESS", "1")
    monkeypatch.setattr(runner.backend().admission, "size", 3)  # three slots, whatever the machine's cores
    limited.RUNS.clear()
    _COUNTS.update(running=0, most=0, calls=0)
    _MEET.clear()
    _GO.clear()
    yield
    for event in _GO.values():
        event.set()


def test_a_studys_runs_run_at_once():
    _MEET["three"] = threading.Barrier(3)
    view = _view(_runs(("a", "b", "c"), meet="three"))
    assert view.error is None and not view.warnings
    assert _COUNTS["most"] == 3  # each waited at the barrier for the other two
    assert _panels(view) == ["a", "b", "c"]  # in the study's order, whichever came back first


def test_a_panel_shows_before_the_last_run_returns(monkeypatch):
    monkeypatch.setattr(study, "DRAFT_AFTER", 0.0)
    _GO["slow"] = threading.Event()
    drafts: list[tuple[list[str], str]] = []

    def heard(view: View, text: str) -> None:
        drafts.append((_panels(view), text))
        _GO["slow"].set()  # the slow run returns only once the fast one has been drawn

    with draft_notices(heard):
        view = _view(_runs(("fast", "slow")))
    assert drafts == [(["fast"], "1 of 2 runs drawn; still running: slow.")]
    assert _panels(view) == ["fast", "slow"]
    assert not view.plots()[0].figure["frames"] and not view.passing


def test_a_setting_seen_before_runs_nothing():
    first = _view(_runs(("a", "b")))
    assert _COUNTS["calls"] == 2
    again = _view(_runs(("a", "b")))
    assert _COUNTS["calls"] == 2  # both kept by their content
    assert _panels(again) == _panels(first) == ["a", "b"]
    _view(_runs(("a", "c")))
    assert _COUNTS["calls"] == 3  # only the run not seen before


def test_a_failed_run_is_said_in_its_line_and_the_others_draw():
    view = _view(_runs(("a", "broken", "c")))
    assert view.error is None
    assert _panels(view) == ["a", "c"]
    (said,) = [w for w in view.warnings if w.startswith("broken:")]
    assert said == "broken: The engine failed on this run (RuntimeError: the engine broke)."
    assert view.passing  # not kept for others: the failure may pass
    _view(_runs(("a", "broken", "c")))
    assert _COUNTS["calls"] == 4  # the good runs kept, the failed one tried again


def test_every_run_failing_alike_is_said_once():
    view = _view(_runs(("broken1", "broken2")))
    assert view.error == "The engine failed on this run (RuntimeError: the engine broke)."
    assert view.passing and _COUNTS["calls"] == 2


def test_a_second_visitor_of_a_comparison_runs_nothing(monkeypatch):
    calls = []
    real = runner.call_with_timeout
    monkeypatch.setattr(runner, "call_with_timeout", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    monkeypatch.setenv("POLARIZE_APP_TIMEOUT", "600")
    query = {"sizes": "2,5", "horizon": "10"}
    for visitor in ("first", "second"):
        at = app_page("tied", timeout=300)
        for key, value in query.items():
            at.query_params[key] = value
        at.run()
        assert not at.exception and charts_drawn(at)
        if visitor == "first":
            assert len(calls) == 2  # one run per size, handed over at once
    assert len(calls) == 2  # the second visitor was served the first one's view


def test_a_second_visitor_of_a_comparison_builds_no_figure(monkeypatch):
    """A setting seen before, by another session: its figure is not built, fitted or encoded again, nor
    its runs run (the view, the fitted view and the figure's bytes are kept for every session)."""
    from collections import OrderedDict

    from polarize.serve.cache import SharedCache
    from polarize.web.pages import normalizers
    from ui import charts, renderer

    monkeypatch.setattr(renderer, "VIEWS", SharedCache(4))  # whatever other tests kept
    monkeypatch.setattr(renderer, "FITTED", SharedCache(4))
    monkeypatch.setattr(charts, "_ENCODED", OrderedDict())
    monkeypatch.setenv("POLARIZE_APP_TIMEOUT", "600")
    calls: dict[str, int] = {}

    def counted(owner: Any, name: str) -> None:
        real = getattr(owner, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] = calls.get(name, 0) + 1
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, call)

    counted(runner, "call_with_timeout")
    counted(normalizers, "normalizers_figure")
    counted(renderer, "fit")
    counted(charts.plotly_json, "to_json_plotly")
    seen = {}
    for visitor in ("first", "second"):
        at = app_page("normalizers", timeout=300)
        at.query_params["seed"] = "4141"
        at.run()
        assert not at.exception and charts_drawn(at)
        seen[visitor] = dict(calls)
        calls.clear()
    assert all(seen["first"].get(name) for name in ("normalizers_figure", "fit", "to_json_plotly")), seen
    assert seen["second"] == {}, seen  # served whole: nothing built, fitted, encoded or run
