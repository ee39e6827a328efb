"""The paper's claims (arXiv:2603.06248, sections 3-6), as assertions on simulated flows."""

import numpy as np
import pytest

from polarize import KL, Experiment, simulate
from polarize.presets import PRESETS


def at_time(r, t):
    """Index of the saved time closest to ``t`` (log scale)."""
    return int(np.argmin(np.abs(np.log(r.t[1:]) - np.log(t)))) + 1


# ---- logistic loss + softmax polarizes --------------------------------------------------------


@pytest.mark.parametrize(
    "experiment",
    [Experiment(horizon=1e6), PRESETS["paper-logistic"].with_changes(horizon=1e6)],
    ids=["default", "paper-logistic"],
)
def test_logistic_softmax_reaches_a_vertex_and_rank_one(experiment):
    r = simulate(experiment)
    assert r.finished
    assert r.s[-1].max() > 0.95
    assert r.one_minus_max[-1] == pytest.approx(1 - r.s[-1].max(), abs=1e-15)
    # V tends to rank one: sigma_2 / sigma_1 is small and keeps shrinking.
    ratio = r.singular_values[:, 1] / r.singular_values[:, 0]
    assert ratio[-1] < 0.05
    checkpoints = [ratio[at_time(r, t)] for t in (1e1, 1e2, 1e3, 1e4, 1e5, 1e6)]
    assert np.all(np.diff(checkpoints) < 0)
    assert ratio[-1] < 0.1 * ratio[0]
    # ... aligned with beta_* and carried by the winning token's column.
    left, _, right = np.linalg.svd(r.V_final)
    assert abs(left[:, 0] @ np.asarray(r.experiment.target)) > 0.99
    w = r.winner
    assert int(np.argmax(np.abs(right[0]))) == w
    assert r.p[-1, w] == np.max(r.p[-1])
    assert r.column_norms[-1, w] > 3 * np.median(np.delete(r.column_norms[-1], w))


def test_non_maximal_mass_shrinks_like_inverse_log_squared():
    """1 - max s decreases decade after decade, tracking 2 (n - 1) / (n z^2) with z = p.s ~ log t."""
    n = 8
    gaps, predictions = [], []
    for horizon in (1e4, 1e6, 1e8, 1e10):
        r = simulate(Experiment(n=n, d=n, horizon=horizon, samples=20))
        assert r.finished
        z = r.p[-1] @ r.s[-1]
        gaps.append(r.one_minus_max[-1])
        predictions.append(2 * (n - 1) / (n * z * z))
        assert z == pytest.approx(np.log(horizon), rel=0.05)  # the margin grows like log t
    assert np.all(np.diff(gaps) < 0)
    assert 0.5 < gaps[-1] / predictions[-1] < 2.0
    # The gap is far below the theorem's O(1/log t) envelope's slope: it shrinks faster than 1/z.
    assert gaps[-1] / gaps[0] < (np.log(1e4) / np.log(1e10)) ** 1.2


