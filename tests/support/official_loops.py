"""The official notebook's gradient-descent loops, as it writes them: one copy, for tests and benchmarks.

Each loop runs ``steps`` iterations in place on arrays drawn as the notebook
draws them (see ``polarize.presets``) and returns them; calling it again goes on
from there, so a test can stop at saved steps. The per-step cost is constant,
so the benchmarks time a slice of steps and scale by the full count.

The tests import this module as ``official_loops`` (``tests/`` is on pytest's
path); ``benchmarks/*.py`` put ``tests/`` on ``sys.path`` first.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, softmax

__all__ = ["NORMALIZERS", "comparison", "kl", "logistic", "regression", "tied"]


def logistic(W, a, beta, lr, steps):
    """Experiment 1: logistic loss on a target direction, simultaneous updates."""
    for _ in range(steps):
        s = softmax(a)
        c = expit(-(beta @ (W @ s)))
        g_W = -c * np.outer(beta, s)
        v = -c * (W.T @ beta)
        g_a = s * v - s * np.dot(s, v)
        W -= lr * g_W
        a -= lr * g_a
    return W, a


def kl(V, a, p_star, lr, steps):
    """Experiment 5: cross-entropy; the notebook's V is n x k and the output V^T s."""
    for _ in range(steps):
        s = softmax(a)
        delta = softmax(V.T @ s) - p_star
        g_V = np.outer(s, delta)
        g_s = V @ delta
        g_a = s * g_s - s * np.dot(s, g_s)
        V -= lr * g_V
        a -= lr * g_a
    return V, a


def regression(W, a, X, y, lr, steps):
    """Experiment 4: |y - X W s|^2 without the 1/2."""
    for _ in range(steps):
        s = softmax(a)
        residual = y - X @ (W @ s)
        g_W = -2 * np.outer(X.T @ residual, s)
        v = -2 * W.T @ (X.T @ residual)
        g_a = s * v - s * np.dot(s, v)
        W -= lr * g_W
        a -= lr * g_a
    return W, a


def tied(U, a, beta, lr, steps):
    """Experiment 3: z = U a, alpha = softmax(z), beta = U alpha, logistic loss."""
    for _ in range(steps):
        z = U @ a
        alpha = softmax(z)
        c = -(1 - expit(np.dot(beta, U @ alpha)))
        g_beta = c * beta
        g_alpha = U.T @ g_beta
        g_z = alpha * (g_alpha - np.sum(g_alpha * alpha))
        g_U = np.outer(g_beta, alpha) + np.outer(g_z, a)
        g_a = U.T @ g_z
        U -= lr * g_U
        a -= lr * g_a
    return U, a


def _softmax_backward(g, z, alpha):
    return alpha * (g - np.sum(g * alpha))


def _sigmoid_backward(g, z, alpha):
    return expit(z) * (1 - expit(z)) * g


def _l2_forward(z):
    return z**2 / (np.sum(z**2) + 1e-10)


def _l2_backward(g, z, alpha):
    return (2 * z / (np.sum(z**2) + 1e-10)) * (g - np.sum(g * alpha))


def _l1_forward(z):
    return np.abs(z) / (np.sum(np.abs(z)) + 1e-10)


def _l1_backward(g, z, alpha):
    return np.sign(z) * (g - np.sum(g * alpha)) / (np.sum(np.abs(z)) + 1e-10)


def _relu_forward(z):
    return np.maximum(z, 0) / (np.sum(np.maximum(z, 0)) + 1e-10)


def _relu_backward(g, z, alpha):
    return (z > 0) * (g - np.sum(g * alpha)) / (np.sum(np.maximum(z, 0)) + 1e-10)


def _sum_forward(z):
    return z / (np.sum(z) + 1e-10)


def _sum_backward(g, z, alpha):
    return (g - np.sum(g * alpha)) / (np.sum(z) + 1e-10)


NORMALIZERS = {
    # name: (forward(z), backward(g, z, alpha)), the notebook's classes with their 1e-10 guards.
    "softmax": (softmax, _softmax_backward),
    "sigmoid": (expit, _sigmoid_backward),
    "l2": (_l2_forward, _l2_backward),
    "l1": (_l1_forward, _l1_backward),
    "relu": (_relu_forward, _relu_backward),
    "sum": (_sum_forward, _sum_backward),
}


def comparison(V, a, beta, lr, steps, loss, normalizer="softmax"):
    """Experiment 2: one normalizer (a key of ``NORMALIZERS``) under the square or logistic loss.

    The normalizers cost about the same per step, so the benchmarks time softmax's loop.
    """
    forward, backward = NORMALIZERS[normalizer]
    for _ in range(steps):
        alpha = forward(a)
        if loss == "square":
            g_out = V @ alpha - beta
        else:
            g_out = -(1 - expit(np.dot(beta, V @ alpha))) * beta
        g_V = np.outer(g_out, alpha)
        g_a = backward(V.T @ g_out, a, alpha)
        V -= lr * g_V
        a -= lr * g_a
    return V, a
