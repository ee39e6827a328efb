"""The comparison pages' logic, without Streamlit: controls, links, studies and what each page shows.

Every comparison page is described by a ``PageSpec`` in ``PAGES``: its controls
(which are also the keys of its shareable link), their defaults, a check that
names the faulty field, the study to run (in a worker process, under the
runner's time limit) and how to draw it. ``compare(name, values)`` returns a
``Comparison``: everything the page shows (figures with captions, a table,
notes in words, numbers, and the data to download); it never raises.
``parse_page_query`` reads a link, reporting every value it had to ignore.

The pages:

- ``normalizers``: one start under every normalizer, small multiples that play together;
- ``losses``: logistic, square and cross-entropy from one start, and the regression against ``kappa``;
- ``tied``: the tied model (massive activations) for several sizes ``D``;
- ``descent``: the exact flow against gradient descent at several step sizes;
- ``rates``: how slowly ``1 - max s`` shrinks, against the theory.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import plotly.graph_objects as go

from polarize import explorer as ex
from polarize.config import ConfigError, Experiment
from polarize.diagnostics import Result
from polarize.integrate import simulate
from polarize.losses import entropy as entropy_of
from polarize.plots import grid as cf
from polarize.presets import PAPER_KAPPAS, PAPER_TIED_SIZES, get_preset, paper_regression, paper_tied
from polarize.runner import call_with_timeout
from polarize.science import compare_normalizers, flow_vs_descent, format_time, polarization_rate

__all__ = [
    "PAGES",
    "Comparison",
    "ListControl",
    "PageSpec",
    "Shown",
    "compare",
    "parse_page_query",
    "preset_defaults",
    "to_page_query",
]

C = ex.CONTROLS


@dataclass(frozen=True)
class ListControl(ex.Control):
    """A control holding several of its ``options`` (a multiselect; ``1,2,5`` in a link).

    ``kind`` is ``"list"``; the items are ints when all options are, floats otherwise.
    """

    most: int = 6
    """Largest number of items."""

    def parse(self, raw: Any) -> tuple[Any, ...]:
        """A query-string value (``"10,20,50"``) as a sorted tuple of options.

        Raises
        ------
        ValueError
            With the reason in words: an item that is not an option, none, or too many.
        """
        if isinstance(raw, (list, tuple)):
            raw = ",".join(map(str, raw))
        items = [part.strip() for part in str(raw).split(",") if part.strip()]
        if not items:
            raise ValueError("has no value")
        out = []
        for item in items:
            try:
                value = float(item)
            except ValueError:
                raise ValueError(f"must be numbers separated by commas; got {item!r}") from None
            match = [o for o in self.options if math.isclose(value, o, rel_tol=1e-9)]
            if not match:
                raise ValueError(f"must be among {', '.join(f'{o:g}' for o in self.options)}; got {item!r}")
            out.append(match[0])
        if len(set(out)) > self.most:
            raise ValueError(f"takes at most {self.most} values; got {len(set(out))}")
        return tuple(sorted(set(out)))


@dataclass(frozen=True, eq=False)
class Shown:
    """One figure of a page with its caption (what to notice)."""

    key: str
    figure: go.Figure
    caption: str


@dataclass(frozen=True, eq=False)
class Comparison:
    """Everything a comparison page shows for one setting of its controls.

    Attributes
    ----------
    page : str
    values : dict
        The control values.
    figures : tuple of Shown
    table : list of dict, or None
        Rows of the page's table (column -> value).
    notes : tuple of str
        Runs that stopped early or diverged, in words.
    metrics : tuple of (label, value, help) str triples
    runs : dict of str to Result
        Every run behind the figures, for the JSON download.
    error : str or None
        Why there is nothing to show, in words.
    seconds : float
    """

    page: str
    values: dict[str, Any]
    figures: tuple[Shown, ...] = ()
    table: list[dict[str, Any]] | None = None
    notes: tuple[str, ...] = ()
    metrics: tuple[tuple[str, str, str], ...] = ()
    runs: dict[str, Result] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0

    @property
    def stem(self) -> str:
        """A file name stem for the downloads, e.g. ``polarize-normalizers``."""
        return f"polarize-{self.page}"

    def data_json(self) -> str:
        """Every run as JSON: the settings, then each ``Result.to_dict`` (non-finite numbers as null)."""
        data = {"page": self.page, "settings": self.values, "table": self.table,
                "runs": {label: r.to_dict() for label, r in self.runs.items()}}
        return json.dumps(_finite(data))

    def table_csv(self) -> str:
        """The table (or, without one, the final numbers of every run) as CSV."""
        rows = self.table or [{"run": label, "final_entropy": float(r.entropy[-1]),
                               "final_max_s": float(np.max(r.s[-1])), "final_loss": float(r.loss[-1]),
                               "t_reached": float(r.t[-1]), "status": r.status}
                              for label, r in self.runs.items()]
        out = io.StringIO()
        columns = list(rows[0]) if rows else []
        out.write(",".join(columns) + "\n")
        for row in rows:
            out.write(",".join(_csv_cell(row[c]) for c in columns) + "\n")
        return out.getvalue()


def _finite(value: Any) -> Any:
    """``value`` with numpy scalars made Python ones and non-finite floats None (strict JSON)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _csv_cell(value: Any) -> str:
    text = repr(float(value)) if isinstance(value, (float, np.floating)) else str(value)
    return f'"{text}"' if any(ch in text for ch in ',"\n') else text


