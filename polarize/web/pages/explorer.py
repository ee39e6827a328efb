"""The Explorer: one animated dashboard of a run, every setting in the sidebar and in the link.

``EXPLORER`` is the page: its controls (an ``Experiment``'s fields over a
preset), its run policy (``check``: what a page should not attempt, naming the
field), and ``explore``: one run, with a time limit, and everything the page
shows about it. Each rerun builds the experiment once (``job``); the run and
its figure are made once per experiment (the renderer caches ``explore``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from polarize.budget import OUT_OF_TIME, within
from polarize.config import A_INITS, LOSSES, METHODS, V_INITS, ConfigError, Experiment
from polarize.integrate import simulate_within
from polarize.normalizers import NORMALIZERS, DegenerateStateError
from polarize.plots.dashboard import dashboard_spec
from polarize.plots.replicator import REPULSION_TITLES
from polarize.presets import PRESETS, get_preset
from polarize.science import THRESHOLDS, format_time, judge, title_lines
from polarize.serve.runner import RunTimeout, call_with_timeout, timeout_seconds
from polarize.web import export, overtime, text
from polarize.web.controls import Control
from polarize.web.failures import config_reason, failure_view
from polarize.web.page import Mend, PageSpec, Problem
from polarize.web.view import Caption, Columns, Download, Metric, Plot, Text, View

__all__ = ["CONTROLS", "END_OF_RUN", "EXPLORER", "HORIZONS", "MAX_GD_STEPS", "MAX_TOKENS", "Exploration",
           "build_experiment", "check", "explore", "job", "mend", "preset_values", "start_trouble"]

DEFAULT_PRESET = "default"
MAX_TOKENS = 128
"""Largest ``n`` (and ``d``) offered by the Explorer's sliders."""
MAX_GD_STEPS = 200_000
"""Gradient-descent steps a page runs at most (the engine allows more, but a page must stay quick)."""
END_OF_RUN = "**At the end of the run** (press Play to watch it get there):"
"""Above the verdict and the final numbers: they tell the run's end, which the figure reaches last."""


def _nice_horizons() -> tuple[float, ...]:
    """1, 2, 5 times each power of ten from 10 to 1e12, plus every preset's horizon."""
    values = {float(c * 10**k) for k in range(1, 13) for c in (1, 2, 5)}
    values = {v for v in values if v <= 1e12}
    values |= {float(p.experiment.horizon) for p in PRESETS.values()}
    return tuple(sorted(values))


HORIZONS: tuple[float, ...] = _nice_horizons()
"""The horizons the pages offer (a log scale)."""


def is_tied(name: str) -> bool:
    """Whether a preset uses the tied model (where ``d`` must equal ``n``)."""
    return get_preset(name).experiment.model == "tied"


CONTROLS: tuple[Control, ...] = (
    Control("preset", "Preset", "select", options=tuple(PRESETS),
            help="A named experiment; the paper's toy runs use its own random draws.",
            caption=lambda name: PRESETS[name].description),
    Control("n", "Tokens n", "slider", 2, MAX_TOKENS, integer=True,
            help="Number of tokens: the logits a and scores s have n entries."),
    Control("d", "Value dimension d", "slider", 1, MAX_TOKENS, integer=True,
            help="Rows of V (the number of classes for the cross-entropy loss).",
            derive=lambda v: v["n"] if is_tied(v["preset"]) else None,
            off_help=" The tied model needs d = n."),
    Control("loss", "Loss", "select", options=LOSSES, names=text.LOSS_NAMES,
            help="Logistic on the margin β*ᵀVs; square ½|Vs \u2212 β*|²; "
                 "cross-entropy of softmax(Vs) against p*."),
    Control("normalizer", "Normalizer \u03c3", "select", options=tuple(NORMALIZERS),
            names=text.NORMALIZER_NAMES,
            help="How logits become scores s = \u03c3(a). Only softmax has the replicator form."),
    Control("temperature", "Temperature", "number", 0.05, 20.0, step=0.1,
            help="Softmax temperature: s = softmax(a / T).",
            derive=lambda v: None if v["normalizer"] == "softmax" else 1.0, off_help=" (softmax only)"),
    Control("method", "Method", "radio", options=METHODS,
            names={"flow": "gradient flow (exact)", "gd": "gradient descent"},
            help="The exact flow, or gradient descent with the learning rate below."),
    Control("lr", "Learning rate", "number", 1e-4, 10.0, step=0.01,
            help="Step of gradient descent (time t = steps \u00d7 lr). "
                 "The flow records its first time at t = lr.",
            applies=lambda v: v["method"] == "gd"),
    Control("horizon", "Horizon (final time)", "select_slider", options=HORIZONS, names_of=format_time,
            help="How long to run, on a log scale. "
                 "Polarization under the logistic loss is slow: like 1/log² t."),
    Control("seed", "Seed", "number", 0, 2**32 - 1, step=1, integer=True,
            help="Seed of every random draw (V, a, β*)."),
    Control("a_init", "Logits a(0)", "select", options=A_INITS, names=text.A_INIT_NAMES,
            group="Initialization",
            help="Starting logits; zeros start from uniform scores."),
    Control("a_scale", "a(0) scale", "number", 0.0, 10.0, step=0.05, half=True,
            help="Scale of the random part of a(0).", applies=lambda v: v["a_init"] != "zeros"),
    Control("a_shift", "a(0) shift", "number", -10.0, 10.0, step=0.1, half=True,
            help="Added to every logit (shifted), or to token 0's logit (near a vertex).",
            applies=lambda v: v["a_init"] in ("shifted", "vertex")),
    Control("V_init", "Values V(0)", "select", options=V_INITS, names=text.V_INIT_NAMES, half=True,
            help="Starting value matrix V (d \u00d7 n)."),
    Control("V_scale", "V(0) scale", "number", 0.0, 10.0, step=0.05, half=True, help="Scale of V(0).",
            applies=lambda v: v["V_init"] != "zeros"),
    Control("repulsion", "Repulsion panel", "radio", options=tuple(REPULSION_TITLES), group="Dashboard",
            names={"fitness": "fitness vs score", "replicator": "replicator bars u\u1d62 \u2212 s\u00b7u"},
            help="The dashboard's fourth panel: each token at (fitness, score), or each token's fitness "
                 "minus the mean fitness as a bar, playing with the rest (above zero: under softmax its "
                 "logit grows)."),
)
"""Every control of the Explorer, in sidebar order."""

