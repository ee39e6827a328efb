"""Normalizers: vector-Jacobian products, stability, degenerate states, simplex properties.

Every VJP is checked against central finite differences of ``forward``; the
points are drawn away from each map's kinks (ReLU/L1 at zero, sparsemax where
a coordinate meets the threshold, sum where the total vanishes), so the
difference quotient's error is O(h^2) ~ 1e-12 and a relative tolerance of 1e-6
is loose.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import brentq
from scipy.special import expit, softmax

from polarize import NORMALIZERS, DegenerateStateError, make_normalizer
from polarize.normalizers import takes

ALL = sorted(NORMALIZERS)
SIMPLEX = ["softmax", "sparsemax", "l2", "relu", "l1"]
H = 1e-6  # finite-difference step on logits of order one


def sparsemax_reference(a):
    """Projection onto the simplex by root-finding the threshold: sum max(a - tau, 0) = 1."""
    a = np.asarray(a, dtype=float)
    tau = brentq(lambda t: np.sum(np.maximum(a - t, 0.0)) - 1.0, a.min() - 1.0, a.max(), xtol=1e-15,
                 rtol=4 * np.finfo(float).eps)
    return np.maximum(a - tau, 0.0), tau


def kink_distance(name, a):
    """Distance of ``a`` (one row) from the set where the map is not differentiable."""
    a = np.asarray(a, dtype=float)
    if name in ("relu", "l1"):
        return np.min(np.abs(a)) if name == "l1" or np.any(a > 0) else 0.0
    if name == "sum":
        return abs(np.sum(a))
    if name == "sparsemax":
        _, tau = sparsemax_reference(a)
        return np.min(np.abs(a - tau))
    if name == "l2":
        return np.max(np.abs(a))
    return np.inf


def generic_logits(name, shape, rng, margin=0.05):
    """Random logits of order one at least ``margin`` away from the map's kinks."""
    while True:
        a = 0.8 * rng.randn(*shape) + (0.3 if name in ("sum", "relu") else 0.0)
        rows = a.reshape(-1, shape[-1])
        if all(kink_distance(name, row) > margin for row in rows):
            return a


def fd_jacobian(f, a, h=H):
    """Central-difference Jacobian of ``f`` at the vector ``a``: J[i, j] = d f_i / d a_j."""
    cols = []
    for j in range(len(a)):
        e = np.zeros_like(a)
        e[j] = h
        cols.append((f(a + e) - f(a - e)) / (2 * h))
    return np.stack(cols, axis=1)


def make(name):
    return make_normalizer(name)


def all_normalizers():
    out = [(name, make(name)) for name in ALL]
    out += [("softmax", make_normalizer("softmax", temperature=t)) for t in (0.3, 2.5)]
    # An eps far larger than the notebook's 1e-10, so that a VJP that forgot it would fail.
    out += [(name, make_normalizer(name, eps=0.3)) for name in WITH_EPS]
    return out


WITH_EPS = ("relu", "l1", "l2", "sum")
NORMALIZER_CASES = all_normalizers()
NORMALIZER_IDS = [f"{name}-T{getattr(norm, 'temperature', 1)}-eps{getattr(norm, 'eps', 0)}"
                  for name, norm in NORMALIZER_CASES]


def test_registry_has_the_documented_maps():
    assert set(NORMALIZERS) == {"softmax", "sigmoid", "relu", "l1", "sum", "l2", "linear", "sparsemax"}
    for name in ALL:
        assert make(name).name == name
    with pytest.raises(ValueError):
        make_normalizer("tanh")


@pytest.mark.parametrize(("name", "norm"), NORMALIZER_CASES, ids=NORMALIZER_IDS)
@pytest.mark.parametrize("seed", range(3))
def test_vjp_matches_finite_differences(name, norm, seed):
    rng = np.random.RandomState(seed)
    n = 6
    a = generic_logits(name, (n,), rng)
    g = rng.randn(n)
    J = fd_jacobian(norm.forward, a)
    want = J.T @ g
    got = norm.vjp(a, g)
    assert got.shape == (n,)
    assert np.linalg.norm(got - want) <= 1e-6 * np.linalg.norm(want) + 1e-9 * np.linalg.norm(g)


