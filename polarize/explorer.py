"""The Explorer's logic, without Streamlit: controls, links, runs and verdicts.

The web pages only read widgets and show what this module returns:

- ``CONTROLS``: every control of the Explorer (key, label, kind, range, help);
  the keys are also the query-string keys of a shared link;
- ``parse_query``: a URL query (e.g. ``st.query_params``) into control values,
  with every unknown, invalid or clashing value reported and replaced by the
  preset's default, so that no link can crash the page;
- ``build_experiment``: control values into an ``Experiment`` (a preset with changes);
- ``to_query``: control values into the query string of a shareable link;
- ``explore``: run an experiment (with a time limit) and gather everything the
  page shows: the result, the animated dashboard, the numbers and the verdict;
- ``judge``: whether a run polarized, in plain words.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import plotly.graph_objects as go

from polarize.config import A_INITS, LOSSES, METHODS, V_INITS, ConfigError, Experiment
from polarize.diagnostics import Result
from polarize.normalizers import NORMALIZERS, DegenerateStateError, make_normalizer
from polarize.plots import dashboard
from polarize.presets import PRESETS, Preset, get_preset
from polarize.runner import RunTimeout, WorkerCrashed, run_with_timeout
from polarize.science import POLARIZED_SHARE, Verdict, format_time, judge

__all__ = [
    "CONTROLS",
    "DEFAULT_PRESET",
    "FIELD_KEYS",
    "HORIZONS",
    "MAX_GD_STEPS",
    "MAX_TOKENS",
    "POLARIZED_SHARE",
    "Control",
    "Exploration",
    "ExplorerState",
    "Verdict",
    "build_experiment",
    "changed_fields",
    "check_experiment",
    "describe_changes",
    "describe_failure",
    "explore",
    "format_value",
    "judge",
    "option_name",
    "panel_captions",
    "maths_figures",
    "parse_query",
    "pinned_arrays",
    "preset_values",
    "summary_metrics",
    "VERDICT_WORDS",
    "init_note",
    "is_tied",
    "to_query",
]

DEFAULT_PRESET = "default"


def _nice_horizons() -> tuple[float, ...]:
    """1, 2, 5 times each power of ten from 10 to 1e12, plus every preset's horizon."""
    values = {float(c * 10**k) for k in range(1, 13) for c in (1, 2, 5)}
    values = {v for v in values if v <= 1e12}
    values |= {float(p.experiment.horizon) for p in PRESETS.values()}
    return tuple(sorted(values))


HORIZONS: tuple[float, ...] = _nice_horizons()
"""The horizons the Explorer offers (a log scale)."""

MAX_TOKENS = 128
"""Largest ``n`` (and ``d``) offered by the Explorer's sliders."""

MAX_GD_STEPS = 200_000
"""Gradient-descent steps the Explorer runs at most (the engine allows more, but a page must stay quick)."""


@dataclass(frozen=True)
class Control:
    """One control of the Explorer: a widget and a query-string key.

    Attributes
    ----------
    key : str
        Widget key, query-string key and (except ``preset``) ``Experiment`` field.
    label : str
        Widget label.
    kind : {"int", "float", "choice"}
    low, high : float or None
        Inclusive range of numbers.
    options : tuple
        The choices (``kind == "choice"``), or the allowed numbers of a select slider.
    help : str
        Tooltip.
    names : mapping
        Display names of the options.
    """

    key: str
    label: str
    kind: str
    low: float | None = None
    high: float | None = None
    options: tuple[Any, ...] = ()
    help: str = ""
    names: Mapping[Any, str] = field(default_factory=dict)

    def parse(self, raw: Any) -> Any:
        """A query-string value as a control value.

        Parameters
        ----------
        raw : str (or a list of them: the last one counts)

        Returns
        -------
        int, float or str

        Raises
        ------
        ValueError
            With the reason in words, when ``raw`` is not an allowed value.
        """
        if isinstance(raw, (list, tuple)):
            if not raw:
                raise ValueError("has no value")
            raw = raw[-1]
        text = str(raw).strip()
        if self.kind == "choice":
            if text not in self.options:
                raise ValueError(f"must be one of {', '.join(map(str, self.options))}; got {text!r}")
            return text
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"must be a number; got {text!r}") from None
        if not math.isfinite(value):
            raise ValueError(f"must be a finite number; got {text!r}")
        if self.kind == "int":
            if not value.is_integer():
                raise ValueError(f"must be a whole number; got {text!r}")
            value = int(value)
        if self.options and not any(math.isclose(value, o, rel_tol=1e-9) for o in self.options):
            shown = ", ".join(format_time(o) for o in (self.options[0], self.options[-1]))
            raise ValueError(f"must be one of the offered values ({shown} and the 1-2-5 steps between); "
                             f"got {text!r}")
        if self.options:
            value = min(self.options, key=lambda o: abs(o - value))
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            raise ValueError(f"must be between {self.low:g} and {self.high:g}; got {text!r}")
        return value


