"""How numbers are written for people: times on a log scale, and values in a box of a few characters."""

from __future__ import annotations

import math

__all__ = ["format_time", "format_value"]

def format_time(t: float) -> str:
    """A compact label for a time: ``0.1``, ``250``, ``1000``, ``1.2e5``.

    Parameters
    ----------
    t : float

    Returns
    -------
    str
    """
    if t == 0:
        return "0"
    if 1e-2 <= abs(t) < 1e4:
        return f"{t:.4g}"  # no exponent in this range: 0.25, 600, 1000
    return _scientific(t)


def format_value(x: float) -> str:
    """A value in at most 7 characters (a metric's box on a projector or a phone): ``0.0251``, ``2.08``,
    ``1234``, ``2.34e-4``, ``9.91e-6``; three significant digits (four from 1000 to 9999).

    Python's ``.3g`` writes ``0.000234`` and ``9.91e-06``, which a metric's box cut to "0.000..." and
    "9.91e...": the exponent here has no padding and no plus sign, and from 1e-2 down it is used.

    Parameters
    ----------
    x : float

    Returns
    -------
    str
        "nan", "inf" or "-inf" for those.
    """
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    three, four = float(f"{x:.3g}"), float(f"{x:.4g}")  # rounded first: 999.99 is 1000, not 1e+03
    if 1e-2 <= abs(three) < 1e3:
        return f"{three:.3g}"
    if 1e3 <= abs(four) < 1e4:
        return f"{four:.0f}"
    return _scientific(x)


def _scientific(x: float) -> str:
    """``x`` with three significant digits and an unpadded exponent: ``1.2e5``, ``2.34e-4``."""
    mantissa, exponent = f"{x:.2e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"