@dataclass(frozen=True)
class PageSpec:
    """One comparison page.

    Attributes
    ----------
    name : str
        Short name (``"normalizers"``), also in file names.
    title : str
    intro : str
        A sentence or two of markdown under the title.
    controls : dict of str to Control
        Link key -> control, in sidebar order (``preset`` first when there is one).
    defaults : callable
        ``defaults(preset)`` -> the control values (``preset`` is None on pages without presets).
    check : callable
        ``check(values)`` -> why these values cannot be run (naming the field), or None.
    study : callable
        ``study(values)`` -> (module-level function, arguments) to run in a worker.
    draw : callable
        ``draw(values, outcome)`` -> Comparison, from what the study returned.
    """

    name: str
    title: str
    intro: str
    controls: dict[str, ex.Control]
    defaults: Callable[[str | None], dict[str, Any]]
    check: Callable[[Mapping[str, Any]], str | None]
    study: Callable[[Mapping[str, Any]], tuple[Callable[..., Any], tuple[Any, ...]]]
    draw: Callable[[Mapping[str, Any], Any], Comparison]

    @property
    def has_preset(self) -> bool:
        return "preset" in self.controls


# ---- links ------------------------------------------------------------------------------------


def preset_defaults(spec: PageSpec, preset: str | None = None) -> dict[str, Any]:
    """The page's default control values (of ``preset``, or of the page's first preset)."""
    if spec.has_preset:
        preset = preset if preset in spec.controls["preset"].options else spec.controls["preset"].options[0]
        return {"preset": preset, **spec.defaults(preset)}
    return spec.defaults(None)