_LOSS_NAMES = {"logistic": "logistic", "square": "square", "kl": "cross-entropy (KL)"}
_NORMALIZER_NAMES = {
    "softmax": "softmax", "sigmoid": "sigmoid", "relu": "ReLU / sum", "l1": "L1: |a| / sum |a|",
    "sum": "sum: a / sum a", "l2": "L2: a² / sum a²", "linear": "linear (identity)", "sparsemax": "sparsemax",
}
_A_INIT_NAMES = {"zeros": "zeros (uniform scores)", "gaussian": "scale \u00d7 randn",
                 "shifted": "shift + scale \u00d7 randn", "vertex": "near a vertex"}
_V_INIT_NAMES = {"gaussian": "scale \u00d7 randn", "zeros": "zeros",
                 "identity": "scale \u00d7 identity"}

CONTROLS: dict[str, Control] = {c.key: c for c in (
    Control("preset", "Preset", "choice", options=tuple(PRESETS),
            help="A named experiment; the paper's toy runs use its own random draws."),
    Control("n", "Tokens n", "int", 2, MAX_TOKENS,
            help="Number of tokens: the logits a and scores s have n entries."),
    Control("d", "Value dimension d", "int", 1, MAX_TOKENS,
            help="Rows of V (the number of classes for the cross-entropy loss)."),
    Control("loss", "Loss", "choice", options=LOSSES, names=_LOSS_NAMES,
            help="Logistic on the margin β*ᵀVs; square ½|Vs \u2212 β*|²; "
                 "cross-entropy of softmax(Vs) against p*."),
    Control("normalizer", "Normalizer \u03c3", "choice", options=tuple(NORMALIZERS),
            names=_NORMALIZER_NAMES,
            help="How logits become scores s = \u03c3(a). Only softmax has the replicator form."),
    Control("temperature", "Temperature", "float", 0.05, 20.0,
            help="Softmax temperature: s = softmax(a / T)."),
    Control("method", "Method", "choice", options=METHODS,
            names={"flow": "gradient flow (exact)", "gd": "gradient descent"},
            help="The exact flow, or gradient descent with the learning rate below."),
    Control("lr", "Learning rate", "float", 1e-4, 10.0,
            help="Step of gradient descent (time t = steps \u00d7 lr). "
                 "The flow records its first time at t = lr."),
    Control("horizon", "Horizon (final time)", "float", HORIZONS[0], HORIZONS[-1], options=HORIZONS,
            help="How long to run, on a log scale. "
                 "Polarization under the logistic loss is slow: like 1/log² t."),
    Control("seed", "Seed", "int", 0, 2**32 - 1, help="Seed of every random draw (V, a, β*)."),
    Control("a_init", "Logits a(0)", "choice", options=A_INITS, names=_A_INIT_NAMES,
            help="Starting logits; zeros start from uniform scores."),
    Control("a_scale", "a(0) scale", "float", 0.0, 10.0, help="Scale of the random part of a(0)."),
    Control("a_shift", "a(0) shift", "float", -10.0, 10.0,
            help="Added to every logit (shifted), or to token 0's logit (near a vertex)."),
    Control("V_init", "Values V(0)", "choice", options=V_INITS, names=_V_INIT_NAMES,
            help="Starting value matrix V (d \u00d7 n)."),
    Control("V_scale", "V(0) scale", "float", 0.0, 10.0, help="Scale of V(0)."),
)}
"""Every control of the Explorer, by key, in sidebar order."""