DISPLAY_KEYS: tuple[str, ...] = ("repulsion",)
"""The controls that choose how the run is shown, not what is run."""
FIELD_KEYS: tuple[str, ...] = tuple(c.key for c in CONTROLS if c.key not in ("preset", *DISPLAY_KEYS))
"""The controls that are ``Experiment`` fields."""
_INTEGER = {c.key for c in CONTROLS if c.integer}


def preset_values(name: str | None = None) -> dict[str, Any]:
    """Every control's value for a preset (the default preset when None), as the widgets hold them."""
    name = name or DEFAULT_PRESET
    e = get_preset(name).experiment
    values: dict[str, Any] = {"preset": name}
    for key in FIELD_KEYS:
        value = getattr(e, key)
        values[key] = int(value) if key in _INTEGER else float(value) if isinstance(value, float) else value
    return values | {"repulsion": "fitness"}


def build_experiment(values: Mapping[str, Any]) -> Experiment:
    """The experiment of ``values["preset"]`` with the other values applied (``Preset.with_changes``).

    The tied model needs ``d == n``, so there ``d`` follows ``n``; a preset's own
    arrays are drawn afresh when the settings they stand for change.

    Raises
    ------
    ConfigError
        When the values clash (e.g. a temperature for a normalizer other than softmax).
    """
    preset = get_preset(values.get("preset") or DEFAULT_PRESET)
    base = preset.experiment
    merged = {k: values[k] for k in FIELD_KEYS if k in values}
    if base.model == "tied":
        merged["d"] = merged.get("n", base.n)
    return preset.with_changes(**{k: v for k, v in merged.items() if v != getattr(base, k)})


class Exploration(NamedTuple):
    """What the Explorer shows: the experiment to run and the repulsion panel's mode (the cache key)."""

    experiment: Experiment
    repulsion: str = "fitness"


def job(values: Mapping[str, Any]) -> Exploration | Problem:
    """What to run and show, or why a page will not run it (naming the fields): once per rerun."""
    if values["method"] == "gd":
        steps = round(values["horizon"] / values["lr"])
        if steps > MAX_GD_STEPS:
            return Problem(("horizon", "lr", "method"), (
                f"Gradient descent up to t = {format_time(values['horizon'])} with learning rate "
                f"{values['lr']:g} takes {steps:,} steps; the Explorer runs at most {MAX_GD_STEPS:,}. "
                "Lower the horizon, raise the learning rate, or use the exact flow."))
    try:
        return Exploration(build_experiment(values), values.get("repulsion", "fitness"))
    except ConfigError as exc:
        label = next((c.label for c in CONTROLS if c.key == exc.field), exc.field)
        return Problem((exc.field,), f"{label}: {config_reason(exc)}")


