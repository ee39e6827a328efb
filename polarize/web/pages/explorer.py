"""The Explorer: one animated dashboard of a run, every setting in the sidebar and in the link.

``EXPLORER`` is the page: its controls (an ``Experiment``'s fields over a
preset, ``polarize.web.experiment_controls``), its run policy (``check``: what a
page should not attempt, naming the field), and ``explore``: one run under the
time limit (``polarize.web.limited``), and everything the page shows about it.
Each rerun builds the experiment once (``job``); the run and its figure are
made once per experiment (the renderer caches ``explore``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from polarize.config import ConfigError, Experiment
from polarize.integrate import simulate_within
from polarize.losses import LOSSES
from polarize.methods import METHODS
from polarize.normalizers import NORMALIZERS, DegenerateStateError
from polarize.plots.dashboard import dashboard
from polarize.plots.reveal import revealed
from polarize.presets import get_preset
from polarize.science import THRESHOLDS, format_time, judge, title_lines
from polarize.status import Status
from polarize.web import export, overtime, text
from polarize.web.experiment_controls import (
    CONTROLS,
    FIELD_KEYS,
    HORIZONS,
    MAX_GD_STEPS,
    MAX_TOKENS,
    build_experiment,
    preset_values,
)
from polarize.web.failures import config_reason, failure_view
from polarize.web.leads import LEADS, OTHER_MAP_LEAD, TOURS
from polarize.web.limited import BUDGET, run_limited
from polarize.web.page import Mend, PageSpec, Problem
from polarize.web.view import Caption, Columns, Download, Folded, Metric, Plot, Text, View

__all__ = ["AFTER_PLAY", "CONTROLS", "END_OF_RUN", "EXPLORER", "HORIZONS", "MAX_GD_STEPS", "MAX_TOKENS",
           "Exploration", "build_experiment", "check", "explore", "job", "mend", "preset_values",
           "start_trouble"]

END_OF_RUN = "**At the end of the run** (press Play to watch it get there):"
"""Above the verdict and the final numbers: they tell the run's end, which the figure reaches last."""
AFTER_PLAY = "Verdict (open after Play)"
"""The label of the verdict and the final numbers folded for after Play (``verdict=after``)."""


class Exploration(NamedTuple):
    """What the Explorer shows: the experiment to run, the repulsion panel's mode and when the verdict
    shows (the cache key)."""

    experiment: Experiment
    repulsion: str = "fitness"
    verdict: str = "now"


def job(values: Mapping[str, Any]) -> Exploration | Problem:
    """What to run and show, or why a page will not run it (naming the fields): once per rerun."""
    method = METHODS[values["method"]]
    steps = method.steps(values["horizon"], values["lr"])
    if steps is not None:
        if steps > MAX_GD_STEPS:
            return Problem(("horizon", "lr", "method"), (
                f"{method.label.capitalize()} up to t = {format_time(values['horizon'])} with learning rate "
                f"{values['lr']:g} takes {steps:,} steps; the Explorer runs at most {MAX_GD_STEPS:,}. "
                "Lower the horizon, raise the learning rate, or use the exact flow."))
    try:
        return Exploration(build_experiment(values), values.get("repulsion", "fitness"),
                           values.get("verdict", "now"))
    except ConfigError as exc:
        label = next((c.label for c in CONTROLS if c.key == exc.field), exc.field)
        return Problem((exc.field,), f"{label}: {config_reason(exc)}")


def undefined_start(resolved: Experiment) -> Problem | None:
    """Whether the normalizer is undefined at the (resolved) starting logits, naming the normalizer first."""
    try:
        resolved.sigma.forward(np.asarray(resolved.a0))
    except (DegenerateStateError, ConfigError) as exc:
        return Problem(("normalizer", "a_init", "a_scale", "a_shift"), (
            f"The {NORMALIZERS[resolved.normalizer].short} normalizer is undefined at the starting logits "
            f"({exc}). "
            "Choose another normalizer, or another start for the logits, e.g. shift + scale \u00d7 randn."))
    return None


def start_trouble(resolved: Experiment) -> str | None:
    """What makes the (resolved) start a dead end for its normalizer, in words, or None.

    Undefined (l2, l1 or sum at a(0) = 0), or every score zero where the scores should lie on the
    simplex (relu with no positive logit): then nothing moves, V s = 0 and s stays 0 for ever.
    """
    try:
        scores = resolved.sigma.forward(np.asarray(resolved.a0))
    except (DegenerateStateError, ConfigError):
        return "is undefined"
    if resolved.sigma.on_simplex and not np.any(scores):
        return "gives every token a zero score (a run that cannot move)"
    return None


