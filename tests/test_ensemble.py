"""simulate_many: every entry is the run simulate makes from that start, and bad starts are refused.

A bad start is refused as ``simulate`` refuses it, named by its row, and never hangs (the calls that
once looped run under ``support.hang.hard_limit``); a budget stops the ensemble with the starts done."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.hang import hard_limit

from polarize import NORMALIZERS, ConfigError, Ensemble, Experiment, simulate, simulate_many
from polarize import ensemble as ensemble_module
from polarize.status import Status
from polarize.switching import kinks_of

KINKED = tuple(name for name, normalizer in NORMALIZERS.items() if kinks_of(normalizer) is not None)

# Starts in the positive orthant for the maps that divide by a total or have kinks at zero:
# there the flow is smooth over these short horizons, so both engines run to the horizon.
POSITIVE = {"l1", "sum", "l2", "relu", "sparsemax"}


def starts(n: int, K: int, seed: int, shift: float = 0.0) -> np.ndarray:
    return shift + np.random.default_rng(seed).normal(size=(K, n))


def assert_agrees(ensemble: Ensemble, flow_tol, *, trajectories: bool = False) -> None:
    """Each entry against ``simulate`` on the same start: same winner, scores within the solver's slack."""
    for k, a0 in enumerate(ensemble.a0):
        result = simulate(dataclasses.replace(ensemble.experiment, a0=a0))
        assert result.finished == ensemble.finished[k]
        assert ensemble.winner[k] == result.winner, k
        flow_tol.assert_close(ensemble.s[k], result.s[-1], err_msg=f"start {k}")
        if ensemble.experiment.normalizer not in KINKED:  # sliding along a kink, a is less certain than s
            flow_tol.assert_close(ensemble.a[k], result.a[-1], err_msg=f"start {k}")
        if trajectories:
            np.testing.assert_allclose(ensemble.t, result.t)
            flow_tol.assert_close(ensemble.s_path[k], result.s, err_msg=f"path of start {k}")


@pytest.mark.parametrize("method", ["flow", "gd"])
@pytest.mark.parametrize("loss", ["logistic", "square", "kl"])
def test_every_loss_and_method_agrees_with_simulate(loss, method, flow_tol):
    e = Experiment(n=3, d=4, loss=loss, method=method, horizon=30.0, samples=20, seed=3)
    ensemble = simulate_many(e, starts(3, 4, seed=1), trajectories=True)
    assert_agrees(ensemble, flow_tol, trajectories=True)


@pytest.mark.parametrize("normalizer", sorted(NORMALIZERS))
def test_every_normalizer_agrees_with_simulate(normalizer, flow_tol):
    shift = 2.0 if normalizer in POSITIVE else 0.0
    e = Experiment(n=3, d=3, normalizer=normalizer, horizon=5.0, samples=10, seed=4)
    assert_agrees(simulate_many(e, starts(3, 4, seed=2, shift=shift)), flow_tol)


def test_the_tied_model_agrees_with_simulate(flow_tol):
    e = Experiment(model="tied", n=3, d=3, horizon=20.0, seed=5)
    assert_agrees(simulate_many(e, starts(3, 3, seed=3)), flow_tol)


def test_a_long_logistic_horizon_polarizes_every_start_as_simulate_does(flow_tol):
    e = Experiment(n=3, d=3, horizon=1e8, seed=6)
    ensemble = simulate_many(e, starts(3, 6, seed=4, shift=0.0) * 2)
    assert np.all(ensemble.one_minus_max < 0.05)
    np.testing.assert_array_equal(ensemble.one_minus_max, 1 - ensemble.s.max(axis=1))
    # Over a horizon of 1e8 (hundreds of steps) the per-step errors, measured by the solver on the
    # whole state (logits of size ~5), add up: allow 10 times the per-step slack on the largest logit.
    long = dataclasses.replace(flow_tol, rtol=10 * flow_tol.rtol, atol=10 * flow_tol.rtol * 10)
    assert_agrees(ensemble, long)


def test_groups_split_and_each_entry_stays_where_it_belongs(monkeypatch, flow_tol):
    """Groups of two (forced), and one group failing: every start still agrees with its own run."""
    monkeypatch.setattr(ensemble_module, "GROUP_SIZE", 2)
    e = Experiment(n=3, d=3, loss="square", horizon=10.0, seed=7)
    ensemble = simulate_many(e, starts(3, 5, seed=5))
    assert ensemble.alone == 0
    assert_agrees(ensemble, flow_tol)