@pytest.mark.parametrize(("name", "norm"), NORMALIZER_CASES, ids=NORMALIZER_IDS)
def test_batched_forward_and_vjp_match_rows_and_finite_differences(name, norm):
    rng = np.random.RandomState(11)
    A = generic_logits(name, (2, 3, 5), rng)
    G = rng.randn(2, 3, 5)
    S = norm.forward(A)
    VJ = norm.vjp(A, G)
    assert S.shape == A.shape and VJ.shape == A.shape
    for idx in np.ndindex(2, 3):
        a, g = A[idx], G[idx]
        np.testing.assert_allclose(S[idx], norm.forward(a), rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(VJ[idx], norm.vjp(a, g), rtol=1e-13, atol=1e-14)
        want = fd_jacobian(norm.forward, a).T @ g
        assert np.linalg.norm(VJ[idx] - want) <= 1e-6 * np.linalg.norm(want) + 1e-9 * np.linalg.norm(g)


def test_forward_values_against_independent_formulas():
    rng = np.random.RandomState(3)
    a = rng.randn(7) + 0.2
    np.testing.assert_allclose(make("softmax").forward(a), softmax(a), rtol=1e-14)
    np.testing.assert_allclose(make_normalizer("softmax", temperature=0.5).forward(a), softmax(2 * a),
                               rtol=1e-13)
    np.testing.assert_allclose(make("sigmoid").forward(a), expit(a), rtol=1e-15)
    np.testing.assert_allclose(make("relu").forward(a), np.maximum(a, 0) / np.maximum(a, 0).sum(), rtol=1e-14)
    np.testing.assert_allclose(make("l1").forward(a), np.abs(a) / np.abs(a).sum(), rtol=1e-14)
    np.testing.assert_allclose(make("sum").forward(a), a / a.sum(), rtol=1e-14)
    np.testing.assert_allclose(make("l2").forward(a), a**2 / np.sum(a**2), rtol=1e-14)
    np.testing.assert_array_equal(make("linear").forward(a), a)


HUGE = [
    np.array([1e4, -1e4, 0.0, 5e3]),
    np.array([-1e4, -1e4, -1e4, 1e4]),
    np.array([1e4, 1e4, -3e3, 2.0]),
    1e4 * np.random.RandomState(5).randn(9),
]


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("case", range(len(HUGE)))
def test_forward_and_vjp_stable_at_huge_logits(name, case):
    a = HUGE[case]
    norm = make(name)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        s = norm.forward(a)
        v = norm.vjp(a, np.linspace(-1, 1, len(a)))
    assert np.all(np.isfinite(s)) and np.all(np.isfinite(v))
    if name in SIMPLEX:
        assert np.all(s >= 0)
        assert abs(np.sum(s) - 1.0) <= 1e-12


def test_softmax_at_huge_logits_is_the_vertex():
    s = make("softmax").forward(np.array([1e4, -1e4, 0.0, 5e3]))
    np.testing.assert_array_equal(s, [1.0, 0.0, 0.0, 0.0])
    s = make_normalizer("softmax", temperature=0.01).forward(np.array([1e4, 1e4 - 1.0]))
    assert np.all(np.isfinite(s)) and s[0] == 1.0 and s[1] < 1e-40


def test_l2_survives_enormous_scale():
    a = np.array([3e200, -4e200, 1e199])
    s = make("l2").forward(a)
    np.testing.assert_allclose(s, np.array([9.0, 16.0, 0.01]) / 25.01, rtol=1e-13)
    assert np.all(np.isfinite(make("l2").vjp(a, np.ones(3))))


def test_relu_dead_state_is_zero_with_zero_vjp():
    relu = make("relu")
    a = np.array([-1.0, 0.0, -2.5, -1e4])
    np.testing.assert_array_equal(relu.forward(a), np.zeros(4))
    np.testing.assert_array_equal(relu.vjp(a, np.array([1.0, -2.0, 3.0, 4.0])), np.zeros(4))
    # A batch with one dead row and one live row: each row on its own terms.
    A = np.stack([a, np.array([1.0, -1.0, 3.0, 0.0])])
    S = relu.forward(A)
    np.testing.assert_array_equal(S[0], np.zeros(4))
    np.testing.assert_allclose(S[1], [0.25, 0.0, 0.75, 0.0])
    np.testing.assert_array_equal(relu.vjp(A, np.ones((2, 4)))[0], np.zeros(4))


@pytest.mark.parametrize(
    ("name", "a"),
    [
        ("sum", np.array([1.0, -1.0, 0.0])),
        ("sum", np.array([2.5, -0.5, -2.0])),
        ("l1", np.zeros(4)),
        ("l2", np.zeros(4)),
    ],
)
def test_undefined_states_raise(name, a):
    norm = make(name)
    with pytest.raises(DegenerateStateError):
        norm.forward(a)
    with pytest.raises(DegenerateStateError):
        norm.vjp(a, np.ones_like(a))
    # One degenerate row in a batch is enough.
    with pytest.raises(DegenerateStateError):
        norm.forward(np.stack([np.array([1.0, 2.0, 3.0] + [0.5] * (len(a) - 3)), a]))
    assert issubclass(DegenerateStateError, ValueError)


logit_vectors = arrays(
    np.float64,
    st.integers(2, 12),
    elements=st.floats(-60, 60, allow_nan=False, allow_infinity=False),
)


@pytest.mark.parametrize("name", SIMPLEX)
@settings(max_examples=60, deadline=None)
@given(a=logit_vectors)
def test_simplex_maps_land_on_the_simplex(name, a):
    if name in ("l1", "l2"):
        assume(np.any(a != 0))
    if name == "relu":
        assume(np.any(a > 0))
    s = make(name).forward(a)
    assert np.all(s >= 0)
    assert abs(np.sum(s) - 1.0) <= 1e-12


@settings(max_examples=60, deadline=None)
@given(a=logit_vectors, temperature=st.floats(0.05, 20.0), shift=st.floats(-100, 100))
def test_softmax_with_temperature_on_simplex_and_shift_invariant(a, temperature, shift):
    norm = make_normalizer("softmax", temperature=temperature)
    s = norm.forward(a)
    assert np.all(s >= 0) and abs(np.sum(s) - 1.0) <= 1e-12
    np.testing.assert_allclose(norm.forward(a + shift), s, rtol=1e-9, atol=1e-12)
    # The VJP annihilates the all-ones direction: sum(a) is conserved by any softmax flow.
    assert abs(np.sum(norm.vjp(a, np.cos(np.arange(len(a)))))) <= 1e-12 * max(1.0, 1.0 / temperature)


small_logit_vectors = arrays(
    np.float64,
    st.integers(2, 12),
    elements=st.floats(-1.5, 1.5, allow_nan=False, allow_infinity=False),
)


@settings(max_examples=150, deadline=None)
@given(a=st.one_of(logit_vectors, small_logit_vectors))
def test_sparsemax_is_the_euclidean_projection(a):
    want, _ = sparsemax_reference(a)
    got = make("sparsemax").forward(a)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * max(1.0, np.max(np.abs(a))))


