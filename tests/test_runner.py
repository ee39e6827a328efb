"""The worker pool: time limits, crashes, and replies that always reach the caller who asked."""

from __future__ import annotations

import os
import threading
import time

import pytest

from polarize import ConfigError, Experiment
from polarize.runner import RunTimeout, WorkerCrashed, call_with_timeout, run_with_timeout


def test_a_run_that_overruns_is_stopped_and_a_fresh_worker_takes_over():
    with pytest.raises(RunTimeout):
        call_with_timeout(time.sleep, 30, timeout=0.5)
    assert call_with_timeout(max, 2, 3) == 3


@pytest.mark.parametrize("limit", ["2147484", "1e300"])
def test_huge_time_limits_return_each_caller_its_own_result(monkeypatch, limit):
    # select() cannot wait that long: the wait goes in turns, and no reply is left unread.
    monkeypatch.setenv("POLARIZE_APP_TIMEOUT", limit)
    first = run_with_timeout(Experiment(n=3, d=3, seed=1, horizon=10))
    second = run_with_timeout(Experiment(n=5, d=3, seed=2, horizon=10))
    assert first.experiment.n == 3 and first.experiment.seed == 1
    assert second.experiment.n == 5 and second.experiment.seed == 2


def test_a_worker_that_dies_mid_run_is_reported_and_replaced():
    with pytest.raises(WorkerCrashed):
        call_with_timeout(os._exit, 3, timeout=30)
    assert call_with_timeout(min, 4, 7, timeout=30) == 4


def test_engine_errors_come_back_with_their_type_and_field():
    with pytest.raises(ConfigError) as caught:
        run_with_timeout(Experiment(normalizer="l2"), timeout=30)
    assert caught.value.field == "a_init"


def test_bad_time_limits_are_refused_in_words():
    with pytest.raises(ValueError, match="timeout"):
        call_with_timeout(max, 1, 2, timeout=float("nan"))


def test_concurrent_callers_each_receive_their_own_run():
    got: dict[int, tuple[int, int]] = {}

    def ask(i: int) -> None:
        r = run_with_timeout(Experiment(n=2 + i % 5, d=2, seed=i, horizon=10), timeout=60)
        got[i] = (r.experiment.n, r.experiment.seed)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert got == {i: (2 + i % 5, i) for i in range(10)}
