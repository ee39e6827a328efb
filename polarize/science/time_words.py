"""How numbers are written for people: times on a log scale."""

from __future__ import annotations

__all__ = ["format_time"]

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
    mantissa, exponent = f"{t:.2e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"
