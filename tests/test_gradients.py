"""Losses and model gradients against central finite differences, and the reduced fields.

All quantities are O(1) and the step is 1e-5, so the central quotient's error is
~1e-10 relative: a 1e-6 relative tolerance only fails on a wrong formula.
"""

import zlib

import numpy as np
import pytest
from scipy.special import expit, log_softmax

from polarize import KL, NORMALIZERS, Logistic, LogisticData, Square, make_normalizer
from polarize.model import logistic_closed_field, tied_gradients, value_gradients, value_gradients_reduced

H = 1e-5
RTOL = 1e-6
ALL_NORMALIZERS = sorted(NORMALIZERS)


def fd_grad(f, x, h=H):
    """Central-difference gradient of the scalar function ``f`` at the array ``x``."""
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        out[idx] = (f(x + e) - f(x - e)) / (2 * h)
    return out


def assert_grad_close(got, want, scale=1.0):
    assert got.shape == want.shape
    err = np.linalg.norm(got - want)
    assert err <= RTOL * np.linalg.norm(want) + 1e-9 * scale, (err, np.linalg.norm(want))


def unit(v):
    return v / np.linalg.norm(v)


def make_loss(kind, d, rng, m=3):
    """A loss of each kind on outputs of dimension ``d``, with an independent value formula."""
    if kind == "logistic":
        b = unit(rng.randn(d))
        return Logistic.from_target(b), lambda beta: np.log1p(np.exp(-(b @ beta)))
    if kind == "logistic-data":
        X, y = rng.randn(m, d), rng.choice([-1.0, 1.0], size=m)
        return LogisticData(X, y), lambda beta: np.mean(np.log1p(np.exp(-y * (X @ beta))))
    if kind == "square":
        b = unit(rng.randn(d))
        return Square(np.eye(d), b), lambda beta: 0.5 * np.sum((beta - b) ** 2)
    if kind == "square-design":
        X, y = rng.randn(m, d), rng.randn(m)
        return Square(X, y), lambda beta: 0.5 * np.sum((X @ beta - y) ** 2)
    if kind == "kl":
        p = rng.dirichlet(np.ones(d))
        return KL(p), lambda beta: -p @ log_softmax(beta)
    raise AssertionError(kind)


LOSSES = ["logistic", "logistic-data", "square", "square-design", "kl"]


def away_from_kinks(name, z, margin=0.05):
    """Whether the normalizer ``name`` is smooth in a ball of radius ``margin`` around ``z``."""
    if name in ("relu", "l1") and (np.min(np.abs(z)) < margin or not np.any(z > 0)):
        return False
    if name == "sum" and abs(z.sum()) < 0.3:
        return False
    if name == "sparsemax":
        s = make_normalizer(name).forward(z)
        tau = np.max(z[s > 0] - s[s > 0])  # the threshold: s = max(z - tau, 0)
        return np.min(np.abs(z - tau)) >= margin
    return True


def generic_logits(name, n, rng):
    """Logits of order one away from the normalizer's kinks (see test_normalizers)."""
    while True:
        a = 0.8 * rng.randn(n) + (0.3 if name in ("sum", "relu") else 0.0)
        if away_from_kinks(name, a):
            return a


def seed_of(*parts):
    return zlib.crc32("-".join(map(str, parts)).encode())


@pytest.mark.parametrize("kind", LOSSES)
@pytest.mark.parametrize("seed", range(3))
def test_loss_value_and_grad(kind, seed):
    rng = np.random.RandomState(seed)
    d = 5
    loss, reference = make_loss(kind, d, rng)
    beta = rng.randn(d)
    value, grad = loss.value_and_grad(beta)
    assert float(value) == pytest.approx(reference(beta), rel=1e-13, abs=1e-15)
    assert_grad_close(grad, fd_grad(lambda x: float(loss.value_and_grad(x)[0]), beta))