FIELD_KEYS: tuple[str, ...] = tuple(k for k in CONTROLS if k != "preset")
"""The controls that are ``Experiment`` fields."""



# ---- values, experiments and links ---------------------------------------------------------


def preset_values(name: str) -> dict[str, Any]:
    """The control values of a preset.

    Parameters
    ----------
    name : str
        A key of ``PRESETS``.

    Returns
    -------
    dict
        ``FIELD_KEYS`` -> value (int, float or str), as the widgets hold them.
    """
    e = get_preset(name).experiment
    return {k: _widget_value(k, getattr(e, k)) for k in FIELD_KEYS}


def _widget_value(key: str, value: Any) -> Any:
    kind = CONTROLS[key].kind
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    return value


def pinned_arrays(name: str) -> tuple[str, ...]:
    """The arrays a preset gives explicitly (its own draws), e.g. ``("a0", "V0", "target")``."""
    e = get_preset(name).experiment
    return tuple(k for k in ("a0", "V0", "target", "X", "y") if getattr(e, k) is not None)


def changed_fields(name: str, values: Mapping[str, Any]) -> list[str]:
    """The controls whose values differ from the preset's, in sidebar order."""
    base = preset_values(name)
    return [k for k in FIELD_KEYS if k in values and values[k] != base[k]]


def build_experiment(name: str, values: Mapping[str, Any]) -> Experiment:
    """The experiment of a preset with the control values applied.

    The tied model needs ``d == n``, so there ``d`` follows ``n``. The preset's
    explicit arrays are dropped (and drawn afresh from the seed) when the
    settings they stand for change (``Preset.with_changes``).

    Parameters
    ----------
    name : str
        A key of ``PRESETS``.
    values : mapping
        Control values (a subset of ``FIELD_KEYS``; missing ones keep the preset's).

    Returns
    -------
    Experiment

    Raises
    ------
    ConfigError
        When the values clash (e.g. gradient descent with too many steps).
    """
    preset: Preset = get_preset(name)
    base = preset.experiment
    merged = {**preset_values(name), **{k: v for k, v in values.items() if k in FIELD_KEYS}}
    if base.model == "tied":
        merged["d"] = merged["n"]
    return preset.with_changes(**{k: v for k, v in merged.items() if v != getattr(base, k)})


def check_experiment(experiment: Experiment) -> str | None:
    """Why the Explorer will not run an experiment, in words; None when it will.

    Checks what the engine accepts but a web page should not attempt (too many
    gradient-descent steps) and starting points where the normalizer is undefined.

    Parameters
    ----------
    experiment : Experiment

    Returns
    -------
    str or None
    """
    if experiment.method == "gd":
        steps = round(experiment.horizon / experiment.lr)
        if steps > MAX_GD_STEPS:
            return (f"Gradient descent up to t = {format_time(experiment.horizon)} with learning rate "
                    f"{experiment.lr:g} takes {steps:,} steps; the Explorer runs at most {MAX_GD_STEPS:,}. "
                    "Lower the horizon, raise the learning rate, or use the exact flow.")
    try:
        a0 = np.asarray(experiment.resolved().a0)
        make_normalizer(experiment.normalizer, temperature=experiment.temperature).forward(a0)
    except (DegenerateStateError, ConfigError) as exc:
        return (f"The {experiment.normalizer} normalizer is undefined at the starting logits ({exc}). "
                "Choose another start for the logits, e.g. shift + scale \u00d7 randn.")
    return None


@dataclass(frozen=True)
class ExplorerState:
    """Control values read from a link.

    Attributes
    ----------
    preset : str
    values : dict
        ``FIELD_KEYS`` -> value: the link's valid values over the preset's.
    ignored : dict
        Query key -> why it was ignored, in words (empty for a clean link).
    """

    preset: str
    values: dict[str, Any]
    ignored: dict[str, str]


