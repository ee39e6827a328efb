"""Where the simplex is drawn in the plane: a segment, a triangle or a regular polygon, and scores on it."""

from __future__ import annotations

import numpy as np

from polarize.science import simplex_shares

__all__ = ["project_to_polygon", "simplex_vertices"]


def simplex_vertices(n: int) -> np.ndarray:
    """Where the vertices of the simplex are drawn in the plane.

    Parameters
    ----------
    n : int
        Number of tokens (at least 2).

    Returns
    -------
    ndarray, shape (n, 2)
        For ``n = 2`` the ends of a segment, ``(-1, 0)`` and ``(1, 0)``; for
        ``n >= 3`` the corners of a regular ``n``-gon on the unit circle, the
        first at the top, going anticlockwise (``n = 3``: a triangle).
    """
    if n < 2:
        raise ValueError(f"need at least 2 tokens, got {n}")
    if n == 2:
        return np.array([[-1.0, 0.0], [1.0, 0.0]])
    angle = np.pi / 2 + 2 * np.pi * np.arange(n) / n
    return np.column_stack([np.cos(angle), np.sin(angle)])


def project_to_polygon(s: np.ndarray) -> np.ndarray:
    """The plane position ``sum_i q_i * vertex_i`` of scores, with ``q = simplex_shares(s)``.

    Parameters
    ----------
    s : ndarray, shape (K, n) or (n,)

    Returns
    -------
    ndarray, shape (K, 2) or (2,)
        A vertex for a one-hot score, the centre for uniform scores (``n >= 3``).
    """
    s = np.asarray(s, dtype=float)
    return simplex_shares(s) @ simplex_vertices(s.shape[-1])