def undefined_start(resolved: Experiment) -> Problem | None:
    """Whether the normalizer is undefined at the (resolved) starting logits, naming the normalizer first."""
    try:
        resolved.sigma.forward(np.asarray(resolved.a0))
    except (DegenerateStateError, ConfigError) as exc:
        return Problem(("normalizer", "a_init", "a_scale", "a_shift"), (
            f"The {resolved.normalizer} normalizer is undefined at the starting logits ({exc}). "
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
            name = text.NORMALIZER_NAMES[values["normalizer"]].split(":")[0]
            return Mend(changes, (
                f"The normalizer {name} {trouble} {was}, so the logits now start at a(0) = {shift:g} + "
                f"{scale:g} \u00d7 randn (shift + scale \u00d7 randn, as in the paper's normalizer "
                "comparison); the address has the new start."))
    return None


def check(values: Mapping[str, Any]) -> Problem | None:
    """Why the Explorer will not run these values (the step cap, a clash, an undefined start), or None."""
    exploration = job(values)
    if isinstance(exploration, Problem):
        return exploration
    return undefined_start(exploration.experiment.resolved())


def explore(experiment: Experiment, repulsion: str = "fitness", *, timeout: float | None = None,
            frames: int | None = None) -> View:
    """Run an experiment (with a time limit) and make everything the Explorer shows; never raises.

    The arrays are drawn once (``resolved``), probed, then run as drawn. ``repulsion`` is the
    dashboard's repulsion panel mode (``plots.dashboard``). The engine has a budget just under
    the time limit (``budget.within``): a slow run stops by itself and is shown up to where it
    got, with advice that fits its settings (``overtime``).

    Parameters
    ----------
    timeout : float, optional
        The hard time limit in seconds (``runner.timeout_seconds()`` when omitted).

    Returns
    -------
    View
        ``error`` set when the run was refused, failed or timed out with nothing to show; a
        warning when it stopped early or ran out of time; ``data`` is the ``Result``.
    """
    start = time.perf_counter()
    try:
        limit = timeout_seconds() if timeout is None else float(timeout)
        resolved = experiment.resolved()
        problem = undefined_start(resolved)
        if problem:
            return View(error=problem.message)
        result = call_with_timeout(simulate_within, resolved, within(limit), timeout=limit)
    except RunTimeout as exc:
        return View(error=overtime.timed_out(exc.seconds, overtime.advice(experiment)))
    except Exception as exc:  # an engine bug must not become a traceback on the page
        return failure_view(exc)
    if result.status == OUT_OF_TIME and len(result.t) < 2:
        return View(error=f"This run did not get past its start in {limit:g} s. "
                          + overtime.advice(experiment))
    if len(result.t) == 0:
        return View(error=result.message or "The run saved nothing.")
    # Plain figure dicts: plotly's objects would cost several times the run (see ``dashboard_spec``).
    figure = dashboard_spec(result, repulsion=repulsion, **({} if frames is None else {"frames": frames}))
    verdict = judge(result)
    # The verdict is the run's end: said so before it, as the figure opens at the start.
    numbers = (Text(END_OF_RUN), Metric("Polarized?", text.VERDICT_WORDS[verdict.status], THRESHOLDS),
               Text(verdict.sentence), *(Metric(*m) for m in text.summary_metrics(result)))
    why = text.not_a_distribution(np.asarray(result.s[-1], dtype=float))
    if why:  # the dashes above, said in words where they show
        numbers = (*numbers[:3], Text(f"No entropy or winner: {why}."), *numbers[3:])
    dead = ~np.any(np.asarray(result.s) != 0, axis=1)
    dead_from = float(result.t[np.argmax(dead)]) if dead[-1] else None
    captions = text.panel_captions(experiment, repulsion=repulsion, dead_from=dead_from)
    blocks = (
        Columns(((Plot("dashboard", figure),), numbers), widths=(5, 1.15), gap="medium"),
        Columns(((Caption(captions[0]),), tuple(map(Caption, captions[1:3])),
                 tuple(map(Caption, captions[3:]))),
                widths=(0.34, 0.33, 0.33)),
    )
    return View(blocks=blocks, downloads=_downloads(result, figure, export.file_stem(experiment)),
                warnings=_warnings(result, limit),
                sidebar=text.init_note(experiment), data=result, seconds=time.perf_counter() - start,
                passing=result.status == OUT_OF_TIME)  # a run cut short may finish on a quieter server


def _warnings(result: Any, limit: float) -> tuple[str, ...]:
    """Why the run is not shown to its horizon (out of time under ``limit`` seconds: with advice)."""
    if result.status == OUT_OF_TIME:
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
    how = "gradient descent" if values["method"] == "gd" else "the exact flow"
    return (f"Simulating {how} of {values['n']} tokens to t = {format_time(values['horizon'])} "
            f"({text.LOSS_NAMES.get(values['loss'], values['loss'])} loss, {values['normalizer']})...")


EXPLORER = PageSpec(
    name="explorer", nav_title="Explorer", title="Explorer: does it polarize?",
    icon=":material/animation:",
    url_path="explorer", default=True, controls=CONTROLS, defaults=preset_values, job=job, check=check,
    mend=mend,
    view=lambda shown: explore(*shown), caption=caption, spinner=running,
    titled=lambda values: f"Explorer: does {values['normalizer']} polarize?")
