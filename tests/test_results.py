"""What a run reports: finite arrays when descent diverges; a saved grid consistent with its diagnostics.

``simulate`` is total on what validation accepts: the longest horizons run, a start that would overflow
is refused naming the field to blame, and a finished run never holds an infinity; configs drawn by
``support.fuzz`` simulate to finite numbers or stop in words."""

import numpy as np
import pytest
from hypothesis import assume, event, given
from support.fuzz import FIELDS, build, fuzz, runnable

from polarize import KL, Experiment, Logistic, LogisticData, Square, entropy, make_normalizer, simulate
from polarize.config import ConfigError
from polarize.diagnostics import dead_rows
from polarize.model import tied_gradients, value_gradients

# ---- bad inputs never produce NaN -----------------------------------------------------------------

SERIES = ("t", "s", "a", "u", "loss", "entropy", "effective_support", "one_minus_max", "ratio",
          "grad_norm_V", "grad_norm_a", "singular_values", "column_norms", "V_final")


@pytest.mark.parametrize(
    "kw",
    [
        dict(loss="square", lr=500.0, horizon=1e5),
        dict(loss="square", lr=50.0, horizon=5000.0, normalizer="linear"),
        dict(loss="square", lr=200.0, horizon=4e4, normalizer="sum", a_init="shifted"),
        dict(loss="kl", lr=900.0, horizon=9e5, normalizer="linear"),
    ],
)
def test_divergent_descent_stops_with_finite_arrays(kw):
    r = simulate(Experiment(n=4, d=4, seed=0, V_scale=1.0, a_scale=1.0, samples=50, method="gd", **kw))
    assert r.status == "stopped"
    assert r.message.startswith("stopped after")
    assert 1 <= len(r.t) < 50
    assert len(r.s) == len(r.t) == len(r.loss)
    none = ~np.any(r.s != 0, axis=1)  # every score 0 (linear scores of a = 0): no distribution, no entropy
    for name in SERIES:
        values = np.asarray(getattr(r, name))
        if name in ("entropy", "effective_support"):
            assert np.all(np.isnan(values[none])), name
            values = values[~none]
        assert np.all(np.isfinite(values)), name
    assert r.t[-1] < r.experiment.horizon


def test_large_but_finite_descent_keeps_finite_arrays():
    """A run whose loss explodes without overflowing still reports only finite numbers."""
    r = simulate(Experiment(model="tied", n=4, d=4, loss="square", V_init="identity", V_scale=1.0,
                            method="gd", lr=20.0, horizon=2e3, seed=0, a_scale=1.0, samples=50))
    for name in SERIES:
        assert np.all(np.isfinite(getattr(r, name))), name


# ---- saved grid and diagnostics ----------------------------------------------------------------


def build_loss(e):
    """The loss object an explicit (resolved) experiment describes."""
    target = np.asarray(e.target)
    if e.loss == "kl":
        return KL(target)
    if e.loss == "logistic":
        return Logistic.from_target(target) if e.X is None else LogisticData(np.asarray(e.X), np.asarray(e.y))
    if e.X is None:
        return Square(np.eye(e.d), target)
    return Square(np.asarray(e.X), np.asarray(e.y))


