"""What the Sweeps page draws, computed from a results frame: fractions with Wilson intervals,
spreads over seeds, and the axes worth drawing against.

Pure pandas and numpy on ``polarize.sweeps.load``'s frame; what a kind counts and draws is the kind's
(``polarize.sweeps.kinds``), the figures are in ``polarize.plots.sweeps``.
"""

from __future__ import annotations

import numpy as np

from polarize.sweeps.kinds import KINDS, SweepKind
from polarize.sweeps.rows import ERROR

__all__ = ["Z95", "fraction_table", "pick_axes", "spread_table", "wilson"]

Z95 = 1.959964
"""Two-sided 95% normal quantile."""


def wilson(k, n, z: float = Z95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The share ``k / n`` and its Wilson score interval (Wilson 1927), elementwise.

    Parameters
    ----------
    k, n : array_like
        Successes and trials (``n >= 1``).

    Returns
    -------
    share, low, high : ndarray
    """
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    share = k / n
    centre = (share + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * np.sqrt(share * (1 - share) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    return share, np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def pick_axes(frame, axes: tuple[str, ...]) -> tuple[str | None, str | None]:
    """The grid axes to draw against: ``x`` (a numeric one if any) and ``colour`` (another), not seeds."""
    shown = [a for a in axes if a != "seed" and a in frame and frame[a].nunique() > 1]
    numeric = [a for a in shown if frame[a].dtype.kind in "if"]
    x = numeric[0] if numeric else (shown[0] if shown else None)
    others = [a for a in shown if a != x]
    return x, (others[0] if others else None)


def fraction_table(frame, kind: str | SweepKind, what: str, by: list[str]):
    """Successes ``k`` of trials ``n`` per group of ``by``, with the share and its Wilson interval.

    ``kind`` (a kind or its name in ``KINDS``) says what a trial is (``SweepKind.counts``) and whether
    the trials of one seed share its draws (``seeds_cluster``: the band is then between seeds).

    Returns
    -------
    pandas.DataFrame
        ``by`` columns, then ``hits``, ``trials``, ``share``, ``low``, ``high``; one row per group
        (``hits`` and ``trials``, not ``k`` and ``n``: ``n`` may be a grid axis).
    """
    kind = KINDS[kind] if isinstance(kind, str) else kind
    ok, k, n = kind.counts(frame[frame["status"] != ERROR], what)
    clustered = kind.seeds_cluster and "seed" in ok and "seed" not in by
    keys = [*by, "seed"] if clustered else by
    table = ok[keys].copy() if keys else ok.iloc[:, :0].copy()
    table["hits"], table["trials"] = k.to_numpy(), np.asarray(n)
    table = table.groupby(keys, sort=True).sum().reset_index() if keys else table.sum().to_frame().T
    if clustered:
        return _between_seeds(table, by)
    table["share"], table["low"], table["high"] = wilson(table["hits"], table["trials"])
    table["band"] = "wilson"
    return table


def _between_seeds(per_seed, by: list[str]):
    """Per group of ``by``: the mean of its seeds' shares and a 95% t interval from their spread.

    An ensemble's starts within one seed share that seed's ``V0`` (and target), so they are not
    independent trials: the seed is the unit. With one seed there is no spread to read: Wilson's band on
    that seed's starts, marked ``band = "wilson"``.
    """
    from scipy.stats import t as student

    per_seed = per_seed.assign(seed_share=per_seed["hits"] / per_seed["trials"])
    groups = per_seed.groupby(by, sort=True) if by else [((), per_seed)]
    rows = []
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        shares = part["seed_share"].to_numpy(dtype=float)
        hits, trials = float(part["hits"].sum()), float(part["trials"].sum())
        row = dict(zip(by, key, strict=True)) | {"hits": hits, "trials": trials, "seeds": len(shares)}
        if len(shares) > 1:
            mean = float(np.mean(shares))
            half = float(student.ppf(0.975, len(shares) - 1) * np.std(shares, ddof=1) / np.sqrt(len(shares)))
            row |= {"share": mean, "low": max(0.0, mean - half), "high": min(1.0, mean + half),
                    "band": "seeds"}
        else:
            share, low, high = wilson(hits, trials)
            row |= {"share": float(share), "low": float(low), "high": float(high), "band": "wilson"}
        rows.append(row)
    import pandas as pd

    return pd.DataFrame(rows)


def spread_table(frame, y: str, by: list[str]):
    """The median, quartiles, least and largest of ``y`` over the runs of each group (seeds, mostly)."""
    ok = frame[(frame["status"] != ERROR) & frame[y].notna()]
    grouped = ok.groupby(by, sort=True)[y]
    out = grouped.median().rename("median").to_frame()
    out["q1"], out["q3"] = grouped.quantile(0.25), grouped.quantile(0.75)
    out["least"], out["most"], out["runs"] = grouped.min(), grouped.max(), grouped.size()
    return out.reset_index()
