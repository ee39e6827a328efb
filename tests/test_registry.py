"""Registries own their entries: a normalizer registered at run time, in this file only, is everywhere.

A tempered softmax under a new name, registered with ``monkeypatch.setitem(NORMALIZERS, ...)`` and no
other file changed, is offered by the Explorer's menu (and runs from its link), joins the Normalizers
page, is said to be missing from the comparison computed ahead, and is listed and run by the command line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
from support.app import page as app_page

from polarize import Experiment, simulate
from polarize.cli import main
from polarize.losses import LOSSES
from polarize.normalizers import NORMALIZERS, Softmax, make_normalizer
from polarize.switching import kinks_of
from polarize.web import pages, precomputed
from polarize.web.links import read_link
from polarize.web.pages import normalizers

LABEL = "softmax at T = 2 (tempered)"


@dataclass(frozen=True, kw_only=True)
class Tempered:
    """softmax(a / 2), under a name of its own."""

    name: ClassVar[str] = "tempered"
    label: ClassVar[str] = LABEL
    on_simplex: ClassVar[bool] = True
    replicator: ClassVar[bool] = True

    def forward(self, a: np.ndarray) -> np.ndarray:
        return Softmax(temperature=2.0).forward(a)

    def vjp(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        return Softmax(temperature=2.0).vjp(a, g)

    def kinks(self) -> None:
        return None


@pytest.fixture
def tempered(monkeypatch):
    """Registered in this process; the pages' runs then run in it too (a worker imports polarize afresh,
    so on a server a new normalizer is a class in polarize/normalizers.py, which every process imports)."""
    monkeypatch.setitem(NORMALIZERS, Tempered.name, Tempered)
    monkeypatch.setenv("POLARIZE_APP_INPROCESS", "1")
    return Tempered.name


def test_the_engine_runs_it_as_softmax_at_that_temperature(tempered, flow_tol):
    e = Experiment(n=3, d=3, horizon=50.0, samples=20, seed=3)
    mine = simulate(Experiment(**{**e.to_dict(), "normalizer": tempered}))
    softmax = simulate(Experiment(**{**e.to_dict(), "temperature": 2.0}))
    assert mine.finished and kinks_of(make_normalizer(tempered)) is None
    assert np.allclose(mine.s, softmax.s, rtol=flow_tol.rtol, atol=flow_tol.atol)


def test_the_explorers_menu_offers_it_and_its_link_runs_it(tempered):
    spec = pages.by_name("explorer")
    (menu,) = [c for c in spec.controls if c.key == "normalizer"]
    assert tempered in menu.options and menu.name(tempered) == LABEL
    values, ignored = read_link(spec, {"normalizer": [tempered], "n": ["3"], "d": ["3"]})
    assert values["normalizer"] == tempered and not ignored
    view = spec.view(spec.make_job(values))
    assert view.error is None and view.data.experiment.normalizer == tempered


def test_the_explorers_widget_lists_it(tempered):
    at = app_page("explorer", timeout=120).run()
    box = at.selectbox(key="explorer_normalizer")
    assert LABEL in box.options and len(box.options) == len(NORMALIZERS)


def test_the_normalizers_page_runs_it_with_the_others(tempered):
    spec = pages.by_name("normalizers")
    view = spec.view(spec.make_job({**spec.defaults(None), "horizon": 100.0}))
    assert view.error is None
    assert [row["normalizer"] for row in view.data.table] == list(NORMALIZERS)
    assert f"the {len(NORMALIZERS)} panels" in str(view.blocks)


def test_the_comparison_computed_ahead_says_it_does_not_hold_it(tempered):
    paper = {**normalizers.defaults("paper-compare-logistic"), "method": "gd"}
    rows = precomputed.stored_rows(normalizers.experiment(paper))
    assert rows is not None and tempered not in {row.normalizer for row in rows}
    words = precomputed.note(rows)
    assert words.startswith(precomputed.NOTE) and f"Not precomputed: {tempered} " in words


def test_the_command_line_lists_and_runs_it(tempered, tmp_path, capsys):
    assert main(["normalizers"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == len(NORMALIZERS) and listed[-1].split()[0] == tempered and LABEL in listed[-1]
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"n": 3, "d": 3, "normalizer": tempered, "horizon": 10.0}))
    assert main(["run", str(config), "-o", str(tmp_path / "out.json")]) == 0
    assert json.loads((tmp_path / "out.json").read_text())["config"]["normalizer"] == tempered


def test_labels_are_read_from_the_registry_when_asked(tempered):
    assert NORMALIZERS.labels[tempered] == LABEL and NORMALIZERS.names[-1] == tempered
    assert dict(LOSSES.labels) == {name: kind.label for name, kind in LOSSES.items()}


@pytest.mark.parametrize("name", list(NORMALIZERS))
def test_each_normalizers_simplex_fact_is_what_its_map_does(name):
    """``on_simplex`` is a fact of the map: on random logits its scores are distributions, or not all are."""
    a = np.random.default_rng(0).normal(scale=3.0, size=(200, 5))
    s = make_normalizer(name).forward(a)
    alive = np.any(s != 0, axis=1)  # relu's dead state (every score 0) is the exception the fact names
    on = np.all(s[alive] >= 0, axis=1) & np.isclose(s[alive].sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert on.all() if NORMALIZERS[name].on_simplex else not on.all()
