"""An independent gradient flow of the value-softmax model, for tests that check the app's words.

Written from the paper's equations only (section 2), with none of the project's functions: beta = V s,
s = softmax(a), dV/dt = -g s^T, da/dt = s * (u - s.u) with u = -V^T g and g the loss's gradient in beta
(logistic on a target direction, square against a target or a design X, y, or cross-entropy against
p*). Integrated by scipy (LSODA, or DOP853 for large states) in tau = log(1 + t), where a slowly
converging run takes steps of a size that suits it.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp
from scipy.special import expit, softmax


def gradient(loss: str, e, beta: np.ndarray) -> np.ndarray:
    """The loss's gradient in beta (d,), from the resolved experiment ``e``'s target, X and y."""
    if loss == "logistic":
        target = np.asarray(e.target, dtype=float)
        return -target * expit(-beta @ target)
    if loss == "square":
        if e.X is None:
            return beta - np.asarray(e.target, dtype=float)
        X = np.asarray(e.X, dtype=float)
        return X.T @ (X @ beta - np.asarray(e.y, dtype=float))
    return softmax(beta) - np.asarray(e.target, dtype=float)  # cross-entropy against p* = target


def scores(e, t: np.ndarray, *, method: str = "LSODA", rtol: float = 1e-10, atol: float = 1e-12
           ) -> np.ndarray:
    """The scores s (len(t), n) of the resolved experiment ``e`` (softmax, T = 1) at the times ``t``."""
    V0, a0 = np.asarray(e.V0, dtype=float), np.asarray(e.a0, dtype=float)
    d, n = V0.shape

    def rhs(tau, z):
        V, a = z[:d * n].reshape(d, n), z[d * n:]
        s = softmax(a)
        g = gradient(e.loss, e, V @ s)
        u = -(V.T @ g)
        return np.exp(tau) * np.concatenate([-np.outer(g, s).ravel(), s * (u - s @ u)])

    taus = np.log1p(np.asarray(t, dtype=float))
    run = solve_ivp(rhs, (0.0, taus[-1]), np.concatenate([V0.ravel(), a0]), method=method, t_eval=taus,
                    rtol=rtol, atol=atol)
    assert run.success, run.message
    return softmax(run.y[d * n:].T, axis=1)
