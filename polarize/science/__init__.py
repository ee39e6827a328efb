"""What a run means, below the figures: shares on the simplex, the verdict, multi-run studies.

Nothing here draws; the figure toolkit (``polarize.plots``) and the pages build on it.
"""

from polarize.science.floors import kl_floor
from polarize.science.outcomes import describe_normalizers, outcome_groups
from polarize.science.simplex import distance_to_simplex, simplex_shares
from polarize.science.studies import (
    DescentComparison,
    NormalizerRow,
    Rate,
    compare_normalizers,
    flow_vs_descent,
    polarization_rate,
    sweep,
)
from polarize.science.time_words import format_time, format_value
from polarize.science.verdict import (
    PARTLY_ENTROPY,
    PARTLY_SHARE,
    POLARIZED_SHARE,
    THRESHOLDS,
    Polarization,
    Verdict,
    ends,
    judge,
    settings_line,
    slow_tail,
    title_lines,
)

__all__ = [
    "PARTLY_ENTROPY",
    "PARTLY_SHARE",
    "POLARIZED_SHARE",
    "THRESHOLDS",
    "DescentComparison",
    "NormalizerRow",
    "Rate",
    "Polarization",
    "Verdict",
    "compare_normalizers",
    "describe_normalizers",
    "distance_to_simplex",
    "ends",
    "flow_vs_descent",
    "format_time",
    "format_value",
    "judge",
    "kl_floor",
    "outcome_groups",
    "polarization_rate",
    "settings_line",
    "simplex_shares",
    "slow_tail",
    "sweep",
    "title_lines",
]