def test_a_group_that_cannot_run_as_one_is_run_start_by_start(monkeypatch, flow_tol):
    monkeypatch.setattr(ensemble_module, "march", _always_fails)
    e = Experiment(n=3, d=3, horizon=100.0, seed=8)
    ensemble = simulate_many(e, starts(3, 3, seed=6))
    assert ensemble.alone == 3
    assert_agrees(ensemble, flow_tol)


def test_a_large_group_that_fails_is_split_in_halves_that_run_as_stacks(monkeypatch, flow_tol):
    """Above SPLIT_ABOVE starts a failed group is halved and each half marched again (not run alone)."""
    march = ensemble_module.march

    def fails_when_large(system, *args):
        if len(system) > 4:
            raise ensemble_module.GroupFailed("forced")
        return march(system, *args)

    monkeypatch.setattr(ensemble_module, "march", fails_when_large)
    monkeypatch.setattr(ensemble_module, "SPLIT_ABOVE", 2)
    e = Experiment(n=3, d=3, horizon=100.0, seed=8)
    ensemble = simulate_many(e, starts(3, 10, seed=6))
    assert len(ensemble) == 10 and ensemble.alone == 0
    assert_agrees(ensemble, flow_tol)


def _always_fails(*args, **kwargs):
    raise ensemble_module.GroupFailed("forced")


@pytest.mark.parametrize("lr", [5.0, 50.0])
def test_diverging_descent_reports_the_start_that_stopped(lr):
    e = Experiment(n=3, d=3, loss="square", method="gd", lr=lr, horizon=1000 * lr, V_scale=1.0, seed=9)
    ensemble = simulate_many(e, starts(3, 2, seed=7))
    single = [simulate(dataclasses.replace(e.resolved(), a0=a0)) for a0 in ensemble.a0]
    assert [r.finished for r in single] == list(ensemble.finished)
    assert not ensemble.finished.all()


def test_trajectories_are_kept_only_when_asked_and_are_read_only():
    e = Experiment(n=3, d=3, horizon=10.0, samples=30, seed=10)
    plain = simulate_many(e, starts(3, 2, seed=8))
    assert plain.t is None and plain.s_path is None
    full = simulate_many(e, starts(3, 2, seed=8), trajectories=True)
    assert full.s_path.shape == (2, len(full.t), 3) and full.t[-1] == 10.0
    with pytest.raises(ValueError):
        full.s[0, 0] = 1.0


def test_trajectories_save_fewer_times_when_they_would_not_fit(monkeypatch):
    monkeypatch.setattr(ensemble_module, "TRAJECTORY_FLOATS", 3 * 4 * 10)
    e = Experiment(n=3, d=3, horizon=10.0, samples=200, seed=10)
    full = simulate_many(e, starts(3, 4, seed=8), trajectories=True)
    assert full.s_path.size <= 3 * 4 * 10 and full.t[-1] == 10.0


@pytest.mark.parametrize("bad", [
    np.zeros(3), np.zeros((2, 4)), np.zeros((0, 3)), [[0.0, np.nan, 1.0]], [["a", "b", "c"]],
])
def test_bad_starts_are_refused_naming_a0(bad):
    with pytest.raises(ConfigError) as info:
        simulate_many(Experiment(n=3, d=3), bad)
    assert info.value.field == "a0"


def test_too_many_starts_for_the_cap_are_refused(monkeypatch):
    monkeypatch.setenv("POLARIZE_MAX_STARTS", "3")
    with pytest.raises(ConfigError, match="POLARIZE_MAX_STARTS") as info:
        simulate_many(Experiment(n=3, d=3), np.zeros((4, 3)))
    assert info.value.field == "a0"


