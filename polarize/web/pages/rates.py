"""Rates: how slowly 1 - max s shrinks under the logistic loss, against the theory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from polarize.config import ConfigError, Experiment
from polarize.diagnostics import Result
from polarize.plots import rate_figure
from polarize.science import format_time, format_value, polarization_rate
from polarize.science.deadline import Deadline, Partial
from polarize.web import overtime
from polarize.web.leads import LEADS
from polarize.web.page import PageSpec, Problem
from polarize.web.study import (
    Drawn,
    explorer_control,
    field_problem,
    horizon,
    horizons,
    intro,
    start,
    stopped_notes,
    study_view,
)
from polarize.web.view import Metric, Plot, View

CONTROLS = (*start(64), explorer_control("a_init", options=("zeros", "gaussian")),
            horizon(1e4, 1e12, extra=(1e13, 1e14, 1e15, 1e20, 1e50, 1e100, 1e300)))
LABELS = {c.key: c.label for c in CONTROLS}


def study(experiment: Experiment, *, deadline: Deadline | None = None) -> Result | None:
    """A logistic flow (None when the ``deadline`` left it out; its rate is worked out in ``draw``,
    where a run cut too early to have one is shown as nothing drawn)."""
    return (deadline or Deadline()).simulate("the logistic flow", experiment)


def experiment(values: Mapping[str, Any]) -> Experiment:
    return Experiment(n=values["n"], d=values["n"], loss="logistic", horizon=values["horizon"],
                      seed=values["seed"], a_init=values["a_init"], a_scale=1.0)


def check(values: Mapping[str, Any]) -> Problem | None:
    try:
        experiment(values)
    except ConfigError as exc:
        return field_problem(exc, LABELS)
    return None


AGREE = 0.01
"""Fitted and predicted slopes this close (relative) are said to agree."""


def slope_words(rate: Any) -> str:
    """The fitted and predicted slopes, and what they show, in words that hold for this run's numbers.

    The prediction is asymptotic: it applies once the winner is settled and its margin z is far above the
    losers' mean projection q\u0304. A run not there yet by its horizon is said to be not there.
    """
    words = (f"Fitted against log log t over the late times, the corrected form's slope is "
             f"{rate.corrected_slope:.4f} and the run's {rate.slope:.4f}")
    gap = abs(rate.slope - rate.corrected_slope) / abs(rate.corrected_slope)
    if gap <= AGREE:
        words += f" (within {gap:.1%})"
    else:
        words += (f": {gap:.0%} apart, so by t = {format_time(float(rate.t[-1]))} this run is not yet in "
                  "the asymptotic regime the prediction describes (a settled winner whose margin z is far "
                  "above q\u0304); a longer horizon may bring them together")
    if rate.slope < -2:
        words += (f". Steeper than \u22122, because the local slope \u22122z/(z \u2212 q\u0304) "
                  f"({rate.local_slope[-1]:.3f} at the end) tends to \u22122 only as z grows (run to "
                  "t = 1e300 to watch it walk).")
    else:
        words += f". The local slope \u22122z/(z \u2212 q\u0304) is {rate.local_slope[-1]:.3f} at the end."
    return words


def draw(values: Mapping[str, Any], result: Result, narrow: bool = False) -> Drawn:
    rate = polarization_rate(result)
    n = result.s.shape[1]
    end = format_time(float(rate.t[-1]))
    late = rate.t >= 1e6
    plot = Plot("rate", rate_figure(result, rate, narrow=narrow), (
        "Log-log axes. Left: the weight left for the losers, 1 \u2212 max s, falls faster than the theorem's "
        "bound C / log t (dotted) and approaches the sharp asymptotics 2(n\u22121)/(n z\u00b2) (red, dashed) "
        f"only slowly: their ratio is {rate.gap[-1] / rate.sharp[-1]:.2f} at t = {end}. The offset "
        f"of the losers explains the gap: with q\u0304 = {rate.qbar:.3g}, the mean of their value "
        "projections p\u2c7c, 1 \u2212 max s \u2248 2(n\u22121)/(n (z \u2212 q\u0304)\u00b2) "
        "(blue, long dashes)"
        + (f", within {np.max(np.abs(rate.gap[late] / rate.corrected[late] - 1)):.1%} from t = 1e6"
           if late.any() else "")
        + ". " + slope_words(rate) + " Middle: each loser's share relative to the winner. Right: the "
        "margin z grows like log t."))
    every = max(1, len(rate.t) // 12)  # about a dozen rows, evenly spread in log time
    table = [{"t": float(f"{rate.t[k]:.4g}"), "1 - max s": float(f"{rate.gap[k]:.4g}"),
              "margin z": float(f"{rate.margin[k]:.4g}"), "2(n-1)/(n z^2)": float(f"{rate.sharp[k]:.4g}"),
              "2(n-1)/(n (z-qbar)^2)": float(f"{rate.corrected[k]:.4g}"),
              "local slope": float(f"{rate.local_slope[k]:.4g}")}
             for k in range(0, len(rate.t), every)]
    runs = {"logistic flow": result}
    return Drawn(plots=(plot,), table=table, runs=runs, notes=stopped_notes(runs), metrics=(
        Metric("Fitted slope", f"{rate.slope:.3f}", "Of log(1 \u2212 max s) against log log t over the late "
               "times: \u22122 for a 1/log\u00b2 t decay, \u22121 for the theorem's 1/log t."),
        Metric("Predicted slope", f"{rate.corrected_slope:.3f}", "The same fit of the corrected asymptotics "
               "2(n\u22121)/(n (z \u2212 q\u0304)\u00b2); its local slope \u22122z/(z \u2212 q\u0304) "
               f"is {rate.local_slope[-1]:.3f} at the end."),
        Metric("1 \u2212 max s at the end", format_value(float(rate.gap[-1])),
               f"At t = {format_time(float(rate.t[-1]))}, "
               f"n = {n}.")))


def advice(values: Mapping[str, Any], partial: Partial | None) -> str:
    """Lower the horizon (to where the flow got), or fewer tokens."""
    reached = partial.earliest() if partial else None
    return overtime.to_see([overtime.lower_horizon(values["horizon"], reached, horizons(CONTROLS)),
                            overtime.fewer_tokens(values["n"])])


def view(job: tuple[tuple[str, Any], ...], narrow: bool = False) -> View:
    return study_view("rates", dict(job), lambda v: (study, (experiment(v),)), draw,
                      advise=advice, narrow=narrow)


PAGE = PageSpec(
    name="rates",
    lead=LEADS["rates"], nav_title="Rates", title="Rates: how slow is polarization?", icon=":material/speed:",
    url_path="rates", controls=CONTROLS, check=check, view=view, spinner="Running the comparison...",
    defaults=lambda _: {"n": 5, "seed": 1, "a_init": "zeros", "horizon": 1e12},
    caption=intro("Under the logistic loss the flow polarizes forever, but only logarithmically. Here out to "
                  "t = 10\u00b9\u00b2 and beyond, against the theory."))