@pytest.mark.parametrize(("n", "d"), [(8, 8), (5, 3), (10, 20), (4, 1)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_from_uniform_logits_the_largest_projection_wins(n, d, seed):
    r = simulate(Experiment(n=n, d=d, seed=seed, a_init="zeros", horizon=1e8, samples=5))
    assert r.winner == int(np.argmax(r.p[0]))
    assert r.s[-1].max() > 0.9


def test_repulsion_rich_get_richer(flow_tol):
    """Ahead tokens amplify, the others collapse: the winner's score rises, every other one falls.

    Monotone up to what the solver leaves uncertain in the scores; the real steps
    between saved times are 1e-4 and more, so a rise or fall the wrong way fails.
    """
    r = simulate(Experiment(n=6, d=6, seed=4, horizon=1e6, samples=100))
    w = r.winner
    flow_tol.assert_non_decreasing(r.s[:, w])
    late = r.s[at_time(r, 1e3):]
    flow_tol.assert_non_increasing(np.delete(late, w, axis=1))


# ---- other normalizers do not polarize ----------------------------------------------------------

def comparison(loss, normalizer):
    """The paper's normalizer comparison (10 x 10, seed 42, official draws) with another map."""
    return PRESETS[f"paper-compare-{loss}"].with_changes(normalizer=normalizer, samples=40)


def test_sigmoid_and_linear_do_not_polarize_under_logistic_loss():
    """Logistic loss, flow time 5e4 (1e5 steps of 0.5): softmax concentrates, the others stay spread."""
    final = {}
    for name in ("softmax", "sigmoid", "linear"):
        r = simulate(comparison("logistic", name))
        assert r.finished
        assert r.t[-1] == 5e4
        final[name] = r
    log_n = np.log(10)
    assert final["softmax"].entropy[-1] < 0.3 * log_n
    assert final["softmax"].s[-1].max() > 0.95
    for name in ("sigmoid", "linear"):
        assert final[name].entropy[-1] > 0.85 * log_n
        assert final[name].entropy[-1] > final["softmax"].entropy[-1] + 1.5
        # every coordinate keeps a share of the same order as the largest
        assert np.min(np.abs(final[name].s[-1])) > 0.2 * np.max(np.abs(final[name].s[-1]))


def test_sigmoid_and_linear_stay_spread_under_square_loss():
    """Square loss, flow time 500 (5,000 steps of 0.1): no map concentrates its scores.

    (Softmax does not polarize here either: with d = n the square loss is solved
    within the first time units, long before the logits separate; so this setting
    cannot show softmax ahead of sigmoid and linear, only that those stay spread.)
    """
    log_n = np.log(10)
    for name in ("softmax", "sigmoid", "linear"):
        r = simulate(comparison("square", name))
        assert r.finished
        assert r.t[-1] == 500.0
        assert r.loss[-1] < 1e-10
        assert r.entropy[-1] > 0.95 * log_n


# ---- tied model ---------------------------------------------------------------------------------


def test_tied_model_polarizes_and_grows_the_winner_column():
    r = simulate(Experiment(model="tied", n=10, d=10, V_init="identity", V_scale=1.0, a_init="shifted",
                            a_shift=1.0, a_scale=0.1, seed=0, horizon=500.0, samples=50))
    assert r.finished
    assert r.s[-1].max() > 0.99
    w = r.winner
    others = np.delete(r.column_norms[-1], w)
    assert r.column_norms[-1, w] > 3.0
    assert np.all(others < 2.0)
    assert r.winner_column_norm[-1] == r.column_norms[-1, w]


def test_tied_model_symmetric_columns_stay_equal(flow_tol):
    """Tokens 0 and 1 are exchangeable (equal logits, equal target entries, U0 = I).

    Exact in exact arithmetic; in floating point the two columns start apart by
    rounding, which the flow may amplify, and the solver controls each only to
    its tolerance: so equality is asked to a small multiple of that tolerance
    (flow_tol), still 1e6 times finer than what a broken symmetry produces.
    """
    D = 6
    a0 = np.array([0.7, 0.7, 1.0, 0.2, 0.5, 0.9])
    target = np.array([1.0, 1.0, 0.3, -0.5, 0.2, 0.4])
    r = simulate(Experiment(model="tied", n=D, d=D, V_init="identity", V_scale=1.0, a0=a0, target=target,
                            horizon=200.0, samples=40))
    assert r.finished
    for name in ("column_norms", "s", "a"):
        x = getattr(r, name)
        flow_tol.assert_close(x[:, 0], x[:, 1], err_msg=name)
    assert np.abs(r.column_norms[-1] - 1).max() > 0.1  # something did happen


# ---- square loss: partial polarization, more with worse conditioning ----------------------------


def test_square_loss_polarizes_partly_and_more_with_larger_kappa():
    entropies = []
    for kappa in (1.0, 3.0, 5.0):
        r = simulate(Experiment(n=20, d=20, loss="square", kappa=kappa, seed=123, V_scale=1e-5,
                                a_init="gaussian", a_scale=1e-3, horizon=3000.0, samples=40))
        assert r.finished
        assert r.loss[-1] < 1e-20  # converged
        assert r.s[-1].max() < 1 - 1e-3  # no strict one-hot
        entropies.append(r.entropy[-1])
    assert entropies[0] > entropies[1] > entropies[2]
    assert entropies[0] > 0.99 * np.log(20)  # kappa = 1: hardly any sparsification
    assert entropies[2] < 0.5 * np.log(20)


# ---- KL: the loss tends to its floor H(p*) from above --------------------------------------------


def test_kl_loss_tends_to_its_floor_from_above(paper_kl, flow_tol):
    r = paper_kl
    assert r.finished
    gap = r.loss - KL(np.asarray(r.experiment.target)).floor
    # Cross-entropy >= entropy holds at every state (Gibbs), integrated accurately or not:
    # only the rounding of the O(1) loss value (~1e-15) may show.
    assert np.all(gap >= -1e-12)
    assert gap[0] > 0.5
    assert gap[-1] < 1e-8
    # Decreasing along the flow: a property of the trajectory, so up to the solver's slack.
    flow_tol.assert_non_increasing(r.loss)
