"""The official notebook's gradient-descent loops, as it writes them: the benchmarks' baseline.

Each function runs ``steps`` iterations in place on arrays drawn as the notebook
draws them (see ``polarize.presets``) and returns them. The per-step cost is
constant, so a slice of steps times the full count is the loop's time.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, softmax


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


def comparison(V, a, beta, lr, steps, loss):
    """Experiment 2 with the softmax normalizer (the others cost the same per step)."""
    for _ in range(steps):
        alpha = softmax(a)
        if loss == "square":
            g_out = V @ alpha - beta
        else:
            g_out = -(1 - expit(np.dot(beta, V @ alpha))) * beta
        g_V = np.outer(g_out, alpha)
        g_alpha = V.T @ g_out
        g_a = alpha * (g_alpha - np.sum(g_alpha * alpha))
        V -= lr * g_V
        a -= lr * g_a
    return V, a
