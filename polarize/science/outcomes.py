"""What each normalizer did to one start, in words taken from the runs' own numbers.

The Normalizers page's caption is built here rather than written by hand, so
that it cannot say a normalizer reached a vertex (or switched tokens off, or
left the simplex) when its run did not.
"""

from __future__ import annotations

import numpy as np

from polarize.science.studies import NormalizerRow
from polarize.science.time_words import format_time
from polarize.science.verdict import POLARIZED_SHARE, Polarization, judge

__all__ = ["describe_normalizers", "outcome_groups"]


def _detail(row: NormalizerRow) -> str:
    """A few words on how this run ended: how it got near a vertex, or where it went instead."""
    r = row.result
    s = r.s[-1]
    if not np.any(s != 0):
        return "every score 0, so no distribution: a dead run"
    if judge(r).status is Polarization.CUT:
        return f"drawn to t = {format_time(float(r.t[-1]))}, max s = {s.max():.3g} there"
    if not row.stayed_on_simplex:
        return f"off the simplex: \u03a3s = {s.sum():.3g}, min s = {s.min():.3g}"
    off = int(np.sum(s == 0))
    words = [f"max s = {s.max():.3g}"]
    leader = np.max(r.s, axis=1)
    reached = np.flatnonzero(leader >= POLARIZED_SHARE)
    if len(reached):
        words.append(f"{POLARIZED_SHARE:.0%} by t = {format_time(float(r.t[reached[0]]))}")
    words.append(f"{off} of {len(s)} tokens switched off to s = 0" if off else
                 f"all scores > 0, min {s.min():.2g}")
    return ", ".join(words)


def outcome_groups(rows: list[NormalizerRow]) -> dict[Polarization, list[tuple[str, str]]]:
    """The rows grouped by verdict status (``judge``), in ``Polarization``'s order: status ->
    [(normalizer, detail), ...]."""
    groups: dict[Polarization, list[tuple[str, str]]] = {status: [] for status in Polarization}
    for row in rows:
        groups[judge(row.result).status].append((row.normalizer, _detail(row)))
    return groups


def describe_normalizers(rows: list[NormalizerRow]) -> str:
    """One sentence per verdict group, e.g. ``Polarized (leader >= 95%): l2 (max s = 1, ...); ...``.

    Parameters
    ----------
    rows : list of NormalizerRow
        ``compare_normalizers``' runs from one start.

    Returns
    -------
    str
    """
    sentences = []
    for status, members in outcome_groups(rows).items():
        if members:
            listed = "; ".join(f"{name} ({detail})" for name, detail in members)
            sentences.append(f"{status.group}: {listed}.")
    return " ".join(sentences)