@pytest.mark.parametrize("kind", LOSSES)
def test_loss_batched_matches_rows(kind):
    rng = np.random.RandomState(4)
    loss, _ = make_loss(kind, 4, rng)
    B = rng.randn(3, 2, 4)
    values, grads = loss.value_and_grad(B)
    for idx in np.ndindex(3, 2):
        v, g = loss.value_and_grad(B[idx])
        assert float(np.asarray(values)[idx]) == pytest.approx(float(v), rel=1e-14, abs=1e-15)
        np.testing.assert_allclose(grads[idx], g, rtol=1e-13, atol=1e-15)


def test_losses_stable_at_large_outputs():
    b = unit(np.array([1.0, -2.0, 0.5]))
    value, grad = Logistic.from_target(b).value_and_grad(-1e4 * b)
    assert value == pytest.approx(1e4, rel=1e-12)
    np.testing.assert_allclose(grad, -b, rtol=1e-12)
    value, grad = Logistic.from_target(b).value_and_grad(1e4 * b)
    assert 0 <= value < 1e-300 and np.all(np.isfinite(grad))
    p = np.array([0.2, 0.3, 0.5])
    value, grad = KL(p).value_and_grad(np.array([1e4, 0.0, -1e4]))
    assert value == pytest.approx(0.3 * 1e4 + 0.5 * 2e4, rel=1e-12)
    np.testing.assert_allclose(grad, [0.8, -0.3, -0.5], atol=1e-15)


@pytest.mark.parametrize("name", ALL_NORMALIZERS)
@pytest.mark.parametrize("kind", LOSSES)
def test_value_gradients_match_finite_differences(kind, name):
    rng = np.random.RandomState(seed_of(kind, name))
    d, n = 4, 5
    loss, reference = make_loss(kind, d, rng)
    norm = make_normalizer(name)
    V = rng.randn(d, n)
    a = generic_logits(name, n, rng)
    G = value_gradients(V, a, loss, norm)

    def L(V_, a_):
        return reference(V_ @ norm.forward(a_))

    assert float(G.loss) == pytest.approx(L(V, a), rel=1e-12, abs=1e-14)
    np.testing.assert_allclose(G.s, norm.forward(a), rtol=1e-15)
    assert_grad_close(G.grad_V, fd_grad(lambda x: L(x, a), V))
    assert_grad_close(G.grad_a, fd_grad(lambda x: L(V, x), a))
    # The fitness is -V^T grad l(beta).
    _, g = loss.value_and_grad(V @ G.s)
    np.testing.assert_allclose(G.u, -V.T @ g, rtol=1e-12, atol=1e-14)


def test_softmax_temperature_gradients():
    rng = np.random.RandomState(2)
    loss, reference = make_loss("kl", 4, rng)
    for temperature in (0.25, 3.0):
        norm = make_normalizer("softmax", temperature=temperature)
        V, a = rng.randn(4, 6), rng.randn(6)
        G = value_gradients(V, a, loss, norm)
        assert_grad_close(G.grad_a, fd_grad(lambda x, nm=norm, V=V: reference(V @ nm.forward(x)), a))


@pytest.mark.parametrize("name", ALL_NORMALIZERS)
@pytest.mark.parametrize("kind", ["logistic", "square", "kl"])
def test_tied_gradients_match_finite_differences(kind, name):
    rng = np.random.RandomState(seed_of("tied", kind, name))
    D = 5
    loss, reference = make_loss(kind, D, rng)
    norm = make_normalizer(name)
    a = rng.randn(D)
    while True:
        U = np.eye(D) + 0.4 * rng.randn(D, D)
        if away_from_kinks(name, U @ a):
            break
    G = tied_gradients(U, a, loss, norm)

    def L(U_, a_):
        return reference(U_ @ norm.forward(U_ @ a_))

    assert float(G.loss) == pytest.approx(L(U, a), rel=1e-12, abs=1e-14)
    np.testing.assert_allclose(G.s, norm.forward(U @ a), rtol=1e-15)
    assert_grad_close(G.grad_V, fd_grad(lambda x: L(x, a), U))
    assert_grad_close(G.grad_a, fd_grad(lambda x: L(U, x), a))


