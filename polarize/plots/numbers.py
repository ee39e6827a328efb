"""Numbers on their way to the browser: rounding and fixed axis ranges.

Rounding to a few significant digits keeps figures small, which Plotly 6's
binary arrays do not: numpy float64 arrays go out as base64 of 8 bytes a number
(about 11 characters), longer than a 5-digit decimal. Measured on the Explorer's
dashboard (``fig.to_json()``): 161 kB rounded, 238 kB as arrays, 266 kB as
unrounded lists for the default run; 597 kB, 893 kB and 1.18 MB for
``n = d = 64``; rounding costs some 40 ms of building and saves as much in encoding.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["DIGITS", "THIN", "log_span", "round_significant", "rounded", "rounded_with_gaps", "span",
           "thinned"]

DIGITS = 5
"""Significant digits kept for every number sent to the browser."""


def round_significant(x: Any, digits: int = DIGITS) -> np.ndarray:
    """Round to ``digits`` significant digits, so that the JSON of each number is short.

    Parameters
    ----------
    x : array_like, any shape
    digits : int

    Returns
    -------
    ndarray, same shape as ``x``
        Each finite non-zero entry replaced by the double nearest to its rounded
        decimal value (whose shortest repr has at most ``digits`` digits);
        zeros and non-finite entries unchanged.
    """
    x = np.array(x, dtype=float)
    out = x.copy()
    mask = np.isfinite(x) & (x != 0)
    if not np.any(mask):
        return out
    v = x[mask]
    k = digits - 1 - np.floor(np.log10(np.abs(v))).astype(int)
    res = np.empty_like(v)
    up = k >= 0
    # Divide by a power of ten rather than multiply by its inverse: 10**-k is not exact.
    scale = 10.0 ** k[up]
    res[up] = np.rint(v[up] * scale) / scale
    scale = 10.0 ** (-k[~up])
    res[~up] = np.rint(v[~up] / scale) * scale
    out[mask] = res
    return out


THIN = 1e-3
"""A line's points are dropped where the line through the others passes within this fraction of the
panel's extent of them (``thinned``): half a pixel on a panel 500 px tall, finer than a line is drawn."""


def thinned(x: np.ndarray, y: np.ndarray, *, span: float, log_x: bool = False, log_y: bool = False,
            tol: float = THIN) -> np.ndarray:
    """Which points of a line to draw: fewer (Ramer-Douglas-Peucker), such that the line through them
    passes within ``tol * span`` of every point left out, vertically, as the figure draws them.

    Measured along ``log10`` of a log axis. A vertical gap is never less than the distance to the line,
    and a line within it at every point left out is within it between them too: the line drawn through
    the kept points stays within ``tol * span`` of the line through all. The first and the last point
    are always kept.

    Parameters
    ----------
    x, y : ndarray, shape (K,)
        Finite (and positive on a log axis), ``x`` increasing.
    span : float
        The height of the panel's points in drawn units (its axis is at least as tall).

    Returns
    -------
    ndarray of bool, shape (K,)
    """
    u = np.log10(x) if log_x else np.asarray(x, dtype=float)
    v = np.log10(y) if log_y else np.asarray(y, dtype=float)
    keep = np.zeros(len(u), dtype=bool)
    keep[[0, -1]] = True
    room = tol * span
    stack = [(0, len(u) - 1)]
    while stack:
        i, j = stack.pop()
        if j <= i + 1:
            continue
        du = u[j] - u[i]
        along = (u[i + 1:j] - u[i]) / du if du else np.zeros(j - i - 1)
        gap = np.abs(v[i + 1:j] - (v[i] + along * (v[j] - v[i])))
        k = int(np.argmax(gap))
        if gap[k] > room:
            keep[i + 1 + k] = True
            stack += [(i, i + 1 + k), (i + 1 + k, j)]
    return keep


def rounded(x: Any, digits: int = DIGITS) -> list:
    """Rounded values as a (nested) list of Python floats: the shortest JSON (see the module note)."""
    return round_significant(x, digits).tolist()


def rounded_with_gaps(x: Any, digits: int = DIGITS) -> list:
    """``rounded`` values of a 1-D ``x`` with None where they are NaN: a gap in a Plotly line, and
    valid JSON (a NaN is not)."""
    return [None if math.isnan(v) else v for v in rounded(x, digits)]


def span(values: Any, *, pad: float = 0.06, floor: tuple[float, float] | None = None) -> list[float]:
    """A fixed linear axis range covering ``values`` (and ``floor``), padded on both sides.

    Parameters
    ----------
    values : array_like, any shape
        Non-finite entries are ignored; ``[0, 1]`` (padded) when none is left.
    pad : float
        Fraction of the width added on each side.
    floor : (float, float), optional
        Values the range must include.

    Returns
    -------
    [low, high] : list of float, rounded
    """
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v)]
    lo, hi = (float(v.min()), float(v.max())) if v.size else (0.0, 1.0)
    if floor is not None:
        lo, hi = min(lo, floor[0]), max(hi, floor[1])
    if hi - lo < 1e-12:
        lo, hi = lo - 0.5, hi + 0.5
    width = hi - lo
    return [float(round_significant(lo - pad * width)), float(round_significant(hi + pad * width))]


def log_span(values: Any, pad: float = 0.04) -> list[float] | None:
    """A log axis range (log10 of its ends) covering the positive ``values``; None when there are none."""
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v) & (v > 0)]
    if not v.size:
        return None
    lo, hi = math.log10(v.min()), math.log10(v.max())
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    width = hi - lo
    return [round(lo - pad * width, 4), round(hi + pad * width, 4)]
