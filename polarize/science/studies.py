"""Studies over several runs: the numbers behind the comparison pages.

- ``compare_normalizers``: one starting point under every normalizer;
- ``sweep``: one field varied over values (e.g. the condition number ``kappa``);
- ``flow_vs_descent``: the exact flow against gradient descent at several step sizes;
- ``polarization_rate``: how fast ``1 - max s`` shrinks, against the theory.

Each returns plain frozen dataclasses of numpy arrays and ``Result`` objects,
for the figures and tables to draw.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from polarize.config import Experiment
from polarize.diagnostics import Result
from polarize.integrate import simulate
from polarize.normalizers import NORMALIZERS, takes
from polarize.science.deadline import Deadline
from polarize.status import Status

__all__ = [
    "DescentComparison",
    "NormalizerRow",
    "Rate",
    "compare_normalizers",
    "flow_vs_descent",
    "normalizer_row",
    "polarization_rate",
    "sweep",
]


@dataclass(frozen=True, kw_only=True, eq=False)
class NormalizerRow:
    """One normalizer's run and its final numbers (a row of the comparison table)."""

    normalizer: str
    result: Result
    entropy: float
    max_s: float
    loss: float
    stayed_on_simplex: bool
    """Whether this run's ``s`` stayed non-negative with unit sum (to 1e-9) at every saved time: measured,
    not the map's ``on_simplex`` (a dead ReLU run, all zeros, leaves the simplex its map keeps to)."""


def compare_normalizers(experiment: Experiment, names: tuple[str, ...] | None = None, *,
                        deadline: Deadline | None = None) -> list[NormalizerRow]:
    """Run ``experiment`` under each normalizer (all of them by default), same start.

    The starting arrays are drawn once, so every row starts from the same ``a0``,
    ``V0`` and target. The temperature is kept for the normalizers that take one. Under a
    ``deadline`` the normalizers it leaves out have no row.
    """
    base = experiment.resolved()
    deadline = deadline or Deadline()
    rows = []
    for name in names or tuple(NORMALIZERS):
        temperature = base.temperature if takes(name, "temperature") else 1.0
        result = deadline.simulate(name, dataclasses.replace(base, normalizer=name, temperature=temperature))
        if result is not None:
            rows.append(normalizer_row(result))
    return rows


def normalizer_row(r: Result) -> NormalizerRow:
    """The comparison's row of one run: its normalizer, final numbers and whether it stayed on the simplex."""
    stayed = bool(np.all(r.s >= -1e-12) and np.allclose(r.s.sum(axis=1), 1.0, atol=1e-9))
    return NormalizerRow(normalizer=r.experiment.normalizer, result=r, entropy=float(r.entropy[-1]),
                         max_s=float(r.s[-1].max()), loss=float(r.loss[-1]), stayed_on_simplex=stayed)


def sweep(experiment: Experiment, field: str, values) -> dict[object, Result]:
    """Run ``experiment`` with ``field`` set to each of ``values``; a dict value -> result.

    Explicit arrays that depend on ``field`` are drawn afresh (``Experiment.varied``):
    sweeping ``kappa`` redraws the design ``X`` for each value.
    """
    return {v: simulate(experiment.varied(**{field: v})) for v in values}


@dataclass(frozen=True, kw_only=True, eq=False)
class DescentComparison:
    """Gradient descent at one step size against the exact flow on the same time grid.

    Attributes
    ----------
    lr : float
    flow, descent : Result
        Both saved at the times ``k * lr``; the descent may have stopped early.
    distance : ndarray, shape (K,)
        ``|s_descent(t) - s_flow(t)|`` (Euclidean) at the saved times the descent reached.
    same_winner : bool
        Whether both end on the same token (False when the descent stopped).
    diverged : bool
    message : str
        In words: what the step size did.
    """

    lr: float
    flow: Result
    descent: Result
    distance: np.ndarray
    same_winner: bool
    diverged: bool
    message: str


def flow_vs_descent(experiment: Experiment, lrs, *,
                    deadline: Deadline | None = None) -> list[DescentComparison]:
    """The exact flow against gradient descent with each step size in ``lrs``.

    Parameters
    ----------
    experiment : Experiment
        The starting point and horizon (its ``method`` and ``lr`` are replaced).
    lrs : iterable of float
        Step sizes; each needs ``horizon / lr`` within the step cap.
    deadline : Deadline, optional
        The study's budget: a step size whose flow or descent it leaves out has no comparison.

    Returns
    -------
    list of DescentComparison, one per step size, in the order given.
    """
    base = experiment.resolved()
    deadline = deadline or Deadline()
    out = []
    for lr in lrs:
        label = f"lr = {lr:g}"
        flow = deadline.simulate(label, dataclasses.replace(base, method="flow", lr=lr))
        descent = None if flow is None else deadline.simulate(label, dataclasses.replace(base, method="gd",
                                                                                         lr=lr))
        if flow is not None and descent is None:
            deadline.unused(label)  # a flow with no descent to compare with is not drawn
        if descent is not None:
            out.append(_compared(lr, flow, descent))
    return out


