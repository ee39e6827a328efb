"""Figures of the comparison pages, and of the paper: small multiples that play together.

Each builder only says which curves go in which panel; ``multiples.animated_grid``
draws them, animated for the pages or static (``animated=False``) for the
paper's exported figures, so both show the same data in the same style.

A run that stopped early (or a descent that diverged) is drawn up to its last
finite value, with its message as a note in its panel: never as NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from polarize.diagnostics import Result
from polarize.losses import LOSSES
from polarize.plots import style
from polarize.plots.animation import FRAMES
from polarize.plots.geometry import (
    DESCENT_ROW,
    KAPPA_ROW,
    LOSSES_ROW,
    NORMALIZERS_ROW,
    RATE_ROW,
    REGRESSION_ROW,
    TIED_ROW,
)
from polarize.plots.lines import Line, Panel, token_lines
from polarize.plots.multiples import animated_grid
from polarize.plots.numbers import log_span
from polarize.plots.style import LOSS_COLORS
from polarize.science import kl_floor

__all__ = [
    "LOSS_COLORS",
    "Line",
    "Panel",
    "animated_grid",
    "descent_figure",
    "kappa_figure",
    "kappa_panels",
    "losses_figure",
    "normalizers_figure",
    "rate_figure",
    "regression_figure",
    "stopped_note",
    "tied_figure",
    "tied_panels",
]

def _loss_name(loss: str, narrow: bool) -> str:
    """The loss's label (``LOSSES``), its short one on a phone: plotly sets a wrapped legend's columns as
    wide as its widest entry, and "cross-entropy (KL)" halved the entries a row (Loss and conditioning's
    legend took seven rows, its figure taller than the window)."""
    kind = LOSSES.get(loss)
    return loss if kind is None else kind.short if narrow else kind.label


def stopped_note(result: Result) -> str:
    """Why a run stopped early, as a panel note (empty when it finished)."""
    return "" if result.finished else f"Stopped early: {result.message}"


def normalizers_figure(rows: Sequence[Any], *, frames: int = FRAMES, animated: bool = True,
                       narrow: bool = False) -> dict[str, Any]:
    """The scores ``s_i(t)`` under every normalizer, same start: small multiples that play together.

    Parameters
    ----------
    rows : sequence of ``science.NormalizerRow`` (8 for every normalizer)
    frames : int
    animated : bool
        False for the static figure.

    Returns
    -------
    dict
        One panel per normalizer (4 per row), ``n`` curves each.
    """
    top = style.top_tokens(rows[0].result.s[-1])  # one token order for every panel: the first run's
    # The legend beside the panels: past the palette's eight colours (the paper's n = 10) it took two
    # rows above them, and the panels were 79 px tall at 1280 x 720.
    panels = [Panel(title=row.result.experiment.sigma.short,
                    lines=token_lines(row.result.t, row.result.s, top=top, legend=True),
                    y_title="score s<sub>i</sub>" if k % 4 == 0 else "", y_floor=(0.0, 1.0),
                    note=stopped_note(row.result), thin=True) for k, row in enumerate(rows)]
    return animated_grid(panels, cols=4, frames=frames, row_height=NORMALIZERS_ROW, animated=animated,
                         legend=True, narrow=narrow, beside=True)


def _per_run(runs: Mapping[str, Result], quantity: str, *, narrow: bool,
             legend: bool = False) -> tuple[Line, ...]:
    """One line per run of a ``(K,)`` attribute of ``Result``, dark, dashed by its loss (no token colour)."""
    return tuple(Line(x=r.t, y=np.asarray(getattr(r, quantity)), name=_loss_name(loss, narrow),
                      **style.loss_stroke(loss), width=3, legend=legend) for loss, r in runs.items())


def losses_figure(runs: Mapping[str, Result], *, frames: int = FRAMES, animated: bool = True,
                  narrow: bool = False) -> dict[str, Any]:
    """Logistic, square and cross-entropy losses from the same start.

    Parameters
    ----------
    runs : mapping of loss name to Result (same ``n``)
    frames : int
    animated : bool

    Returns
    -------
    dict
        A first row with ``s_i(t)`` per loss; a second with the entropy,
        ``1 - max s`` and the loss of every run (the cross-entropy's floor
        ``H(p*)`` dashed).
    """
    top = style.top_tokens(next(iter(runs.values())).s[-1])
    # The legend beside the panels (above them it took two rows, and the panels were 66 px tall at
    # 1280 x 720): the titles say the losses' short names, in one line over the narrower panels.
    first = [Panel(title=f"{_loss_name(loss, True)}: scores",
                   lines=token_lines(r.t, r.s, top=top, legend=True),
                   y_title="score s<sub>i</sub>" if k == 0 else "", y_floor=(0.0, 1.0), note=stopped_note(r),
                   thin=True)
             for k, (loss, r) in enumerate(runs.items())]
    log_n = math.log(next(iter(runs.values())).s.shape[1])
    t_all = np.concatenate([r.t[r.t > 0] for r in runs.values()])
    ends = np.array([t_all.min(), t_all.max()])
    uniform = Line(x=ends, y=np.array([log_n, log_n]), name="log n (uniform)", color=style.PALETTE.grey,
                   dash="dash", width=2, moving=False)
    loss_lines = _per_run(runs, "loss", narrow=narrow)
    for r in runs.values():  # each run whose loss has a floor (LossKind.floor): the cross-entropy's
        floor = kl_floor(r.experiment)
        if floor is not None:
            symbol = LOSSES[r.experiment.loss].floor_name
            named = symbol if narrow else f"{symbol} = {floor:.3g}"  # its value: hover (the widest entry)
            loss_lines += (Line(x=ends, y=np.array([floor, floor]), name=named, color=style.PALETTE.grey,
                                dash="dashdot", width=2, moving=False, legend=True),)
    second = [
        Panel(title="entropy H(s)", lines=(*_per_run(runs, "entropy", narrow=narrow, legend=True), uniform),
              y_title="nats",
              y_floor=(0.0, log_n * 1.05)),
        Panel(title="1 \u2212 max s", lines=_per_run(runs, "one_minus_max", narrow=narrow), log_y=True),
        # One line (H(p*) is in the legend): on two it ran into the panel above.
        Panel(title="loss", lines=loss_lines, log_y=True),
    ]
    return animated_grid(first + second, cols=3, frames=frames, row_height=LOSSES_ROW, legend=True,
                         animated=animated, narrow=narrow, beside=True)


def kappa_panels(results: Mapping[float, Result], *, split: bool = True) -> list[Panel]:
    """Final entropy and ``max s`` against the condition number.

    Parameters
    ----------
    results : mapping of kappa to Result
    split : bool
        Two panels (entropy, then ``max s``), or both curves in one panel spanning a row.

    Returns
    -------
    list of Panel
        Curves with markers, one point per kappa, on linear axes.
    """
    kappas = np.array([float(k) for k in results])
    h = np.array([r.entropy[-1] for r in results.values()])
    top = np.array([r.s[-1].max() for r in results.values()])
    n = next(iter(results.values())).s.shape[1]
    x_title = "condition number \u03ba"
    entropy = Line(x=kappas, y=h, name="entropy" if split else "entropy H(s)", width=3, moving=False,
                   color="" if split else style.PALETTE.cycle[0], legend=not split)
    max_s = Line(x=kappas, y=top, name="max s", width=3, moving=False,
                 color="" if split else style.PALETTE.cycle[1], legend=not split)
    if split:
        return [Panel(title="final entropy H(s)", x_title=x_title, log_x=False, y_title="nats",
                      y_floor=(0.0, math.log(n)), markers=True, lines=(entropy,)),
                Panel(title="final max s", x_title=x_title, log_x=False, y_floor=(0.0, 1.0), markers=True,
                      lines=(max_s,))]
    return [Panel(title="final entropy and max s against the condition number", x_title=x_title,
                  log_x=False, y_floor=(0.0, 1.0), markers=True, lines=(entropy, max_s), span=len(results))]


def kappa_figure(results: Mapping[float, Result], *, narrow: bool = False) -> dict[str, Any]:
    """Final entropy and ``max s`` against the condition number (a static figure of two panels).

    Parameters
    ----------
    results : mapping of kappa to Result

    Returns
    -------
    dict
        Two panels, one curve with markers each; no frames.
    """
    return animated_grid(kappa_panels(results), cols=2, row_height=KAPPA_ROW, animated=False, narrow=narrow)


def regression_figure(results: Mapping[float, Result], *, frames: int = FRAMES, animated: bool = True,
                      narrow: bool = False, summary: bool = False) -> dict[str, Any]:
    """The logits ``a(t)`` of the regression for each condition number ``kappa`` (square loss).

    Parameters
    ----------
    results : mapping of kappa to Result
    frames : int
    animated : bool
    summary : bool
        Add a row with the final entropy and ``max s`` against kappa (the paper's figure).

    Returns
    -------
    dict
        One panel per kappa (up to 5 per row), ``n`` curves each; then the summary panel.
    """
    cols = min(5, len(results)) if not summary else len(results)
    top = style.top_tokens(next(iter(results.values())).a[-1])
    panels = [Panel(title=f"\u03ba = {kappa:g}: logits a(t)",
                    lines=token_lines(r.t, r.a, legend=True, top=top),
                    y_title="a<sub>i</sub>" if k % cols == 0 else "", note=stopped_note(r))
              for k, (kappa, r) in enumerate(results.items())]
    if summary:
        panels += kappa_panels(results, split=False)
    return animated_grid(panels, cols=cols, frames=frames, row_height=REGRESSION_ROW, animated=animated,
                         legend=True, narrow=narrow)


def tied_panels(D: int, r: Result) -> list[Panel]:
    """The loss, ``alpha(t)`` and the column norms of one tied run."""
    norms = np.asarray(r.column_norms, dtype=float)
    lead = np.argmax(r.s, axis=1)
    others = np.where(np.arange(norms.shape[1])[None, :] == lead[:, None], np.nan, norms)
    grey = style.PALETTE.grey
    winner = int(np.argmax(r.s[-1]))
    return [
        Panel(title=f"D = {D}: loss", lines=(Line(x=r.t, y=r.loss, name="loss", width=3),), log_y=True,
              note=stopped_note(r)),
        Panel(title=f"D = {D}: \u03b1<sub>i</sub>(t), token {winner} wins", lines=_alpha_lines(r, winner),
              y_floor=(0.0, 1.0)),
        Panel(title=f"D = {D}: column norms of U", y_floor=(0.0, 1.0), lines=(
            Line(x=r.t, y=r.winner_column_norm, name="column at argmax \u03b1", color=style.PALETTE.alert,
                 width=3.5, legend=True),
            Line(x=r.t, y=np.nanmax(others, axis=1), name="largest other column", color=grey, dash="dash",
                 legend=True),
            Line(x=r.t, y=np.nanmin(others, axis=1), name="smallest other column", color=grey, dash="dot",
                 legend=True))),
    ]


def _alpha_lines(r: Result, winner: int) -> tuple[Line, ...]:
    """``alpha_i(t)``: the winner in the colour of its column of U, the others grey, in every row alike.

    (Coloured by rank within each row, one legend entry "alpha k" meant a different colour per row.)
    """
    others = tuple(Line(x=r.t, y=r.s[:, i], name="\u03b1 of the other tokens", color=style.PALETTE.grey,
                        width=1.2, legend=True, moving=False,
                        hover=f"\u03b1<sub>{i}</sub>: %{{y:.3g}} at t = %{{x:.3g}}<extra></extra>")
                   for i in range(r.s.shape[1]) if i != winner)
    hover = f"\u03b1<sub>{winner}</sub> (wins): %{{y:.3g}} at t = %{{x:.3g}}<extra></extra>"
    return (*others, Line(x=r.t, y=r.s[:, winner], name="\u03b1 of the winning token",
                          color=style.PALETTE.alert, width=3.5, legend=True, hover=hover))


def tied_figure(results: Mapping[int, Result], *, frames: int = FRAMES, animated: bool = True,
                narrow: bool = False) -> dict[str, Any]:
    """The tied model for each size ``D``: loss, ``alpha(t)`` and the column norms of ``U``.

    Parameters
    ----------
    results : mapping of D to Result (``model="tied"``)
    frames : int
    animated : bool

    Returns
    -------
    dict
        One row per ``D``: the loss (log-log), ``alpha_i(t)``, and the norm of
        ``U``'s column at ``argmax alpha`` against the largest and smallest of the others.
    """
    panels = [panel for D, r in results.items() for panel in tied_panels(D, r)]
    # More than one row: the three quantities keep their columns, titled once, and each row says its D
    # (a title over each row took the room of its panels: 35 px at 1280 x 720, and the D's went unsaid).
    if narrow or len(results) > 1:
        panels = [replace(panel, title=_TIED_PHONE[k % 3] if k < 3 else "",
                          y_title=f"D = {D}" if k % 3 == 0 else "", note="")
                  for k, (D, panel) in enumerate(zip(np.repeat(list(results), 3), panels, strict=True))]
    return animated_grid(panels, cols=3, frames=frames, row_height=TIED_ROW, legend=True, animated=animated,
                         narrow_cols=3, narrow=narrow)


_TIED_PHONE = ("loss", "\u03b1<sub>i</sub>(t)", "norms of U")
"""The tied figure's column titles (its first row's) when it has more than one row: each row says its D."""


def descent_figure(comparisons: Sequence[Any], *, frames: int = FRAMES, animated: bool = True,
                   narrow: bool = False) -> dict[str, Any]:
    """The exact flow against gradient descent at each step size.

    Parameters
    ----------
    comparisons : sequence of ``science.DescentComparison`` (L of them)
    frames : int
    animated : bool

    Returns
    -------
    dict
        Two rows of L panels: ``s_i(t)`` of the flow (solid) and of the descent
        (dashed, up to where it stayed finite); the distance ``|s_gd - s_flow|``.
    """
    top, bottom = [], []
    gaps = np.concatenate([c.distance for c in comparisons])
    shared = log_span(gaps[np.isfinite(gaps)])  # one distance scale for every step size
    order = style.top_tokens(comparisons[0].flow.s[-1])  # the flow's order, for flow and descent alike
    # The step sizes title their columns once and the two rows say what they hold, over one time axis
    # (``multiples``): titled panel by panel, the rows were 49 px tall at 1280 x 720. The legend keys
    # the tokens' colours and the two strokes (solid: the flow, dashed: descent).
    # (One point each, which draws no line: plotly.js leaves a trace without points out of the legend;
    # the last, as a log time axis has no room for t = 0.)
    first = comparisons[0].flow
    key = tuple(Line(x=first.t[-1:], y=first.s[-1:, 0], name=name, dash=dash, width=2.2, moving=False,
                     legend=True) for name, dash in (("flow (solid)", "solid"), ("descent (dashed)", "dash")))
    for c in comparisons:
        note = "" if c.same_winner else c.message.split(": ", 1)[-1]
        top.append(Panel(title=f"lr = {c.lr:g}", y_floor=(0.0, 1.0),
                         y_title="score s<sub>i</sub>" if not top else "", note=note,
                         lines=(key if not top else ())
                         + token_lines(c.flow.t, c.flow.s, width=1.8, top=order, legend=True)
                         + token_lines(c.descent.t, c.descent.s, prefix="gd token", dash="dash", width=2.6,
                                       top=order)))
        k = len(c.distance)
        bottom.append(Panel(title="",
                            y_title="distance" if not bottom else "", log_y=True,
                            y_range=tuple(shared) if shared else None,
                            lines=(Line(x=c.descent.t[:k], y=c.distance, name="distance", width=3,
                                        color=style.PALETTE.alert if c.diverged else style.PALETTE.ink),)))
    return animated_grid(top + bottom, cols=len(comparisons), frames=frames, row_height=DESCENT_ROW,
                         legend=True, animated=animated, narrow=narrow)


def rate_figure(result: Result, rate: Any, *, frames: int = FRAMES, animated: bool = True,
                narrow: bool = False) -> dict[str, Any]:
    """How slowly polarization proceeds: the gap, the losers' ratios and the margin (log-log).

    Parameters
    ----------
    result : Result
        A logistic run (``K`` saved times, ``n`` tokens).
    rate : ``science.Rate``
        Its decay against the theory (``K'`` times with ``t > 1``).
    frames : int
    animated : bool

    Returns
    -------
    dict
        Three panels: ``1 - max s`` with ``2(n-1)/(n z^2)``, the corrected
        ``2(n-1)/(n (z - qbar)^2)`` and the theorem's ``C / log t``; each
        ``s_i / max s`` of the losers; the margin ``z`` with ``log t``.
    """
    grey, alert = style.PALETTE.grey, style.PALETTE.alert
    losers = tuple(line for i, line in enumerate(token_lines(result.t, result.ratio, width=2))
                   if i != result.winner)
    shown = rate.sharp < 10  # the asymptotic curves blow up at early times
    # The corrected form has a pole at z = qbar: draw it only once the margin has passed it.
    past = (rate.margin > rate.qbar) & (rate.corrected < 10)
    panels = [
        Panel(title=f"1 \u2212 max s (fitted slope vs log log t: {rate.slope:.2f})", log_y=True, lines=(
            Line(x=rate.t, y=rate.gap, name="1 \u2212 max s (run)", width=3.5, legend=True),
            Line(x=rate.t[shown], y=rate.sharp[shown], name="2(n\u22121)/(n z\u00b2)", color=alert,
                 dash="dash", moving=False, legend=True),
            Line(x=rate.t[past], y=rate.corrected[past], name="2(n\u22121)/(n (z \u2212 q\u0304)\u00b2)",
                 color=style.PALETTE.cycle[0], dash="longdash", width=3, moving=False, legend=True),
            Line(x=rate.t, y=rate.theorem, name="theorem: C / log t", color=grey, dash="dot", width=3,
                 moving=False, legend=True))),
        Panel(title="losers: s<sub>i</sub> / max s", log_y=True, lines=losers),
        Panel(title="margin z = \u03b2*\u1d40Vs", log_y=True, lines=(
            Line(x=rate.t, y=rate.margin, name="margin z", width=3.5),
            Line(x=rate.t, y=np.log(rate.t), name="log t", color=grey, dash="dash", moving=False,
                 legend=True))),
    ]
    return animated_grid(panels, cols=3, frames=frames, row_height=RATE_ROW, legend=True, animated=animated,
                         narrow=narrow)