def parse_query(query: Mapping[str, Any]) -> ExplorerState:
    """Read control values from a URL query; never raises.

    Parameters
    ----------
    query : mapping of str to str (or to a list of str: the last one counts)
        E.g. ``st.query_params.to_dict()``.

    Returns
    -------
    ExplorerState
        Unknown keys, values of the wrong type or out of range, and values
        that clash with the others (e.g. a temperature for a normalizer other
        than softmax) are left out and listed in ``ignored``; the preset's
        values stand in for them.
    """
    ignored: dict[str, str] = {}
    for key in query:
        if key not in CONTROLS:
            ignored[key] = "is not a setting of the Explorer"
    name = DEFAULT_PRESET
    if "preset" in query:
        try:
            name = CONTROLS["preset"].parse(query["preset"])
        except ValueError as exc:
            ignored["preset"] = str(exc)
    candidate: dict[str, Any] = {}
    for key in FIELD_KEYS:
        if key in query:
            try:
                candidate[key] = CONTROLS[key].parse(query[key])
            except ValueError as exc:
                ignored[key] = str(exc)
    while True:
        try:
            experiment = build_experiment(name, candidate)
        except ConfigError as exc:
            culprit = exc.field if exc.field in candidate else next(reversed(candidate), None)
            if culprit is None:  # pragma: no cover - a preset that is itself invalid
                raise
            ignored[culprit] = _reason(exc)
            del candidate[culprit]
            continue
        problem = check_experiment(experiment)
        if problem and candidate:
            # Drop the link's values one at a time, latest first, until the run is possible.
            culprit = next(reversed(candidate))
            ignored[culprit] = f"cannot be used with the other settings: {problem}"
            del candidate[culprit]
            continue
        break
    return ExplorerState(preset=name, values={**preset_values(name), **candidate}, ignored=ignored)


def _reason(exc: ConfigError) -> str:
    text = str(exc)
    prefix = f"{exc.field}: "
    return text[len(prefix):] if text.startswith(prefix) else text


