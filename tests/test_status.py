"""A run's status is one type (``polarize.Status``) that reads back from the strings it was stored as."""

from __future__ import annotations

import json

import numpy as np

from polarize import Experiment, simulate, simulate_many
from polarize.diagnostics import Result
from polarize.science.deadline import joined
from polarize.serialize import strict_dumps
from polarize.status import Status
from polarize.web import precomputed


def test_every_status_has_words_and_only_finished_is_ok():
    assert [s.ok for s in Status] == [True, False, False, False]
    assert all(s.message and s.message != s.value for s in Status)


def test_a_status_stored_as_its_string_reads_back_as_the_status():
    r = simulate(Experiment(n=3, d=3, horizon=10.0, samples=5, seed=1))
    assert r.status is Status.FINISHED and r.finished
    stored = json.loads(strict_dumps(r.to_dict()))
    assert stored["status"] == "finished"
    fields = {f: getattr(r, f) for f in Result.__dataclass_fields__} | {"status": stored["status"]}
    again = Result(**fields)
    assert again.status is Status.FINISHED


def test_a_run_out_of_time_and_a_stopped_run_have_their_status():
    cut = simulate(Experiment(n=3, d=3, method="gd", lr=1e-3, horizon=1e3, seed=2), budget=0.0)
    assert cut.status is Status.OUT_OF_TIME and not cut.finished
    diverged = simulate(Experiment(n=3, d=3, loss="square", method="gd", lr=50.0, horizon=5e4, V_scale=1.0,
                                   seed=9))
    assert diverged.status is Status.STOPPED and diverged.message
    many = simulate_many(Experiment(n=3, d=3, horizon=10.0, seed=1), np.zeros((2, 3)), budget=0.0)
    assert many.status is Status.OUT_OF_TIME


def test_the_shipped_comparison_reads_back_with_status_types():
    stem = next(iter(precomputed.STORED))
    stored = precomputed._load(stem)
    assert stored is not None
    assert all(isinstance(row.result.status, Status) for row in stored[1])


def test_an_ensemble_joined_from_parts_keeps_the_last_parts_status():
    e = Experiment(n=3, d=3, horizon=10.0, seed=1)
    done = simulate_many(e, np.zeros((2, 3)))
    cut = simulate_many(e, np.ones((2, 3)), budget=0.0)
    assert joined([done, done]).status is Status.FINISHED
    assert joined([done, cut]).status is Status.OUT_OF_TIME and len(joined([done, cut])) == 2