def _compared(lr: float, flow: Result, descent: Result) -> DescentComparison:
    """The comparison of one step size's descent with the flow on the same times (either may be cut)."""
    k = min(len(descent.t), len(flow.t))
    distance = np.linalg.norm(descent.s[:k] - flow.s[:k], axis=1)
    if Status.OUT_OF_TIME in (flow.status, descent.status):
        late = "descent" if descent.status is Status.OUT_OF_TIME else "flow"
        return DescentComparison(lr=lr, flow=flow, descent=descent, distance=distance, same_winner=False,
                                 diverged=False, message=f"lr = {lr:g}: the {late} ran out of time at "
                                 f"t = {min(flow.t[-1], descent.t[-1]):.3g}; compared up to there")
    # A loss that ends above where it started is divergence too, even before it overflows.
    grew = bool(descent.loss[-1] > descent.loss[0])
    diverged = not descent.finished or grew
    same = (not diverged) and descent.winner == flow.winner
    if not descent.finished:
        message = f"lr = {lr:g}: descent diverges ({descent.message})"
    elif grew:
        message = (f"lr = {lr:g}: descent diverges: its loss grew from {descent.loss[0]:.3g} "
                   f"to {descent.loss[-1]:.3g}")
    elif not same:
        message = (f"lr = {lr:g}: descent ends on token {descent.winner}, the flow on token "
                   f"{flow.winner}: the step is too large to follow the flow")
    else:
        message = (f"lr = {lr:g}: same winner (token {flow.winner}); largest gap in s "
                   f"{distance.max():.2g}")
    return DescentComparison(lr=lr, flow=flow, descent=descent, distance=distance, same_winner=same,
                             diverged=diverged, message=message)


@dataclass(frozen=True, kw_only=True, eq=False)
class Rate:
    """How ``1 - max s`` decays along a logistic run, against the theory (docs/derivations.md section 3).

    Attributes
    ----------
    t : ndarray, shape (K,)
        Saved times with ``t > 0``.
    gap : ndarray, shape (K,)
        ``1 - max s``.
    margin : ndarray, shape (K,)
        ``z = p.s``, which grows like ``log t``.
    sharp : ndarray, shape (K,)
        The sharper asymptotic ``2 (n - 1) T^2 / (n z^2)`` (``T``: softmax temperature).
    corrected : ndarray, shape (K,)
        The same with the losers' offset, ``2 (n - 1) T^2 / (n (z - qbar)^2)``.
    qbar : float
        Mean of the losers' value projections ``p_j`` at the last time (they
        converge: ``dp_j/dt = c s_j`` is integrable).
    local_slope : ndarray, shape (K,)
        ``d log corrected / d log z = -2 z / (z - qbar)``: the slope against
        ``log log t`` the corrected form predicts (it tends to -2 from below).
    theorem : ndarray, shape (K,)
        ``1 / log t`` scaled to meet ``gap`` at the last time: the theorem's ``O(1/log t)``.
    slope : float
        Fitted slope of ``log gap`` against ``log log t`` over the last decades
        (steeper than -2 at any finite time, by the offset ``qbar``).
    corrected_slope : float
        The same fit of ``log corrected``, over the same times: the slope the
        corrected asymptotics predicts.
    """

    t: np.ndarray
    gap: np.ndarray
    margin: np.ndarray
    sharp: np.ndarray
    corrected: np.ndarray
    qbar: float
    local_slope: np.ndarray
    theorem: np.ndarray
    slope: float
    corrected_slope: float


def polarization_rate(result: Result, *, fit_from: float = 1e4) -> Rate:
    """The decay of ``1 - max s`` for a logistic run on a target direction.

    Parameters
    ----------
    result : Result
        A run with the logistic loss on a target (it has ``p``).
    fit_from : float
        The slope is fitted on the saved times ``t >= fit_from`` (or the last half
        of them when fewer than three are that late).

    Raises
    ------
    ValueError
        When ``result`` has no value projections ``p`` (not a logistic run).
    """
    if result.p is None:
        raise ValueError("result: the rate needs a logistic run on a target direction (it has no p)")
    keep = result.t > 1.0  # log log t needs t > 1
    t, s, p = result.t[keep], result.s[keep], result.p[keep]
    n = s.shape[1]
    gap = result.one_minus_max[keep]
    margin = np.sum(p * s, axis=1)
    e = result.experiment
    scale = 2.0 * (n - 1) * e.temperature**2 / n  # temperature is 1 unless the normalizer takes one
    qbar = float(np.mean(np.delete(p[-1], np.argmax(s[-1])))) if n > 1 else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        sharp = scale / margin**2
        corrected = scale / (margin - qbar) ** 2
        local_slope = -2.0 * margin / (margin - qbar)
        theorem = gap[-1] * np.log(t[-1]) / np.log(t)
    late = t >= fit_from
    if late.sum() < 3:
        late = np.arange(len(t)) >= len(t) // 2
    usable = late & (gap > 0) & (margin > qbar)
    slope, corrected_slope = (_loglog_slope(t[usable], y[usable]) for y in (gap, corrected))
    return Rate(t=t, gap=gap, margin=margin, sharp=sharp, corrected=corrected, qbar=qbar,
                local_slope=local_slope, theorem=theorem, slope=slope, corrected_slope=corrected_slope)


def _loglog_slope(t: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of ``log y`` against ``log log t`` (NaN with fewer than two points)."""
    if len(t) < 2:
        return float("nan")
    return float(np.polyfit(np.log(np.log(t)), np.log(y), 1)[0])
