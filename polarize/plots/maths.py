"""Small static figures for the "About the maths" page: one panel each, in the common style."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from polarize.diagnostics import Result
from polarize.plots import style
from polarize.plots.lines import Line, Panel, token_lines
from polarize.plots.multiples import animated_grid

__all__ = ["comparison_figure", "gap_figure", "scores_figure"]

_TITLES = {"entropy": "entropy H(s)", "one_minus_max": "1 \u2212 max s", "loss": "loss"}
_MARGIN = dict(l=10, r=10, t=30, b=10)


def _single(panel: Panel, height: int, legend: bool, narrow: bool) -> dict[str, Any]:
    """One static panel, its legend on the right."""
    fig = animated_grid([panel], cols=1, animated=False, height=height, legend=legend, narrow=narrow)
    style.layout_update(fig["layout"], margin=_MARGIN, font=style.font(-2),
                        legend=dict(orientation="v", x=1.02, y=1.0, yanchor="top", font=style.font(-4)))
    return fig


def scores_figure(result: Result, *, height: int = 320, log_y: bool = False,
                  narrow: bool = False) -> dict[str, Any]:
    """Each score ``s_i(t)`` against log time (a static figure).

    Parameters
    ----------
    result : Result
        ``K`` saved times, ``n`` tokens.
    height : int
    log_y : bool
        Scores on a log axis too (the paper's log-log view), which shows the
        losers' slow ``1 / log^2 t`` decay.

    Returns
    -------
    dict
        ``n`` line traces, coloured as in the dashboard.
    """
    n = result.s.shape[1]
    lines = token_lines(result.t, result.s, width=2.5, legend=True)
    panel = Panel(title="", lines=lines, y_title="score s<sub>i</sub>", log_y=log_y)
    return _single(panel, height, n <= 10, narrow)


def comparison_figure(results: Mapping[str, Result], quantity: str = "entropy", *, height: int = 320,
                      log_y: bool = False, reference: Sequence[float] | None = None,
                      narrow: bool = False) -> dict[str, Any]:
    """One curve per labelled run of a per-time quantity, against log time.

    Parameters
    ----------
    results : mapping of str to Result
        Label -> run.
    quantity : str
        A ``(K,)`` attribute of ``Result``: ``"entropy"``, ``"one_minus_max"``, ``"loss"``, ...
    height : int
    log_y : bool
    reference : sequence of float, optional
        A horizontal dashed line at each value (e.g. ``log n`` for the entropy).

    Returns
    -------
    dict
        One line trace per run, then one per reference value.
    """
    cycle = style.PALETTE.cycle
    lines = tuple(Line(x=r.t, y=np.asarray(getattr(r, quantity), dtype=float), name=label,
                       color=cycle[i % len(cycle)], width=3, legend=True)
                  for i, (label, r) in enumerate(results.items()))
    times = np.concatenate([r.t[r.t > 0] for r in results.values()]) if results else np.array([])
    if times.size:
        ends = np.array([times.min(), times.max()])
        lines += tuple(Line(x=ends, y=np.array([value, value]), name=f"{value:.3g}", color=style.PALETTE.grey,
                            width=2, dash="dash", moving=False) for value in reference or ())
    panel = Panel(title="", lines=lines, y_title=_TITLES.get(quantity, quantity), log_y=log_y)
    return _single(panel, height, True, narrow)


def gap_figure(rate: Any, *, height: int = 320, narrow: bool = False) -> dict[str, Any]:
    """How fast ``1 - max s`` shrinks, against the theory (log-log; a static figure).

    Parameters
    ----------
    rate : ``science.Rate``
        ``K`` times with ``t > 1``.
    height : int

    Returns
    -------
    dict
        Three line traces: the run's ``1 - max s``, the sharp asymptotic
        ``2(n-1)/(n z^2)`` (dashed) and the theorem's ``C / log t`` (dotted); the
        y range is the run's own, as the asymptotic curves blow up at early times.
    """
    palette = style.PALETTE
    gap = np.asarray(rate.gap, dtype=float)
    lines = (Line(x=rate.t, y=gap, name="1 \u2212 max s (run)", width=3, color=palette.cycle[0], legend=True),
             Line(x=rate.t, y=rate.sharp, name="2(n\u22121)/(n z\u00b2)", width=3, dash="dash",
                  color=palette.alert, legend=True),
             Line(x=rate.t, y=rate.theorem, name="theorem: C / log t", width=3, dash="dot",
                  color=palette.grey, legend=True))
    low = float(np.log10(gap[gap > 0].min()))
    panel = Panel(title="", lines=lines, y_title=_TITLES["one_minus_max"], log_y=True,
                  y_range=(low - 0.3, 0.3))
    return _single(panel, height, True, narrow)