COMPARISON_START = "paper-compare-logistic"
"""The preset whose start (a shift plus a scaled random draw) every normalizer is defined at."""


def mend(values: Mapping[str, Any], key: str) -> Mend | None:
    """After a new normalizer: a start where it is defined and alive, when the current one is not.

    Tried in turn: the shifted start with the page's own shift and scale, then the one of the
    paper's normalizer comparison (arXiv:2603.06248 section 6: a = 1 + 0.1 randn), so that the
    normalizer menu has no dead end. The seed is kept.
    """
    if key != "normalizer":
        return None
    exploration = job(values)
    if isinstance(exploration, Problem):
        return None
    trouble = start_trouble(exploration.experiment.resolved())
    if trouble is None:
        return None
    paper = get_preset(COMPARISON_START).experiment
    for shift, scale in ((values["a_shift"], values["a_scale"]), (paper.a_shift, paper.a_scale)):
        changes = {"a_init": "shifted", "a_shift": float(shift), "a_scale": float(scale)}
        moved = job({**values, **changes})
        if not isinstance(moved, Problem) and start_trouble(moved.experiment.resolved()) is None:
            was = "at a(0) = 0" if values["a_init"] == "zeros" else "at this start"
            name = NORMALIZERS[values["normalizer"]].short
            # One line over the figure on a projector: the start's menu and the address say the rest.
            return Mend(changes, (
                f"{name} {trouble} {was}, so the logits now start at a(0) = {shift:g} + {scale:g} "
                "\u00d7 randn, as in the paper's normalizer comparison."))
    return None


def check(values: Mapping[str, Any]) -> Problem | None:
    """Why the Explorer will not run these values (the step cap, a clash, an undefined start), or None."""
    exploration = job(values)
    if isinstance(exploration, Problem):
        return exploration
    return undefined_start(exploration.experiment.resolved())


def explore(experiment: Experiment, repulsion: str = "fitness", verdict: str = "now", *,
            timeout: float | None = None, frames: int | None = None, narrow: bool = False) -> View:
    """Run an experiment (with a time limit) and make everything the Explorer shows; never raises.

    The arrays are drawn once (``resolved``), probed, then run as drawn. ``repulsion`` is the
    dashboard's repulsion panel mode (``plots.dashboard``); ``verdict`` ``after`` folds the verdict
    and the final numbers until the reader opens them. The engine has a budget just under
    the time limit (``budget.within``): a slow run stops by itself and is shown up to where it
    got, with advice that fits its settings (``overtime``).

    Parameters
    ----------
    timeout : float, optional
        The hard time limit in seconds (``runner.timeout_seconds()`` when omitted).
    narrow : bool
        The dashboard laid out for a phone.

    Returns
    -------
    View
        ``error`` set when the run was refused, failed or timed out with nothing to show; a
        warning when it stopped early or ran out of time; ``data`` is the ``Result``.
    """
    start = time.perf_counter()
    try:
        resolved = experiment.resolved()
    except Exception as exc:  # an engine bug must not become a traceback on the page
        return failure_view(exc)
    problem = undefined_start(resolved)
    if problem:
        return View(error=problem.message)
    ran = run_limited(simulate_within, resolved, BUDGET, timeout=timeout,
                      advice=lambda: overtime.advice(experiment))
    if isinstance(ran, View):
        return ran
    result, limit = ran
    if result.status is Status.OUT_OF_TIME and len(result.t) < 2:  # passing: a quieter server may get further
        return View(error=f"This run did not get past its start in {limit:g} s. "
                          + overtime.advice(experiment), passing=True)
    if len(result.t) == 0:
        return View(error=result.message or "The run saved nothing.")
    # A plain figure dict: plotly's objects would cost several times the run (see ``dashboard``).
    figure = dashboard(result, repulsion=repulsion, narrow=narrow,
                       **({} if frames is None else {"frames": frames}))
    judged = judge(result)
    # The verdict is the run's end: said so before it, as the figure opens at the start.
    numbers = (Text(END_OF_RUN), Metric("Polarized?", judged.status.answer, THRESHOLDS),
               Text(judged.sentence), *(Metric(*m) for m in text.summary_metrics(result)))
    why = text.not_a_distribution(np.asarray(result.s[-1], dtype=float))
    if why:  # the dashes above, said in words where they show
        numbers = (*numbers[:3], Text(f"No entropy or winner: {why}."), *numbers[3:])
    shown = figure
    if verdict == "after":  # kept for after Play: the end of the run is not told before it plays
        numbers = (Folded(AFTER_PLAY, numbers),)
        shown = revealed(figure)  # nor drawn: the curves go as far as the frame shown
    dead = ~np.any(np.asarray(result.s) != 0, axis=1)
    dead_from = float(result.t[np.argmax(dead)]) if dead[-1] else None
    captions = text.panel_captions(experiment, repulsion=repulsion, dead_from=dead_from, result=result)
    blocks = (
        Columns(((Plot("dashboard", shown),), numbers), widths=(5, 1.15), gap="medium"),
        Columns(((Caption(captions[0]),), tuple(map(Caption, captions[1:3])),
                 tuple(map(Caption, captions[3:]))),
                widths=(0.34, 0.33, 0.33)),
    )
    return View(blocks=blocks, downloads=_downloads(result, figure, export.file_stem(experiment)),
                warnings=_warnings(result, limit),
                sidebar=text.init_note(experiment), data=result, seconds=time.perf_counter() - start,
                passing=result.status is Status.OUT_OF_TIME)  # a run cut short may finish on a quieter server