def test_a_start_where_the_normalizer_is_undefined_is_named():
    with pytest.raises(ConfigError, match="row 1") as info:
        simulate_many(Experiment(n=3, d=3, normalizer="l1"), [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    assert info.value.field == "a0"


def test_large_states_are_marched_in_smaller_groups(monkeypatch, flow_tol):
    """A group's memory is bounded: with room for about two starts, groups hold one or two."""
    e = Experiment(n=3, d=3, loss="square", horizon=5.0, seed=11)
    seen = []
    real_march = ensemble_module.march

    def spy(system, t, clock=None):
        seen.append(len(system))
        return real_march(system, t, clock)

    monkeypatch.setattr(ensemble_module, "march", spy)
    monkeypatch.setattr(ensemble_module, "GROUP_FLOATS", 2 * (16 * 12 + 3 * 12 * 12))
    ensemble = simulate_many(e, starts(3, 5, seed=9))
    assert max(seen) <= 2 and sum(seen) == 5
    assert_agrees(ensemble, flow_tol)


@pytest.mark.parametrize("method", ["flow", "gd"])
def test_l1_starts_under_the_flow_run_alone_without_a_stack_attempt_first(monkeypatch, method, flow_tol):
    """A stack cannot follow l1's sliding mode: each failed attempt (up to its step budget, then halves)
    made simulate_many ~7x slower than a loop of simulate. Under the flow no stack is tried at all, so
    the work is the loop's; descent has no kinks to slide on and keeps its stacks."""
    calls = []
    real = ensemble_module.march

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ensemble_module, "march", counted)
    e = Experiment(n=3, d=3, normalizer="l1", horizon=30.0, seed=1, method=method, lr=0.1)
    ensemble = simulate_many(e, starts(3, 5, seed=2))
    if method == "flow":
        assert calls == [] and ensemble.alone == 5
    else:
        assert ensemble.alone == 0
    assert_agrees(ensemble, flow_tol)


# ---- starts that cannot hang: refused by their row, as simulate refuses them; budgets ----------------


SPARSE = Experiment(n=3, d=3, horizon=10, samples=5, normalizer="sparsemax")


@pytest.mark.parametrize("start", [[1e20, 0.0, 0.0], [1e300, -1e300, 5.0]])
def test_simulate_many_refuses_what_simulate_refuses_instead_of_hanging(start):
    with pytest.raises(ConfigError) as alone:
        simulate(Experiment(n=3, d=3, horizon=10, samples=5, normalizer="sparsemax", a0=start))
    with hard_limit(), pytest.raises(ConfigError, match="row 0") as many:
        simulate_many(SPARSE, [start])
    assert many.value.field == alone.value.field == "a0"


def test_a_hostile_start_among_good_ones_is_named_by_its_row():
    starts = [[0.1, 0.0, 0.0]] * 5 + [[1e20, 0.0, 0.0]]
    with hard_limit(), pytest.raises(ConfigError, match="row 5"):
        simulate_many(SPARSE, starts)


def test_a_start_beyond_the_floats_is_a_config_error():
    with pytest.raises(ConfigError, match="too large for a float") as info:
        simulate_many(Experiment(n=3, d=3), [[10**400, 0, 0]])
    assert info.value.field == "a0"


def test_a_budget_stops_the_ensemble_with_the_starts_done_in_order():
    e = Experiment(n=3, d=3, loss="kl", horizon=1e4, samples=20, seed=3)
    starts = np.random.default_rng(0).standard_normal((40, 3))
    whole = simulate_many(e, starts)
    assert whole.status == "finished" and len(whole) == 40
    cut = simulate_many(e, starts, budget=0.0)
    assert cut.status == Status.OUT_OF_TIME and len(cut) < 40
    np.testing.assert_array_equal(cut.a0, starts[:len(cut)])


def test_a_budget_also_stops_descent():
    e = Experiment(n=3, d=3, loss="square", method="gd", lr=0.01, horizon=100.0, seed=1)
    cut = simulate_many(e, np.zeros((3, 3)), budget=0.0)
    assert cut.status == Status.OUT_OF_TIME and len(cut) == 0


hostile = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),  # anything finite: 1e308, denormals, -0.0
    st.sampled_from([1e20, -1e20, 1e300, -1e300, 5e-324, 700.0, -745.0, 0.0]),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.lists(hostile, min_size=3, max_size=3), min_size=1, max_size=4),
       normalizer=st.sampled_from(["sparsemax", "softmax", "l1", "relu", "linear", "l2"]))
def test_generated_hostile_starts_never_hang_and_agree_with_simulate(rows, normalizer):
    """Every hostile start is refused as ``simulate`` refuses it, or run to the same end, in time."""
    e = Experiment(n=3, d=3, horizon=10, samples=5, normalizer=normalizer, seed=2)
    with warnings.catch_warnings(), hard_limit():
        warnings.simplefilter("ignore")
        try:
            ensemble = simulate_many(e, rows)
        except ConfigError as exc:
            row = int(str(exc).split("row ")[1].split(":")[0])
            with pytest.raises(ConfigError):
                simulate(Experiment(n=3, d=3, horizon=10, samples=5, normalizer=normalizer, seed=2,
                                    a0=rows[row]))
            return
        assert isinstance(ensemble, Ensemble) and len(ensemble) == len(rows)
        assert np.all(np.isfinite(ensemble.s)) and np.all(np.isfinite(ensemble.a))
        for k, row in enumerate(rows):
            one = simulate(Experiment(n=3, d=3, horizon=10, samples=5, normalizer=normalizer, seed=2,
                                      a0=row))
            # The stack has no stall rule of its own (simulate's stops a run that, 1000 steps past a saved
            # time, has not the pace to reach the next), so it may finish a start that simulate gives up
            # on, never the reverse.
            assert ensemble.finished[k] or not one.finished
