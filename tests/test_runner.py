"""The worker pool: time limits, crashes, and replies that always reach the caller who asked."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

import pytest

from polarize import ConfigError, Experiment
from polarize.serve import runner
from polarize.serve.admission import Admission, ServerBusy
from polarize.serve.runner import RunTimeout, WorkerCrashed, call_with_timeout, run_with_timeout


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


# The reply channel is the worker's descriptor 3 (the first free one after standard input, output and error).
_CUT_SHORT = ("import os, struct; os.write(3, struct.pack('!i', 1000) + b'\\x80\\x05 a third of a reply'); "
              "os._exit(0)")
_GARBLED = "import os, struct; os.write(3, struct.pack('!i', 5) + b'nope!')"


@pytest.mark.parametrize("code", [_CUT_SHORT, _GARBLED], ids=["killed-mid-reply", "garbled-reply"])
def test_a_broken_reply_is_a_crash_and_the_next_caller_gets_its_own_run(code):
    with pytest.raises(WorkerCrashed):
        call_with_timeout(exec, code, timeout=30)
    r = run_with_timeout(Experiment(n=4, d=3, seed=7, horizon=10), timeout=60)
    assert (r.experiment.n, r.experiment.seed) == (4, 7)


def _occupy(n: int, seconds: float, stagger: float = 0.0) -> list[threading.Thread]:
    """``n`` runs sleeping ``seconds`` (the i-th ``i * stagger`` longer), started now."""
    threads = [threading.Thread(target=call_with_timeout, args=(time.sleep, seconds + i * stagger),
                                kwargs={"timeout": 60})
               for i in range(n)]
    for thread in threads:
        thread.start()
    return threads


def _wait_until(condition, most: float = 30.0) -> None:
    end = time.monotonic() + most
    while not condition():
        assert time.monotonic() < end, "gave up waiting"
        time.sleep(0.02)


def test_a_waiting_run_is_told_its_place_in_the_queue(monkeypatch, tmp_path):
    monkeypatch.setattr(runner._POOL.admission, "heavy_after", float("inf"))  # no spare worker
    # Each run reads a named pipe, which blocks until the test writes to it: the test frees the workers
    # one at a time, whatever the machine's speed.
    size = runner._POOL.admission.size
    gates = [tmp_path / f"gate{i}" for i in range(size + 2)]
    for gate in gates:
        os.mkfifo(gate)
    places: dict[str, list[int]] = {"first": [], "second": []}

    def ask(gate: Path, name: str | None = None) -> None:
        with runner.queue_notices(places[name].append if name else lambda place: None):
            assert call_with_timeout(Path.read_text, gate, timeout=60) == "go"

    busy = [threading.Thread(target=ask, args=(gate,)) for gate in gates[:size]]
    for thread in busy:
        thread.start()
    _wait_until(lambda: runner._POOL.admission.counts()[0] == size)
    askers = {name: threading.Thread(target=ask, args=(gate, name))
              for name, gate in zip(places, gates[size:], strict=True)}
    askers["first"].start()
    _wait_until(lambda: places["first"] == [1])
    askers["second"].start()
    _wait_until(lambda: places["second"] == [2])
    gates[0].write_text("go")  # one worker free: "first" takes it (and holds it), "second" moves up
    _wait_until(lambda: places["second"] == [2, 1])
    for gate in gates[1:]:
        gate.write_text("go")
    for thread in [*askers.values(), *busy]:
        thread.join()
    assert places == {"first": [1], "second": [2, 1]}


def test_long_runs_cannot_hold_up_a_short_one(monkeypatch):
    monkeypatch.setattr(runner._POOL.admission, "heavy_after", 0.3)
    heavy = _occupy(runner._POOL.admission.size, 8.0)
    _wait_until(lambda: runner._POOL.admission.counts()[0] == runner._POOL.admission.size)
    assert call_with_timeout(max, 3, 4, timeout=60) == 4  # on a spare worker
    assert all(thread.is_alive() for thread in heavy)
    for thread in heavy:
        thread.join()


def test_the_queue_is_first_come_first_served_and_bounded():
    admission = Admission(1, reserve=0, most_waiting=1)
    holder = admission.enter()
    order: list[str] = []
    waiter = threading.Thread(target=lambda: order.append(f"slot {admission.enter().ticket}"))
    waiter.start()
    _wait_until(lambda: admission.counts() == (1, 1))
    with pytest.raises(ServerBusy):
        admission.enter()
    admission.leave(holder)
    waiter.join()
    assert order == ["slot 2"] and admission.counts() == (1, 0)


def _held(admission: Admission, seconds: float) -> None:
    """One run through ``admission`` that held its slot ``seconds`` (its typical length from now on)."""
    slot = admission.enter()
    admission._running[slot.ticket] = (time.monotonic() - seconds, False)
    admission.leave(slot)


@contextlib.contextmanager
def _queued(admission: Admission, count: int):
    """A slot held while ``count`` runs wait behind it; released, and every run done, on leaving."""
    holder = admission.enter()
    waiters = [threading.Thread(target=lambda: admission.leave(admission.enter())) for _ in range(count)]
    for waiter in waiters:
        waiter.start()
    _wait_until(lambda: admission.counts() == (1, count))
    try:
        yield
    finally:
        admission.leave(holder)
        for waiter in waiters:
            waiter.join()


def test_the_queue_is_as_long_as_the_work_it_holds_allows():
    # Runs of 2 s, one slot, 5 s allowed: the run waiting behind 2 others expects 6 s and is refused.
    slow = Admission(1, reserve=0, longest_wait=5.0)
    _held(slow, 2.0)
    with _queued(slow, 2), \
            pytest.raises(ServerBusy, match=r"2 runs are waiting already, about 6 s of work \(at most 5 s\)"):
        slow.enter()
    # Light runs (a tenth of a second): a class's worth all wait their turn.
    light = Admission(1, reserve=0, longest_wait=60.0)
    _held(light, 0.1)
    with _queued(light, 200):
        pass
    assert light.counts() == (0, 0)


def test_a_queue_given_more_slots_admits_its_waiting_runs():
    admission = Admission(1, reserve=0)
    holder = admission.enter()
    waiter = threading.Thread(target=lambda: admission.enter())
    waiter.start()
    _wait_until(lambda: admission.counts() == (1, 1))
    admission.resize(2)
    waiter.join(timeout=30)
    assert admission.counts() == (2, 0)
    admission.leave(holder)


def test_a_cancelled_wait_leaves_the_queue():
    admission = Admission(1, reserve=0)
    admission.enter()

    def cancel(place: int) -> None:
        raise KeyboardInterrupt  # e.g. Streamlit stopping the script for a rerun

    with pytest.raises(KeyboardInterrupt):
        admission.enter(cancel)
    assert admission.counts() == (1, 0)


def test_a_wait_checked_and_cancelled_leaves_the_queue_without_a_change_of_place():
    """``check`` is looked at while the place stays the same: a run cancelled from another thread leaves."""
    admission = Admission(1, reserve=0)
    holder, cancelled = admission.enter(), threading.Event()

    def check() -> None:
        if cancelled.is_set():
            raise RuntimeError("cancelled")

    outcome: list[BaseException] = []

    def wait() -> None:
        try:
            admission.enter(check=check)
        except RuntimeError as exc:
            outcome.append(exc)

    waiter = threading.Thread(target=wait)
    waiter.start()
    _wait_until(lambda: admission.counts() == (1, 1))
    cancelled.set()
    waiter.join(timeout=30)
    assert str(outcome[0]) == "cancelled" and admission.counts() == (1, 0)
    admission.leave(holder)


def test_a_run_whose_notice_raises_leaves_the_pool_queue(monkeypatch, tmp_path):
    """The run is made by a thread of its own (``backend.Relay``); its place is told in the caller's
    thread, and a notice that raises there (Streamlit stopping the script) takes the run out of the queue."""
    monkeypatch.setattr(runner._POOL.admission, "heavy_after", float("inf"))  # no spare worker
    size = runner._POOL.admission.size
    gates = [tmp_path / f"gate{i}" for i in range(size)]
    for gate in gates:
        os.mkfifo(gate)
    busy = [threading.Thread(target=call_with_timeout, args=(Path.read_text, gate), kwargs={"timeout": 60})
            for gate in gates]
    for thread in busy:
        thread.start()
    _wait_until(lambda: runner._POOL.admission.counts()[0] == size)

    def stop(place: int) -> None:
        raise KeyboardInterrupt

    with runner.queue_notices(stop), pytest.raises(KeyboardInterrupt):
        call_with_timeout(max, 1, 2, timeout=60)
    _wait_until(lambda: runner._POOL.admission.counts() == (size, 0))
    for gate in gates:
        gate.write_text("go")
    for thread in busy:
        thread.join()
    assert call_with_timeout(max, 1, 2, timeout=60) == 2


def test_a_new_workers_start_up_is_not_charged_to_the_run():
    with pytest.raises(WorkerCrashed):
        call_with_timeout(os._exit, 3, timeout=30)
    # The replacement imports numpy, scipy and the engine (well over a quarter second) before it is ready.
    assert call_with_timeout(max, 5, 6, timeout=0.25) == 6


def test_a_heavy_run_yields_the_cpu_and_its_worker_is_replaced_after(monkeypatch):
    monkeypatch.setattr(runner._POOL.admission, "heavy_after", 0.3)
    own = os.getpriority(os.PRIO_PROCESS, 0)
    # A second or two of pure CPU in the worker (a sleep would not count: heavy is by CPU used).
    long_run = threading.Thread(target=call_with_timeout, args=(sum, range(6 * 10**7)),
                                kwargs={"timeout": 60})
    long_run.start()

    def running() -> list[int]:
        return [w.process.pid for w in runner._POOL.all if w.process is not None and w.niced]

    _wait_until(lambda: len(running()) == 1)
    (pid,) = running()
    assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, own + 10)
    long_run.join()
    assert not running() and not os.path.exists(f"/proc/{pid}")  # replaced, not reused at low priority
    assert call_with_timeout(max, 1, 9, timeout=30) == 9


def test_a_run_that_only_waits_keeps_its_priority(monkeypatch):
    monkeypatch.setattr(runner._POOL.admission, "heavy_after", 0.2)
    call_with_timeout(time.sleep, 1.0, timeout=30)  # slow, but using no CPU: not heavy
    assert not any(worker.niced for worker in runner._POOL.all)