def _warnings(result: Any, limit: float) -> tuple[str, ...]:
    """Why the run is not shown to its horizon (out of time under ``limit`` seconds: with advice)."""
    if result.status is Status.OUT_OF_TIME:
        return (overtime.partial_warning(result, limit),)
    return () if result.finished else (f"The run stopped early: {result.message}",)


def _downloads(result: Any, figure: Any, stem: str) -> tuple[Download, ...]:
    clips = export.clip_downloads(
        figure, key="", name="Clip", title=title_lines(result), stem=stem,
        help_text="The dashboard as an animated clip for slides, titled with the settings and the verdict "
                  "(takes a few seconds).")
    return (
        Download("csv", "Trajectory (CSV)", lambda: export.trajectory_csv(result), f"{stem}.csv", "text/csv",
                 ":material/table:"),
        Download("json", "Trajectory (JSON)", lambda: export.trajectory_json(result), f"{stem}.json",
                 "application/json", ":material/data_object:"),
        Download("config", "Configuration (JSON)", lambda: export.config_json(result), f"{stem}-config.json",
                 "application/json", ":material/settings:",
                 "Run it again with: polarize run CONFIG.json -o RESULT.json"),
        Download("html", "Dashboard (HTML)",
                 lambda: export.dashboard_html(figure, title=stem, heading=title_lines(result)),
                 f"{stem}.html",
                 "text/html", ":material/movie:", "The animated dashboard as one file that plays offline."),
        *clips,
    )


def caption(values: Mapping[str, Any]) -> str:
    """The line under the title: the preset, what differs from it, and that the link holds it all."""
    base = preset_values(values["preset"])
    changed = [c.label.lower() for c in CONTROLS
               if c.key in FIELD_KEYS and values.get(c.key, base[c.key]) != base[c.key]]
    changes = f" (changed from the preset: {', '.join(changed)})" if changed else ""
    return (f"Preset **{values['preset']}**{changes}. Every setting is in the page's address: "
            "copy it to share "
            "this exact run.")


def running(values: Mapping[str, Any]) -> str:
    """The spinner's words while a run is made: which run, to what time."""
    how = METHODS[values["method"]].doing
    chosen = values["normalizer"]
    sigma = NORMALIZERS[chosen].short if chosen in NORMALIZERS else "its normalizer"
    return (f"Simulating {how} of {values['n']} tokens to t = {format_time(values['horizon'])} "
            f"({LOSSES.labels.get(values['loss'], values['loss'])} loss, {sigma})...")


def lead(values: Mapping[str, Any]) -> str:
    """The lead under the title: the page's own (written for softmax, the default normalizer), or the
    one naming the chosen normalizer by its label."""
    chosen = values.get("normalizer")
    if chosen == preset_values(None)["normalizer"] or chosen not in NORMALIZERS:
        return LEADS["explorer"]
    return OTHER_MAP_LEAD.format(label=NORMALIZERS[chosen].label)


def title(values: Mapping[str, Any]) -> str:
    """The page's title for ``values``: the chosen normalizer by its label."""
    chosen = values.get("normalizer")
    return f"Explorer: does {NORMALIZERS[chosen].label if chosen in NORMALIZERS else 'it'} polarize?"


EXPLORER = PageSpec(
    name="explorer",
    lead=LEADS["explorer"], lead_of=lead, tour=TOURS["explorer"], nav_title="Explorer",
    presented=(("verdict", "after"),),
    title="Explorer: does it polarize?",
    icon=":material/animation:",
    url_path="explorer", default=True, controls=CONTROLS, defaults=preset_values, job=job, check=check,
    mend=mend,
    view=lambda shown, narrow=False: explore(*shown, narrow=narrow), caption=caption, spinner=running,
    titled=title, ahead=True)