@pytest.mark.parametrize("name", ["softmax", "sigmoid", "l2", "sparsemax"])
@pytest.mark.parametrize("kind", ["logistic", "logistic-data", "square-design"])
def test_reduced_gradients_are_the_projected_full_ones(kind, name):
    """In W = X V: dW/dt = X dV/dt, i.e. -grad_W_reduced == X @ (-grad_V_full); the rest agrees."""
    rng = np.random.RandomState(seed_of("reduced", kind, name))
    d, n, m = 7, 5, 3
    loss, _ = make_loss(kind, d, rng, m=m)
    X = loss.X
    norm = make_normalizer(name)
    V, a = rng.randn(d, n), generic_logits(name, n, rng)
    full = value_gradients(V, a, loss, norm)
    red = value_gradients_reduced(X @ V, a, loss, X @ X.T, norm)
    assert red.grad_V.shape == (X.shape[0], n)
    np.testing.assert_allclose(-red.grad_V, X @ (-full.grad_V), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(red.grad_a, full.grad_a, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(red.u, full.u, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(red.s, full.s, rtol=1e-15)
    assert float(red.loss) == pytest.approx(float(full.loss), rel=1e-13)


@pytest.mark.parametrize("name", ["softmax", "sigmoid", "l2", "relu", "linear"])
@pytest.mark.parametrize("d", [1, 3, 9])
def test_closed_logistic_field_is_the_full_flow(name, d):
    """c * (da/dtau, dp/dtau) = (da/dt, beta_*^T dV/dt) with c = sigmoid(-z), for any d."""
    rng = np.random.RandomState(d)
    n = 6
    norm = make_normalizer(name)
    b = unit(rng.randn(d))
    V, a = rng.randn(d, n), generic_logits(name, n, rng)
    p = V.T @ b
    da, dp, z, s = logistic_closed_field(a, p, norm)
    assert z == pytest.approx(b @ V @ norm.forward(a), rel=1e-13, abs=1e-14)
    np.testing.assert_allclose(s, norm.forward(a), rtol=1e-15)
    c = expit(-z)
    full = value_gradients(V, a, Logistic.from_target(b), norm)
    np.testing.assert_allclose(c * np.asarray(da), -full.grad_a, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(c * np.asarray(dp), (-full.grad_V).T @ b, rtol=1e-12, atol=1e-14)
    # The part of dV/dt orthogonal to beta_* vanishes: V - b p^T never moves.
    P = np.eye(d) - np.outer(b, b)
    assert np.linalg.norm(P @ full.grad_V) <= 1e-14 * max(1.0, np.linalg.norm(full.grad_V))


@pytest.mark.parametrize("kind", LOSSES)
def test_softmax_field_identities(kind):
    """Under softmax: sum(da/dt) = 0 and d/dt(|v_i|^2/2 - a_i) = s_i (s.u), docs/derivations.md section 2."""
    rng = np.random.RandomState(9)
    d, n = 4, 6
    loss, _ = make_loss(kind, d, rng)
    V, a = rng.randn(d, n), rng.randn(n)
    G = value_gradients(V, a, loss, make_normalizer("softmax"))
    dV, da = -G.grad_V, -G.grad_a
    assert abs(np.sum(da)) <= 1e-14 * np.sum(np.abs(da)) + 1e-16
    lhs = np.sum(V * dV, axis=0) - da
    np.testing.assert_allclose(lhs, G.s * (G.s @ G.u), rtol=1e-11, atol=1e-14)
    # Replicator form: da_i = s_i (u_i - s.u).
    np.testing.assert_allclose(da, G.s * (G.u - G.s @ G.u), rtol=1e-12, atol=1e-15)