def parse_page_query(spec: PageSpec, query: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Read a page's control values from a URL query; never raises.

    Parameters
    ----------
    spec : PageSpec
    query : mapping of str to str (or list of str)
        E.g. ``st.query_params.to_dict()``.

    Returns
    -------
    values : dict
        Every control of the page: the link's usable values over the defaults.
    ignored : dict
        Query key -> why it was ignored (unknown, invalid, or clashing with the others).
    """
    ignored = {key: "is not a setting of this page" for key in query if key not in spec.controls}
    preset = None
    if spec.has_preset and "preset" in query:
        try:
            preset = spec.controls["preset"].parse(query["preset"])
        except ValueError as exc:
            ignored["preset"] = str(exc)
    values = preset_defaults(spec, preset)
    candidate: dict[str, Any] = {}
    for key, control in spec.controls.items():
        if key in query and key != "preset":
            try:
                candidate[key] = control.parse(query[key])
            except ValueError as exc:
                ignored[key] = str(exc)
    while candidate:
        problem = spec.check({**values, **candidate})
        if problem is None:
            break
        culprit = next(reversed(candidate))  # drop the link's values one at a time, latest first
        ignored[culprit] = f"cannot be used with the other settings: {problem}"
        del candidate[culprit]
    return {**values, **candidate}, ignored


def to_page_query(spec: PageSpec, values: Mapping[str, Any]) -> dict[str, str]:
    """The query string of a link to these values (lists as ``10,20,50``)."""
    out = {}
    for key in spec.controls:
        if key in values:
            value = values[key]
            out[key] = (",".join(ex.format_value(v) for v in value) if isinstance(value, (list, tuple))
                        else ex.format_value(value))
    return out


# ---- running a page ---------------------------------------------------------------------------


def compare(name: str, values: Mapping[str, Any], *, timeout: float | None = None) -> Comparison:
    """Run a page's study (with a time limit) and build what the page shows; never raises.

    Parameters
    ----------
    name : str
        A key of ``PAGES``.
    values : mapping
        The page's control values; missing ones take the defaults (of the preset given, if any).
    timeout : float, optional
        Seconds for the whole study (``runner.timeout_seconds()`` by default).

    Returns
    -------
    Comparison
        With ``error`` set (and nothing to draw) when the values are refused or the study failed.
    """
    start = time.perf_counter()
    spec = PAGES[name]
    values = {**preset_defaults(spec, values.get("preset")), **values}
    problem = spec.check(values)
    if problem:
        return Comparison(page=name, values=values, error=problem)
    try:
        function, args = spec.study(values)
        outcome = call_with_timeout(function, *args, timeout=timeout)
    except Exception as exc:  # an engine failure must not become a traceback on the page
        return Comparison(page=name, values=values, error=ex.describe_failure(exc))
    view = spec.draw(values, outcome)
    return dataclasses.replace(view, seconds=time.perf_counter() - start)


def _gd_problem(values: Mapping[str, Any], lrs: tuple[float, ...], label: str) -> str | None:
    """Why gradient descent at these step sizes would take too many steps (naming ``label``), or None."""
    for lr in lrs:
        steps = round(values["horizon"] / lr)
        if steps > ex.MAX_GD_STEPS:
            return (f"{label}: gradient descent with lr = {lr:g} up to t = {format_time(values['horizon'])} "
                    f"takes {steps:,} steps; this page runs at most {ex.MAX_GD_STEPS:,}. Lower the horizon "
                    "or raise the learning rate.")
    return None


def _field_error(exc: ConfigError) -> str:
    label = C[exc.field].label if exc.field in C else exc.field
    return f"{label}: {ex._reason(exc)}"


def _stopped_notes(runs: Mapping[str, Result]) -> tuple[str, ...]:
    return tuple(f"{label}: the run stopped early at t = {format_time(float(r.t[-1]))} ({r.message}); "
                 "it is drawn up to there." for label, r in runs.items() if not r.finished)


# ---- page 1: normalizers --------------------------------------------------------------------------

_COMPARE_PRESETS = ("paper-compare-logistic", "paper-compare-square")
_NORMALIZER_KEYS = ("loss", "method", "lr", "horizon", "seed")


def _normalizer_experiment(values: Mapping[str, Any]) -> Experiment:
    return ex.build_experiment(values["preset"], {k: values[k] for k in _NORMALIZER_KEYS})


def _normalizer_check(values: Mapping[str, Any]) -> str | None:
    try:
        experiment = _normalizer_experiment(values)
    except ConfigError as exc:
        return _field_error(exc)
    if experiment.method == "gd":
        return _gd_problem(values, (experiment.lr,), "Learning rate")
    return None


def _normalizer_draw(values: Mapping[str, Any], rows: list[Any]) -> Comparison:
    table = [{"normalizer": r.normalizer, "final entropy": round(r.entropy, 4) + 0.0,
              "max s": round(r.max_s, 4), "loss": f"{r.loss:.3g}", "on simplex": r.on_simplex,
              "status": r.result.status, "message": r.result.message} for r in rows]
    runs = {r.normalizer: r.result for r in rows}
    n = rows[0].result.s.shape[1]
    figure = Shown("grid", cf.normalizers_figure(rows), (
        f"The same start (n = {n}) under each normalizer; press Play and the eight panels run together, "
        "evenly in log time. Softmax picks one token and drives it to 1 (rich get richer); sigmoid and "
        "linear scores keep every token alive; ReLU, L2 and sparsemax reach a vertex too, but by switching "
        "tokens off; sum leaves the simplex. A panel that stops early says why, in red."))
    return Comparison(page="normalizers", values=dict(values), figures=(figure,), table=table, runs=runs,
                      notes=_stopped_notes(runs))


# ---- page 2: losses and conditioning ----------------------------------------------------------------

LOSS_ORDER = ("logistic", "square", "kl")


def _loss_study(n: int, seed: int, horizon: float, kappas: tuple[float, ...]) -> tuple[dict, dict]:
    """The three losses from one start, and the paper's regression at each condition number.

    Returns
    -------
    losses : dict of loss name to Result
    regression : dict of kappa to Result
    """
    losses = {loss: simulate(Experiment(n=n, d=n, loss=loss, horizon=horizon, seed=seed, a_init="gaussian",
                                        a_scale=0.5)) for loss in LOSS_ORDER}
    # Each kappa is the paper's own regression preset: its X and y are the notebook's draws, which a
    # sweep of kappa (studies.sweep redraws X from the seed in this project's order) would not keep.
    regression = {kappa: simulate(paper_regression(kappa)) for kappa in kappas}
    return losses, regression


def _loss_check(values: Mapping[str, Any]) -> str | None:
    if not values["kappas"]:
        return "Condition numbers: choose at least one."
    try:
        Experiment(n=values["n"], d=values["n"], horizon=values["horizon"], seed=values["seed"])
    except ConfigError as exc:
        return _field_error(exc)
    return None


def _loss_draw(values: Mapping[str, Any], outcome: tuple[dict, dict]) -> Comparison:
    losses, regression = outcome
    floor = float(entropy_of(np.asarray(losses["kl"].experiment.target)))
    runs = {f"loss={k}": r for k, r in losses.items()} | {f"kappa={k:g}": r for k, r in regression.items()}
    table = [{"run": label, "final entropy": round(float(r.entropy[-1]), 4) + 0.0,
              "max s": round(float(r.s[-1].max()), 4), "final loss": f"{r.loss[-1]:.3g}",
              "status": r.status} for label, r in runs.items()]
    figures = (
        Shown("losses", cf.losses_figure(losses), (
            "Same start, three losses. The logistic loss never reaches its floor, so it keeps pushing and "
            "s(t) goes on polarizing (1 \u2212 max s keeps falling); the square loss converges in finite "
            f"time and the scores freeze part-way; the cross-entropy stops at its floor H(p*) = {floor:.3g} "
            "(dashed), where its gradient vanishes.")),
        Shown("regression", cf.regression_figure(regression), (
            "The paper's regression (n = d = m = 20, square loss) at each condition number \u03ba of the "
            "design X: the larger \u03ba, the further the logits a(t) spread, the more polarized the "
            "scores.")),
        Shown("kappa", cf.kappa_figure(regression), (
            "Final entropy and largest score against \u03ba: ill-conditioned problems sparsify more "
            "(the paper's observation), but polarization stays partial under the square loss.")),
    )
    return Comparison(page="losses", values=dict(values), figures=figures, table=table, runs=runs,
                      notes=_stopped_notes(runs),
                      metrics=(("KL floor H(p*)", f"{floor:.4g}", "The entropy of the cross-entropy's "
                                "target: the lowest loss it can reach."),
                               ("KL final loss", f"{losses['kl'].loss[-1]:.4g}", "At the horizon.")))


# ---- page 3: massive activations (tied model) --------------------------------------------------------


def _tied_study(sizes: tuple[int, ...], horizon: float) -> dict[int, Result]:
    """The paper's tied model for each size ``D`` up to ``horizon`` (dict D -> Result)."""
    return {D: simulate(dataclasses.replace(paper_tied(D), horizon=horizon)) for D in sizes}


def _tied_check(values: Mapping[str, Any]) -> str | None:
    if not values["sizes"]:
        return "Sizes D: choose at least one."
    return None


def _tied_draw(values: Mapping[str, Any], results: dict[int, Result]) -> Comparison:
    runs = {f"D={D}": r for D, r in results.items()}
    table = []
    for D, r in results.items():
        norms = np.asarray(r.column_norms[-1])
        others = np.delete(norms, r.winner)
        table.append({"D": D, "winner": r.winner, "winner column norm": round(float(norms[r.winner]), 3),
                      "largest other norm": round(float(others.max()), 3) if others.size else None,
                      "max \u03b1": round(float(r.s[-1].max()), 4), "final loss": f"{r.loss[-1]:.3g}",
                      "status": r.status})
    figure = Shown("tied", cf.tied_figure(results), (
        "The tied model z = Ua, \u03b1 = softmax(z), \u03b2 = U\u03b1, from U(0) = I. Right: the column of U "
        "at the winning token (red) grows steadily, while every other column stays near norm 1 (grey, "
        "dashed: the largest; dotted: the smallest): a massive activation, the same for every D."))
    return Comparison(page="tied", values=dict(values), figures=(figure,), table=table, runs=runs,
                      notes=_stopped_notes(runs))


# ---- page 4: flow vs descent -------------------------------------------------------------------------


def _descent_experiment(values: Mapping[str, Any]) -> Experiment:
    return Experiment(n=values["n"], d=values["n"], loss=values["loss"], horizon=values["horizon"],
                      seed=values["seed"], a_init="gaussian", a_scale=values["a_scale"])


def _descent_check(values: Mapping[str, Any]) -> str | None:
    if not values["lrs"]:
        return "Learning rates: choose at least one."
    try:
        _descent_experiment(values)
    except ConfigError as exc:
        return _field_error(exc)
    return _gd_problem(values, values["lrs"], "Learning rates")


def _descent_draw(values: Mapping[str, Any], comparisons: list[Any]) -> Comparison:
    runs = {f"flow lr={c.lr:g}": c.flow for c in comparisons[:1]}
    runs |= {f"gd lr={c.lr:g}": c.descent for c in comparisons}
    table = [{"lr": c.lr, "steps": round(values["horizon"] / c.lr), "flow winner": c.flow.winner,
              "descent winner": None if c.diverged else c.descent.winner,
              "largest distance": round(float(c.distance.max()), 4) if len(c.distance) else None,
              "same winner": c.same_winner, "diverged": c.diverged, "what happened": c.message}
             for c in comparisons]
    notes = tuple(c.message for c in comparisons if c.diverged or not c.same_winner)
    figure = Shown("descent", cf.descent_figure(comparisons), (
        "Top: the exact flow (solid) and gradient descent (dashed, same colours) at each step size, "
        "on the time axis t = steps \u00d7 lr. Bottom: how far apart their scores are. Small steps retrace "
        "the flow; large ones drift, may crown another token, or diverge (reported in words and in red, "
        "drawn only while finite)."))
    return Comparison(page="descent", values=dict(values), figures=(figure,), table=table, runs=runs,
                      notes=notes)


# ---- page 5: rates ------------------------------------------------------------------------------------


def _rate_study(experiment: Experiment) -> tuple[Result, Any]:
    """A logistic flow and its ``studies.Rate``."""
    result = simulate(experiment)
    return result, polarization_rate(result)


def _rate_experiment(values: Mapping[str, Any]) -> Experiment:
    return Experiment(n=values["n"], d=values["n"], loss="logistic", horizon=values["horizon"],
                      seed=values["seed"], a_init=values["a_init"], a_scale=1.0)


def _rate_check(values: Mapping[str, Any]) -> str | None:
    try:
        _rate_experiment(values)
    except ConfigError as exc:
        return _field_error(exc)
    return None


def _rate_draw(values: Mapping[str, Any], outcome: tuple[Result, Any]) -> Comparison:
    result, rate = outcome
    n = result.s.shape[1]
    figure = Shown("rate", cf.rate_figure(result, rate), (
        "Log-log axes. Left: the weight left for the losers, 1 \u2212 max s, hugs the sharp asymptotics "
        "2(n\u22121)/(n z\u00b2) (red, dashed) and falls faster than the theorem's bound C / log t (dotted): "
        f"the fitted slope against log log t is {rate.slope:.2f}, steeper than the bound's \u22121 "
        "(a 1/log\u00b2 t decay would give \u22122). Middle: each loser's share relative to the winner "
        "shrinks just as slowly. Right: the margin z grows like log t."))
    every = max(1, len(rate.t) // 12)  # about a dozen rows, evenly spread in log time
    table = [{"t": float(f"{rate.t[k]:.4g}"), "1 - max s": float(f"{rate.gap[k]:.4g}"),
              "margin z": float(f"{rate.margin[k]:.4g}"), "2(n-1)/(n z^2)": float(f"{rate.sharp[k]:.4g}")}
             for k in range(0, len(rate.t), every)]
    return Comparison(page="rates", values=dict(values), figures=(figure,), table=table,
                      runs={"logistic flow": result}, notes=_stopped_notes({"logistic flow": result}),
                      metrics=(("Fitted slope", f"{rate.slope:.2f}",
                                "Of log(1 \u2212 max s) against log log t over the late times: \u22122 for "
                                "a 1/log\u00b2 t decay, \u22121 for the theorem's 1/log t."),
                               ("1 \u2212 max s at the end", f"{rate.gap[-1]:.3g}",
                                f"At t = {format_time(float(rate.t[-1]))}, n = {n}.")))


# ---- the pages ------------------------------------------------------------------------------------------



def _start(most_tokens: int) -> dict[str, ex.Control]:
    """The Explorer's ``n`` (up to ``most_tokens``) and ``seed`` controls: where a fresh run starts."""
    return {"n": dataclasses.replace(C["n"], high=most_tokens), "seed": C["seed"]}


def _horizon(low: float, high: float, extra: tuple[float, ...] = ()) -> ex.Control:
    """The Explorer's horizon control, offering only the horizons in ``[low, high]`` (and ``extra``)."""
    options = (*(h for h in ex.HORIZONS if low <= h <= high), *extra)
    return dataclasses.replace(C["horizon"], low=options[0], high=options[-1], options=options)


PAGES: dict[str, PageSpec] = {p.name: p for p in (
    PageSpec(
        name="normalizers", title="Normalizers side by side",
        intro="One starting point run under every normalizer \u03c3 (the paper's comparison, 10 \u00d7 10). "
              "Only softmax has the replicator form \u0227\u1d62 = s\u1d62(u\u1d62 \u2212 s\u00b7u).",
        controls={"preset": dataclasses.replace(C["preset"], options=_COMPARE_PRESETS),
                  **{k: C[k] for k in _NORMALIZER_KEYS}},
        defaults=lambda preset: {k: ex.preset_values(preset)[k] for k in _NORMALIZER_KEYS},
        check=_normalizer_check,
        study=lambda v: (compare_normalizers, (_normalizer_experiment(v),)),
        draw=_normalizer_draw),
    PageSpec(
        name="losses", title="Loss and conditioning",
        intro="The logistic, square and cross-entropy losses on a common footing (same start, a(0) = "
              "0.5 randn), then the paper's regression against the condition number \u03ba.",
        controls={**_start(32), "horizon": _horizon(10, 1e8),
                  "kappas": ListControl("kappas", "Condition numbers \u03ba", "list",
                                        options=tuple(range(1, 11)), most=6,
                                        help="The paper's regression (n = d = m = 20) at each \u03ba.")},
        defaults=lambda _: {"n": 8, "seed": 0, "horizon": 1e6, "kappas": PAPER_KAPPAS},
        check=_loss_check,
        study=lambda v: (_loss_study, (v["n"], v["seed"], v["horizon"], tuple(v["kappas"]))),
        draw=_loss_draw),
    PageSpec(
        name="tied", title="Massive activations",
        intro="The tied model z = Ua, \u03b1 = softmax(z), \u03b2 = U\u03b1 (logistic loss, U(0) = I), "
              "for several sizes D: the paper's toy model of massive activations.",
        controls={"sizes": ListControl("sizes", "Sizes D", "list", options=(2, 5, 10, 20, 50, 100, 150),
                                       most=5,
                                       help="One row of panels per size (the paper: 10, 20, 50, 100)."),
                  "horizon": _horizon(10, 5e4)},
        defaults=lambda _: {"sizes": PAPER_TIED_SIZES, "horizon": float(get_preset("paper-tied-10")
                                                                        .experiment.horizon)},
        check=_tied_check,
        study=lambda v: (_tied_study, (tuple(v["sizes"]), v["horizon"])),
        draw=_tied_draw),
    PageSpec(
        name="descent", title="Flow vs descent",
        intro="The exact gradient flow against gradient descent at several learning rates, from the same "
              "start (a(0) = scale \u00d7 randn). Descent's time is steps \u00d7 lr.",
        controls={**_start(32), "loss": dataclasses.replace(C["loss"], options=("logistic", "square")),
                  "a_scale": C["a_scale"],
                  "horizon": _horizon(10, 1e5),
                  "lrs": ListControl("lrs", "Learning rates", "list",
                                     options=(0.01, 0.05, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0), most=5,
                                     help=f"One column per step size; each needs horizon / lr \u2264 "
                                          f"{ex.MAX_GD_STEPS:,} steps.")},
        defaults=lambda _: {"n": 6, "loss": "square", "seed": 0, "a_scale": 1.0, "horizon": 1000.0,
                            "lrs": (0.1, 2.0, 5.0, 20.0)},
        check=_descent_check,
        study=lambda v: (flow_vs_descent, (_descent_experiment(v), tuple(v["lrs"]))),
        draw=_descent_draw),
    PageSpec(
        name="rates", title="Rates: how slow is polarization?",
        intro="Under the logistic loss the flow polarizes forever, but only logarithmically. "
              "Here out to t = 10\u00b9\u00b2 and beyond, against the theory.",
        controls={**_start(64),
                  "a_init": dataclasses.replace(C["a_init"], options=("zeros", "gaussian")),
                  "horizon": _horizon(1e4, 1e12, extra=(1e13, 1e14, 1e15))},
        defaults=lambda _: {"n": 5, "seed": 1, "a_init": "zeros", "horizon": 1e12},
        check=_rate_check,
        study=lambda v: (_rate_study, (_rate_experiment(v),)),
        draw=_rate_draw),
)}
"""Every comparison page, by name, in navigation order."""
