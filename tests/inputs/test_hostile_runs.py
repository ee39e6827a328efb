"""Hostile runs (issue 22): ensembles that cannot hang, no silent infinity, strict JSON, odd scalars.

A hang cannot fail a test by itself, so the calls that used to hang run under ``hard_limit``:
SIGALRM raises in the main thread between two bytecodes (the stepper that looped is Python code),
and the test fails with the place it was stuck instead of blocking the suite.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.hang import hard_limit

from polarize import Experiment, simulate, simulate_many
from polarize.cli import main
from polarize.config import ConfigError
from polarize.ensemble import Ensemble
from polarize.status import Status


def strict_loads(text: str):
    """``json.loads`` that refuses ``NaN``, ``Infinity`` and ``-Infinity`` (Python's extensions)."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


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


def test_a_finished_run_never_holds_infinity():
    """Linear scores [-1, -1e-320]: s / max s would be 1e320; the start is refused, in words."""
    with pytest.raises(ConfigError, match="too close to 0") as info:
        simulate(Experiment(n=2, d=2, normalizer="linear", a0=[-1.0, -1e-320], horizon=1e-3))
    assert info.value.field == "a0"


def _finite_everywhere(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(map(_finite_everywhere, value.values()))
    if isinstance(value, list):
        return all(map(_finite_everywhere, value))
    return True


@pytest.mark.parametrize("config", [
    {"n": 2, "d": 2, "normalizer": "linear", "horizon": 1e-3, "a0": [-1.0, -1e-320]},  # s / max s = inf
    {"n": 2, "d": 2, "normalizer": "linear", "horizon": 1e-3, "a0": [-1.0, -1e-300]},
    {"n": 3, "d": 3, "normalizer": "sparsemax", "horizon": 10, "samples": 5},
    {"n": 3, "d": 2, "loss": "square", "method": "gd", "lr": 50.0, "horizon": 5000.0, "V_scale": 1.0},
])
def test_polarize_run_writes_strict_json(tmp_path, config, capsys):
    source, out = tmp_path / "config.json", tmp_path / "result.json"
    source.write_text(json.dumps(config))
    status = main(["run", str(source), "-o", str(out)])
    if status == 0:
        data = strict_loads(out.read_text())
        assert _finite_everywhere(data)
    else:
        assert status == 2 and not out.exists()
        assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_the_experiment_json_is_strict():
    text = Experiment(n=3, d=3).resolved().to_json()
    assert Experiment.from_json(text) == Experiment(n=3, d=3).resolved()
    strict_loads(text)


@pytest.mark.parametrize("field", ["eps", "n", "seed", "horizon", "temperature", "a0", "V0", "target"])
@pytest.mark.parametrize("value", [np.array(3.0), np.array(1e-4), np.ma.masked,
                                   np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0])])
def test_zero_d_and_masked_arrays_are_config_errors(field, value):
    with pytest.raises(ConfigError) as info:
        Experiment(**{"n": 3, "d": 3, field: value})
    assert info.value.field == field
