"""The Explorer's controls and how their values make an experiment: shared by every page of runs.

``CONTROLS`` are the fields of an ``Experiment`` over a preset (and the dashboard's one display
choice), ``preset_values`` their values for a preset, ``build_experiment`` the experiment they make.
The Explorer shows them all; the comparison pages (``polarize.web.study``) take some of them,
changed. Below the pages: a page imports this, never another page.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from polarize.config import A_INITS, V_INITS, Experiment
from polarize.losses import LOSSES
from polarize.methods import METHODS
from polarize.models import MODELS
from polarize.normalizers import NORMALIZERS, takes
from polarize.plots.replicator import REPULSION_TITLES
from polarize.presets import PRESETS, get_preset
from polarize.science import format_time
from polarize.web import text
from polarize.web.controls import Control

__all__ = ["CONTROLS", "DEFAULT_PRESET", "DISPLAY_KEYS", "FIELD_KEYS", "HORIZONS", "MAX_GD_STEPS",
           "MAX_TOKENS", "VERDICT_TIMES", "build_experiment", "is_tied", "preset_values"]

DEFAULT_PRESET = "default"
VERDICT_TIMES = ("now", "after")
"""When the Explorer shows its verdict: beside the figure (``now``), or folded until asked (``after``)."""
MAX_TOKENS = 128
"""Largest ``n`` (and ``d``) offered by the Explorer's sliders."""
MAX_GD_STEPS = 200_000
"""Gradient-descent steps a page runs at most (the engine allows more, but a page must stay quick)."""
def _nice_horizons() -> tuple[float, ...]:
    """1, 2, 5 times each power of ten from 10 to 1e12, plus every preset's horizon."""
    values = {float(c * 10**k) for k in range(1, 13) for c in (1, 2, 5)}
    values = {v for v in values if v <= 1e12}
    values |= {float(p.experiment.horizon) for p in PRESETS.values()}
    return tuple(sorted(values))


HORIZONS: tuple[float, ...] = _nice_horizons()
"""The horizons the pages offer (a log scale)."""


def is_tied(name: str) -> bool:
    """Whether a preset uses a tied model (``Model.tied``: ``d`` must equal ``n``)."""
    return MODELS[get_preset(name).experiment.model].tied


CONTROLS: tuple[Control, ...] = (
    # A newcomer's first changes at the top (issue 45): what is run, then the preset and the rest.
    Control("n", "Tokens n", "slider", 2, MAX_TOKENS, integer=True,
            help="Number of tokens: the logits a and scores s have n entries."),
    Control("loss", "Loss", "select", options=LOSSES.names, names=LOSSES.labels,
            help="Logistic on the margin β*ᵀVs; square ½|Vs \u2212 β*|²; "
                 "cross-entropy of softmax(Vs) against p*."),
    Control("normalizer", "Normalizer \u03c3", "select", options=NORMALIZERS.names,
            names=NORMALIZERS.labels,
            help="How logits become scores s = \u03c3(a). Only softmax has the replicator form."),
    Control("seed", "Seed", "number", 0, 2**32 - 1, step=1, integer=True,
            help="Seed of every random draw (V, a, β*)."),
    Control("preset", "Preset", "select", options=tuple(PRESETS),
            help="A named experiment; the paper's toy runs use its own random draws.",
            caption=lambda name: PRESETS[name].description),
    Control("d", "Value dimension d", "slider", 1, MAX_TOKENS, integer=True,
            help="Rows of V (the number of classes for the cross-entropy loss).",
            derive=lambda v: v["n"] if is_tied(v["preset"]) else None,
            off_help=" The tied model needs d = n."),
    Control("temperature", "Temperature", "number", 0.05, 20.0, step=0.1,
            help="Softmax temperature: s = softmax(a / T).",
            derive=lambda v: None if takes(v["normalizer"], "temperature") else 1.0,
            off_help=" (softmax only)"),
    Control("method", "Method", "radio", options=METHODS.names, names=METHODS.labels,
            help="The exact flow, or gradient descent with the learning rate below."),
    Control("lr", "Learning rate", "number", 1e-4, 10.0, step=0.01,
            help="Step of gradient descent (time t = steps \u00d7 lr). "
                 "The flow records its first time at t = lr.",
            applies=lambda v: METHODS[v["method"]].stepped),
    Control("horizon", "Horizon (final time)", "select_slider", options=HORIZONS, names_of=format_time,
            help="How long to run, on a log scale. "
                 "Polarization under the logistic loss is slow: like 1/log² t."),
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
    Control("verdict", "Verdict", "radio", options=VERDICT_TIMES,
            names={"now": "beside the figure", "after": "kept for after Play"},
            help="Whether the verdict and the final numbers (the end of the run) show beside the figure, "
                 "or stay folded until you open them: a lecturer can play the run first and ask the "
                 "room what it will do."),
)
"""Every control of the Explorer, in sidebar order."""

DISPLAY_KEYS: tuple[str, ...] = ("repulsion", "verdict")
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
    return values | {"repulsion": "fitness", "verdict": "now"}


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
    if MODELS[base.model].tied:
        merged["d"] = merged.get("n", base.n)
    return preset.with_changes(**{k: v for k, v in merged.items() if v != getattr(base, k)})
