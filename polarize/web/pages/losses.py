"""Loss and conditioning: every registered loss (``LOSSES``) from one start, and the paper's regression
against kappa."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from polarize.config import ConfigError, Experiment
from polarize.losses import LOSSES
from polarize.plots import kappa_figure, losses_figure, regression_figure
from polarize.presets import PAPER_KAPPAS, paper_regression
from polarize.science import ends, format_value, judge, kl_floor
from polarize.science.deadline import Deadline, Partial, simulated
from polarize.web import overtime
from polarize.web.controls import Control
from polarize.web.leads import LEADS
from polarize.web.page import PageSpec, Problem
from polarize.web.study import (
    Drawn,
    Runs,
    field_problem,
    horizon,
    horizons,
    intro,
    start,
    stopped_notes,
    study_view,
)
from polarize.web.view import Metric, Plot, View

CONTROLS = (*start(32), horizon(10, 1e8),
            Control("kappas", "Condition numbers \u03ba", "multiselect", options=tuple(range(1, 11)), most=6,
                    help="The paper's regression (n = d = m = 20) at each \u03ba."))
LABELS = {c.key: c.label for c in CONTROLS}


def study(n: int, seed: int, horizon: float, kappas: tuple[float, ...], *,
          deadline: Deadline | None = None) -> tuple[dict, dict]:
    """Every loss of ``LOSSES`` from one start (loss -> Result), and the paper's regression (kappa -> Result).

    The runs a ``deadline`` leaves out are missing from the dicts.
    """
    deadline = deadline or Deadline()
    made = _runs(n, seed, horizon, kappas)
    return _joined({label: deadline.simulate(label, e) for label, (_, e) in made.items()}, made)


def _runs(n: int, seed: int, horizon: float,
          kappas: tuple[float, ...]) -> dict[str, tuple[tuple[int, Any], Experiment]]:
    """The study's runs by label: each loss (``loss = name``), then each kappa (``\u03ba = kappa``), each with
    its place in the outcome ((0, loss name) or (1, kappa)) and its experiment."""
    losses = {f"loss = {name}": ((0, name), Experiment(n=n, d=n, loss=name, horizon=horizon, seed=seed,
                                                       a_init="gaussian", a_scale=0.5)) for name in LOSSES}
    # Each kappa is the paper's own regression preset: its X and y are the notebook's draws, which a
    # sweep of kappa (redrawing X from the seed in this project's order) would not keep.
    return losses | {f"\u03ba = {kappa:g}": ((1, kappa), paper_regression(kappa)) for kappa in kappas}


_Made = Mapping[str, tuple[tuple[int, Any], Experiment]]


def _joined(results: Mapping[str, Any], made: _Made) -> tuple[dict, dict]:
    """The study's outcome (loss -> Result, kappa -> Result) of its runs by label (those left out missing or
    None)."""
    outcome: tuple[dict, dict] = ({}, {})
    for label, ((which, key), _) in made.items():
        if results.get(label) is not None:
            outcome[which][key] = results[label]
    return outcome


def runs(values: Mapping[str, Any]) -> Runs:
    """Every run of ``study`` at once, each a part (``deadline.simulated``)."""
    made = _runs(values["n"], values["seed"], values["horizon"], tuple(values["kappas"]))
    return Runs({label: (simulated, (label, e)) for label, (_, e) in made.items()},
                lambda results: _joined(results, made))


def check(values: Mapping[str, Any]) -> Problem | None:
    if not values["kappas"]:
        return Problem(("kappas",), "Condition numbers: choose at least one.")
    try:
        Experiment(n=values["n"], d=values["n"], horizon=values["horizon"], seed=values["seed"])
    except ConfigError as exc:
        return field_problem(exc, LABELS)
    return None


def draw(values: Mapping[str, Any], outcome: tuple[dict, dict], narrow: bool = False) -> Drawn:
    losses, regression = outcome
    runs = {f"loss={k}": r for k, r in losses.items()} | {f"kappa={k:g}": r for k, r in regression.items()}
    table = [{"run": label, "final entropy": round(float(r.entropy[-1]), 4) + 0.0,
              "max s": round(float(r.s[-1].max()), 4), "final loss": f"{r.loss[-1]:.3g}",
              "status": r.status} for label, r in runs.items()]
    floors = {loss: floor for loss, r in losses.items() if (floor := kl_floor(r.experiment)) is not None}
    plots = (Plot("losses", losses_figure(losses, narrow=narrow), " ".join((
        f"Same start, {len(losses)} losses.", *(LOSSES[name].words for name in losses),
        *(f"Dashed: the {LOSSES[loss].short} floor {LOSSES[loss].floor_name} = {floor:.3g}."
          for loss, floor in floors.items()), _endings(losses, "{}", LOSSES.labels.get)))),)
    if regression:  # left out when the comparison ran out of time before it
        plots += (
            Plot("regression", regression_figure(regression, narrow=narrow), (
                "The paper's regression (n = d = m = 20, square loss) at each condition number \u03ba of "
                "the design X: the larger \u03ba, the further the logits a(t) spread, the more polarized "
                "the scores.")),
            Plot("kappa", kappa_figure(regression, narrow=narrow), (
                "Final entropy and largest score against \u03ba: ill-conditioned problems sparsify more "
                "(the paper's observation). " + _endings(regression, "\u03ba = {}", "{:g}".format))),
        )
    metrics = tuple(metric for loss, floor in floors.items() for metric in (
        Metric(f"{LOSSES[loss].short} floor {LOSSES[loss].floor_name}", format_value(float(floor)),
               "The lowest loss it can reach."),
        Metric(f"{LOSSES[loss].short} final loss", format_value(float(losses[loss].loss[-1])),
               "At the horizon.")))
    return Drawn(plots=plots, table=table, runs=runs, notes=stopped_notes(runs), metrics=metrics)


def _endings(runs: Mapping[Any, Any], label: str, name: Any) -> str:
    """How each run shown ends by the app's one verdict (``label`` with the run's ``name``), in one
    sentence: under the square loss it depends on the setting, so it is said run by run."""
    said = "; ".join(f"{label.format(name(key))}, {ends(judge(r))}" for key, r in runs.items())
    return f"By this app's verdict the runs end: {said}."


def advice(values: Mapping[str, Any], partial: Partial | None) -> str:
    """Fewer condition numbers when the regression ran out, else a lower horizon; fewer tokens."""
    kappas = overtime.fewer("condition numbers \u03ba", values["kappas"], lambda k: f"{k:g}")
    losses = [f"loss = {name}" for name in LOSSES]
    reached = partial.earliest(*losses) if partial else None
    horizon = overtime.lower_horizon(values["horizon"], reached, horizons(CONTROLS))
    slow_losses = partial is None or any(label in losses for label in (*partial.cut, *partial.left_out))
    options = [horizon, kappas] if slow_losses and reached is not None else [kappas, horizon]
    return overtime.to_see([*options, overtime.fewer_tokens(values["n"])], "all of it")


def view(job: tuple[tuple[str, Any], ...], narrow: bool = False) -> View:
    return study_view("losses", dict(job), runs, draw, advise=advice, narrow=narrow)


PAGE = PageSpec(
    name="losses",
    lead=LEADS["losses"],
    nav_title="Loss and conditioning", title="Loss and conditioning", icon=":material/tune:",
    url_path="losses", controls=CONTROLS, check=check, view=view, spinner="Running the comparison...",
    defaults=lambda _: {"n": 8, "seed": 0, "horizon": 1e6, "kappas": PAPER_KAPPAS},
    caption=intro("The logistic, square and cross-entropy losses on a common footing (same start, a(0) = "
                  "0.5 randn), then the paper's regression against the condition number \u03ba."))