@pytest.mark.parametrize(
    "kw",
    [
        dict(loss="logistic", horizon=1e12),
        dict(loss="logistic", normalizer="sigmoid", d=2, horizon=1e3),
        dict(loss="logistic", X=[[1, 0, 0, 1], [0, 1, 1, 0]], y=[1, -1], horizon=1e3),
        dict(loss="square", kappa=2.0, m=2, horizon=300.0),
        dict(loss="square", horizon=40.0, method="gd", lr=0.05),
        dict(loss="kl", horizon=100.0, normalizer="l2", a_init="shifted"),
        dict(model="tied", loss="logistic", d=5, V_init="identity", V_scale=1.0, horizon=50.0),
    ],
)
def test_saved_grid_and_diagnostics_are_consistent(kw):
    base = dict(n=5, d=4, seed=6, a_init="gaussian", a_scale=1.0, V_scale=0.5, samples=30)
    base.update(kw)
    e = Experiment(**base)
    r = simulate(e)
    assert r.finished
    K = len(r.t)
    assert 2 < K <= e.samples
    assert r.t[0] == 0 and r.t[1] == pytest.approx(e.lr) and r.t[-1] == pytest.approx(e.horizon, rel=1e-12)
    assert np.all(np.diff(r.t) > 0)
    for name in ("s", "a", "u", "ratio", "column_norms"):
        assert getattr(r, name).shape == (K, e.n), name
    assert r.singular_values.shape == (K, 3) and r.V_final.shape == (e.d, e.n)
    np.testing.assert_allclose(r.entropy, entropy(r.s), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(r.effective_support, np.exp(r.entropy), rtol=1e-12)
    np.testing.assert_allclose(r.one_minus_max, 1 - r.s.max(axis=1), rtol=0, atol=1e-15)
    np.testing.assert_allclose(r.ratio, r.s / r.s.max(axis=1, keepdims=True), rtol=1e-14)
    # The last sample, recomputed from V_final with the library's gradients.
    loss = build_loss(r.experiment)
    norm = make_normalizer(e.normalizer)
    grads = tied_gradients if e.model == "tied" else value_gradients
    G = grads(r.V_final, r.a[-1], loss, norm)
    np.testing.assert_allclose(r.s[-1], G.s, rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(r.u[-1], G.u, rtol=1e-8, atol=1e-13)
    assert r.loss[-1] == pytest.approx(float(G.loss), rel=1e-8, abs=1e-300)
    assert r.grad_norm_V[-1] == pytest.approx(np.linalg.norm(G.grad_V), rel=1e-8, abs=1e-300)
    assert r.grad_norm_a[-1] == pytest.approx(np.linalg.norm(G.grad_a), rel=1e-8, abs=1e-300)
    np.testing.assert_allclose(r.column_norms[-1], np.linalg.norm(r.V_final, axis=0), rtol=1e-9)
    sv = np.linalg.svd(r.V_final, compute_uv=False)[:3]
    np.testing.assert_allclose(r.singular_values[-1, :len(sv)], sv, rtol=1e-9, atol=1e-13)
    if isinstance(loss, Logistic):
        np.testing.assert_allclose(r.p[-1], r.V_final.T @ loss.target, rtol=1e-9, atol=1e-13)
    else:
        assert r.p is None


# ---- simulate is total on what validation accepts ---------------------------------------------------


def test_a_long_flow_saved_from_a_small_step_runs():
    result = simulate(Experiment(horizon=1e15, lr=1e-5, n=4, d=3, samples=40))
    assert result.finished and result.t[1] == pytest.approx(1e-5) and result.t[-1] == 1e15


def test_the_longest_horizon_runs_and_an_overflowing_step_count_names_lr():
    result = simulate(Experiment(horizon=1e300, lr=1e-5, n=3, d=3, samples=40))
    assert result.finished and result.t[-1] == 1e300 and np.all(np.isfinite(result.t))
    for method in ("flow", "gd"):
        with pytest.raises(ConfigError, match=r"^lr:"):
            Experiment(horizon=1e300, lr=1e-12, method=method)


@pytest.mark.parametrize(("config", "field"), [
    (dict(n=2, d=1, V0=[[1e155, 0.0]]), "V0"),
    (dict(n=5, d=6, V0=np.where(np.arange(30).reshape(6, 5) == 0, 1e308, 0.0)), "V0"),
    (dict(loss="square", n=3, d=2, X=[[1e308, 0.0], [0.0, 1.0]], y=[1.0, 2.0]), "X"),
])
def test_a_start_that_overflows_is_refused_naming_the_array(config, field):
    with pytest.raises(ConfigError) as caught:
        simulate(Experiment(**config))
    assert caught.value.field == field and "cannot start there" in str(caught.value)


@pytest.mark.parametrize("loss", ["logistic", "square"])
def test_a_temperature_so_small_that_the_start_overflows_is_blamed_not_V_scale(loss):
    """Nothing but the temperature is set: the refusal must name it, not a field the config left alone."""
    with pytest.raises(ConfigError) as caught:
        simulate(Experiment(n=3, d=2, loss=loss, temperature=1e-300))
    assert caught.value.field == "temperature" and "too small" in str(caught.value)
    assert simulate(Experiment(n=3, d=2, loss=loss, temperature=1e-3, horizon=1.0)).finished


def test_a_diverging_descent_stops_in_words_with_finite_numbers():
    result = simulate(Experiment(loss="square", n=3, d=3, method="gd", lr=900.0, horizon=9e4, samples=20,
                                 V_scale=1.0, a_init="gaussian"))
    assert not result.finished and "diverg" in result.message
    assert all(np.all(np.isfinite(getattr(result, k))) for k in ("s", "loss", "V_final", "t"))


def test_a_finished_run_never_holds_infinity():
    """Linear scores [-1, -1e-320]: s / max s would be 1e320; the start is refused, in words."""
    with pytest.raises(ConfigError, match="too close to 0") as info:
        simulate(Experiment(n=2, d=2, normalizer="linear", a0=[-1.0, -1e-320], horizon=1e-3))
    assert info.value.field == "a0"


# ---- property-based: accepted configs simulate to finite numbers or stop in words -------------------


@fuzz(40, share=0.25)
@given(runnable())
def test_accepted_configs_simulate_to_finite_numbers_or_stop_in_words(config):
    assume(config["method"] == "flow" or config["horizon"] / config["lr"] <= 2000)
    e = build(config)
    assume(e is not None)
    try:
        result = simulate(e)
    except ConfigError as exc:  # a start that cannot be measured: named, in one line
        assert exc.field in FIELDS and "cannot start there" in str(exc)
        event("refused at the start")
        return
    event(result.status)
    assert result.status in ("finished", "stopped")
    assert result.finished or result.message.startswith("stopped after")
    for name in ("t", "s", "a", "u", "loss", "grad_norm_V", "grad_norm_a", "singular_values",
                 "column_norms", "V_final"):
        assert np.all(np.isfinite(getattr(result, name))), name
    # No entropy where every score is 0 (a dead run is no distribution), and only there.
    none = dead_rows(result.s)
    assert np.all(np.isfinite(result.entropy[~none])) and np.all(np.isnan(result.entropy[none]))
    assert result.experiment == e.resolved()