def format_value(value: Any) -> str:
    """The shortest exact text of a control value for a URL (``1e12``, ``0.1``, ``8``, ``softmax``).

    Exponents are written without ``+`` (which a query string would read as a space).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    value = float(value)
    if value.is_integer() and abs(value) < 1e6:
        return str(int(value))
    plain = str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value).replace("e+", "e")
    for digits in range(17):
        text = f"{value:.{digits}e}"
        if float(text) == value:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}e{int(exponent)}"
            # Plain decimals unless the exponent form is clearly shorter (1e12, not 2e-3).
            return text if len(text) + 2 < len(plain) else plain
    return plain


def to_query(name: str, values: Mapping[str, Any]) -> dict[str, str]:
    """The query string of a link to these settings: every control, as text.

    Parameters
    ----------
    name : str
        Preset name.
    values : mapping
        ``FIELD_KEYS`` -> value.

    Returns
    -------
    dict of str to str
        ``preset`` then every field key, in sidebar order.
    """
    out = {"preset": name}
    for key in FIELD_KEYS:
        if key in values:
            out[key] = format_value(values[key])
    return out


# ---- one run, everything the page shows ------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Exploration:
    """Everything the Explorer shows for one experiment.

    Attributes
    ----------
    experiment : Experiment
        As requested (``result.experiment`` is the resolved one, with its draws).
    result : Result or None
        None when the run could not be made (see ``error``).
    figure : plotly.graph_objects.Figure or None
        The animated dashboard (``figures.dashboard``); do not modify it, it may be
        shared through a cache.
    verdict : Verdict or None
    error : str or None
        Why there is no result, in words.
    warning : str or None
        Why the run stopped early, in words.
    seconds : float
        Wall time of the run and the figure.
    """

    experiment: Experiment
    result: Result | None = None
    figure: go.Figure | None = None
    verdict: Verdict | None = None
    error: str | None = None
    warning: str | None = None
    seconds: float = 0.0


def explore(experiment: Experiment, *, timeout: float | None = None,
            frames: int | None = None) -> Exploration:
    """Run an experiment (with a time limit) and build what the Explorer shows; never raises.

    Parameters
    ----------
    experiment : Experiment
    timeout : float, optional
        Seconds before the run is stopped (``runner.timeout_seconds()`` by default).
    frames : int, optional
        Animation frames (``figures.FRAMES`` by default).

    Returns
    -------
    Exploration
        With ``error`` set (and no result) when the run was refused, failed or
        timed out; with ``warning`` set when it stopped early.
    """
    start = time.perf_counter()
    problem = check_experiment(experiment)
    if problem:
        return Exploration(experiment, error=problem)
    try:
        result = run_with_timeout(experiment, timeout)
    except Exception as exc:  # an engine bug must not become a traceback on the page
        return Exploration(experiment, error=describe_failure(exc))
    if len(result.t) == 0:
        return Exploration(experiment, result=None, error=result.message or "The run saved nothing.")
    figure = dashboard(result, **({} if frames is None else {"frames": frames}))
    warning = None if result.finished else f"The run stopped early: {result.message}"
    return Exploration(experiment, result=result, figure=figure, verdict=judge(result), warning=warning,
                       seconds=time.perf_counter() - start)


def describe_failure(exc: BaseException) -> str:
    """Why a run (or a study of several runs) could not be made, in words for the page.

    Parameters
    ----------
    exc : exception
        As raised by ``runner.run_with_timeout`` or ``runner.call_with_timeout``.

    Returns
    -------
    str
    """
    if isinstance(exc, RunTimeout):
        return (f"This run took longer than {exc.seconds:g} s and was stopped. Try a shorter horizon, "
                "fewer tokens, or the exact flow instead of gradient descent.")
    if isinstance(exc, (ConfigError, DegenerateStateError)):
        return f"The engine cannot run this: {exc}"
    if isinstance(exc, WorkerCrashed):
        return f"The run failed: {exc}. Try smaller settings."
    return f"The engine failed on this run ({type(exc).__name__}: {exc})."


def describe_changes(name: str, values: Mapping[str, Any]) -> str:
    """A short note of how the settings differ from the preset (empty when they do not)."""
    changed = changed_fields(name, values)
    if not changed:
        return ""
    return "changed from the preset: " + ", ".join(CONTROLS[k].label.lower() for k in changed)


def option_name(key: str, option: Any) -> str:
    """Display name of an option of a choice control (``format_func`` for a widget)."""
    control = CONTROLS[key]
    if key == "horizon":
        return format_time(float(option))
    return control.names.get(option, str(option))


VERDICT_WORDS = {"yes": "Yes", "partly": "Partly", "no": "No"}
"""The one-word answer to "Polarized?" for each verdict status."""


def summary_metrics(result: Result) -> list[tuple[str, str, str]]:
    """The final numbers shown beside the dashboard.

    Parameters
    ----------
    result : Result

    Returns
    -------
    list of (label, value, help) str triples
        Final entropy, winning token, ``1 - max s``, final loss and the time reached.
    """
    n = result.s.shape[1]
    return [
        ("Final entropy", f"{result.entropy[-1]:.3g}",
         f"Entropy of the final scores, in nats; uniform scores have log n = {math.log(n):.3g}, one-hot 0."),
        ("Winning token", f"{result.winner}",
         "The token with the largest final score (tokens count from 0)."),
        ("1 \u2212 max s", f"{result.one_minus_max[-1]:.3g}",
         "The weight left for all tokens but the winner: 0 at a vertex of the simplex."),
        ("Final loss", f"{result.loss[-1]:.3g}", "The loss at the last saved time."),
        ("Time reached", format_time(float(result.t[-1])), "The last saved time t."),
    ]


def is_tied(name: str) -> bool:
    """Whether a preset uses the tied model (where ``d`` must equal ``n``)."""
    return get_preset(name).experiment.model == "tied"


def init_note(name: str, values: Mapping[str, Any]) -> str:
    """A note on the starting arrays when a preset's own draws are in use (empty otherwise).

    The paper's presets give their starting arrays explicitly; their init
    controls then do not describe them, so the page says so.
    """
    pinned = pinned_arrays(name)
    if not pinned:
        return ""
    try:
        experiment = build_experiment(name, values)
    except ConfigError:
        return ""
    kept = [k for k in pinned if getattr(experiment, k) is not None]
    if not kept:
        return ""
    return (f"Starting from the preset's own arrays ({', '.join(kept)}), as in the paper; the init settings "
            "above do not describe them. Changing the seed, n, d, the loss or an init setting draws "
            "fresh ones.")


def panel_captions(experiment: Experiment) -> dict[str, str]:
    """What to notice in each panel of the dashboard, in a sentence or two.

    Parameters
    ----------
    experiment : Experiment

    Returns
    -------
    dict
        ``figures.PANELS`` key -> caption (markdown with ``$...$`` maths).
    """
    logistic = experiment.loss == "logistic"
    on_simplex = NORMALIZERS[experiment.normalizer].on_simplex
    simplex = ("Each corner is a token, the centre is uniform scores. Polarization is the point running "
               "into one corner (a one-hot $s$); the dark comet tail shows the last moments.")
    if not on_simplex:
        simplex += f" ({experiment.normalizer} scores need not sum to 1: the point shows their shares.)"
    repulsion = (r"Each token at (fitness $u_i$, score $s_i$). Softmax moves the logits as "
                 r"$\dot a_i = s_i\,(u_i - s\cdot u)$: tokens right of the dashed mean gain share, "
                 "and the gaps widen (rich get richer).")
    if logistic:
        repulsion += (r" Diamonds: value projections $p_i = v_i\cdot\beta^*$; circles: fitness "
                      r"$u_i = c\,p_i$, which shrinks as the loss vanishes while the spread in $p$ "
                      "keeps growing.")
    loss = ("Log-log axes. The logistic loss decays like $1/t$ and never reaches 0, so the flow never stops "
            "pushing." if logistic else
            "Log-log axes. Once the loss has (nearly) converged, the fitness vanishes and the scores freeze "
            "where they are: polarization stays partial.")
    return {
        "simplex": simplex,
        "scores": ("One line per token, on log time. The leader's share grows and the others fade; under "
                   r"the logistic loss they shrink slowly, like $1/\log^2 t$."),
        "entropy": (r"Starts at $\log n$ (uniform, dashed) and falls toward 0 when $s$ polarizes; "
                    r"it stays near $\log n$ when it does not."),
        "repulsion": repulsion,
        "loss": loss,
    }


def maths_figures() -> dict[str, dict[str, Any]]:
    """The small live figures of the "About the maths" page, as plotly figure dicts.

    Returns
    -------
    dict
        ``"scores"``: each ``s_i(t)`` of a logistic run on log-log axes;
        ``"rate"``: ``1 - max s`` against the sharp asymptotics ``2(n-1)/(n z^2)`` and
        the theorem's ``1/log t``; ``"normalizers"``: the entropy under softmax,
        sigmoid, linear and ReLU from the same start; ``"losses"``: the entropy under
        the logistic, square and cross-entropy losses.
    """
    from polarize.integrate import simulate
    from polarize.plots import comparison_figure, scores_figure
    from polarize.science import compare_normalizers, polarization_rate

    logistic = simulate(Experiment(n=5, d=5, horizon=1e12, seed=1))
    scores = scores_figure(logistic, log_y=True)
    rate = polarization_rate(logistic)
    rate_fig = comparison_figure({}, "one_minus_max", log_y=True)
    for name, values, dash in (("1 \u2212 max s (run)", rate.gap, "solid"),
                               ("2(n\u22121)/(n z\u00b2)", rate.sharp, "dash"),
                               ("theorem: C / log t", rate.theorem, "dot")):
        rate_fig.add_scatter(x=rate.t.tolist(), y=values.tolist(), mode="lines", name=name,
                             line=dict(width=3, dash=dash))
    # The asymptotic curves blow up at early times: show the range of the run's own gap.
    low = math.log10(float(np.min(rate.gap[rate.gap > 0])))
    rate_fig.update_yaxes(range=[low - 0.3, 0.3], tick0=0, dtick=1)
    rate_fig.update_xaxes(tick0=0, dtick=2)
    rows = compare_normalizers(get_preset("paper-compare-logistic").experiment,
                               names=("softmax", "sigmoid", "linear", "relu"))
    n = rows[0].result.s.shape[1]
    normalizers = comparison_figure({r.normalizer: r.result for r in rows}, "entropy",
                                    reference=[math.log(n)])
    losses = comparison_figure(
        {loss: simulate(Experiment(loss=loss, horizon=1e6, a_init="gaussian", a_scale=0.5))
         for loss in ("logistic", "square", "kl")}, "entropy", reference=[math.log(8)])
    return {"scores": scores.to_dict(), "rate": rate_fig.to_dict(), "normalizers": normalizers.to_dict(),
            "losses": losses.to_dict()}