@pytest.mark.parametrize(
    "a",
    [
        [0.5, 0.45, 0.1, -0.3],  # support of three
        [1.0, 0.05, 0.0],  # second coordinate just inside the support
        [1.0, 0.0, 0.0],  # exactly on the boundary: one-hot
        [0.3, 0.3, 0.3, 0.3],  # ties: uniform
        [0.3, 0.29, 0.28, 0.27, -2.0],
    ],
)
def test_sparsemax_near_support_boundaries(a):
    a = np.array(a)
    np.testing.assert_allclose(make("sparsemax").forward(a), sparsemax_reference(a)[0], atol=1e-14)


def test_sparsemax_beats_every_other_simplex_point():
    """Brute force: no random point of the simplex is closer to ``a`` than sparsemax(a)."""
    rng = np.random.RandomState(8)
    for _ in range(5):
        a = rng.randn(5)
        s = make("sparsemax").forward(a)
        others = rng.dirichlet(np.ones(5) * 0.3, size=20000)
        assert np.sum((s - a) ** 2) <= np.min(np.sum((others - a) ** 2, axis=1)) + 1e-15


@pytest.mark.parametrize("name", WITH_EPS)
def test_eps_is_added_to_the_normalizing_sum(name):
    a = np.array([0.7, -0.4, 1.3, 0.2])
    parts = {"relu": np.maximum(a, 0), "l1": np.abs(a), "l2": a**2, "sum": a}[name]
    eps = 1e-10
    s = make_normalizer(name, eps=eps).forward(a)
    np.testing.assert_allclose(s, parts / (parts.sum() + eps), rtol=1e-15)
    exact = parts / parts.sum()
    assert np.all((np.abs(s) < np.abs(exact)) | (parts == 0))  # 1e-10 shows, relative to a sum of order one
    # The maps without a normalizing sum ignore it.
    for other in ("softmax", "sigmoid", "linear", "sparsemax"):
        np.testing.assert_array_equal(make_normalizer(other, eps=0.3).forward(a), make(other).forward(a))


def test_eps_defines_the_all_zero_start_and_survives_tiny_scales():
    zero = np.zeros(3)
    with pytest.raises(DegenerateStateError):
        make("l1").forward(zero)
    np.testing.assert_array_equal(make_normalizer("l1", eps=1e-10).forward(zero), zero)
    tiny = np.array([1e-170, -2e-170, 3e-170])
    exact, guarded = make("l2"), make_normalizer("l2", eps=1e-10)
    assert exact.forward(tiny).sum() == pytest.approx(1.0)  # scaled before squaring: no 0 / 0
    np.testing.assert_array_equal(guarded.forward(tiny), np.zeros(3))  # a^2 ~ 1e-340 is nothing next to eps
    for norm in (exact, guarded):
        assert np.all(np.isfinite(norm.vjp(tiny, np.ones(3))))


@pytest.mark.parametrize("name", list(NORMALIZERS))
def test_the_replicator_fact_is_the_vjps_form(name):
    """``replicator`` is true exactly where the VJP is ``s * (g - s.g)`` (with softmax's ``1/T``): checked
    against that formula at random logits, so the fact the captions read cannot disagree with the map."""
    rng = np.random.default_rng(7)
    a, g = rng.normal(size=(2, 5)), rng.normal(size=(2, 5))
    temperature = 2.0 if takes(name, "temperature") else 1.0
    sigma = make_normalizer(name, temperature=temperature)
    s = sigma.forward(a)
    replicator = s * (g - (s * g).sum(axis=-1, keepdims=True)) / temperature
    assert NORMALIZERS[name].replicator == bool(np.allclose(sigma.vjp(a, g), replicator, atol=1e-12))
