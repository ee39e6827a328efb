"""Scores as points of the probability simplex."""

from __future__ import annotations

import numpy as np

from polarize.normalizers import Sparsemax

__all__ = ["distance_to_simplex", "simplex_shares"]


def distance_to_simplex(s: np.ndarray) -> np.ndarray:
    """Euclidean distance from ``s`` to the probability simplex, along the last axis.

    The nearest point of the simplex is the Euclidean projection of ``s``, which
    is exactly what sparsemax computes.

    Parameters
    ----------
    s : ndarray, shape (..., n)

    Returns
    -------
    ndarray, shape (...)
    """
    s = np.asarray(s, dtype=float)
    return np.linalg.norm(s - Sparsemax().forward(s), axis=-1)

def simplex_shares(s: np.ndarray) -> np.ndarray:
    """Scores made into a point of the simplex: ``|s| / sum |s|`` along the last axis.

    Softmax-like normalizers already give such points; sigmoid, linear and sum
    need not, and are shown by their normalized magnitudes. An all-zero row
    (ReLU can silence every token) has no shares; it is given the centre here, and the
    dashboard draws no point for it (``plots.panels.simplex_panel``).

    Parameters
    ----------
    s : ndarray, shape (..., n)

    Returns
    -------
    ndarray, shape (..., n)
        Non-negative rows summing to one.
    """
    m = np.abs(np.asarray(s, dtype=float))
    total = np.sum(m, axis=-1, keepdims=True)
    uniform = np.full_like(m, 1.0 / m.shape[-1])
    return np.where(total > 0, m / np.where(total > 0, total, 1.0), uniform)
