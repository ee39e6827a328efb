"""How experiments, results and ensembles read in a notebook: short reprs, small HTML tables, tidy frames.

An echoed ``Result`` used to print every saved array in full (tens of
thousands of characters). Here each object says, in a line or two, the
settings that differ from the defaults, how far it ran and what came of it;
``_repr_html_`` shows the same as a compact table (every piece of text
escaped), and ``to_pandas`` lays the series out tidily. pandas is imported
only when a frame is asked for.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from polarize.fields import ConfigError, choice, integer, shown
from polarize.serialize import finite
from polarize.status import Status

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

    from polarize.config import Experiment
    from polarize.diagnostics import Result
    from polarize.ensemble import Ensemble

__all__ = ["FIGURES", "as_dict", "ensemble_figure", "ensemble_frame", "ensemble_html", "ensemble_repr",
           "experiment_html", "experiment_repr", "number", "result_figure", "result_frame", "result_html",
           "result_repr", "settings"]

MOST = 480
"""A repr longer than this is cut (with an ellipsis): an echo stays a few lines, whatever the settings."""
_ARRAYS = ("a0", "V0", "target", "X", "y")


def number(x: float) -> str:
    """A number in at most four significant digits: ``0.1``, ``250``, ``1e+05``, ``3.162e-07``."""
    return f"{x:.4g}"


def settings(e: Experiment) -> list[tuple[str, str]]:
    """``(field, value)`` for each scalar field that differs from its default, then the explicit arrays
    by shape (the arrays of a resolved experiment are its own draws from ``seed``)."""
    out = []
    for f in dataclasses.fields(e):
        value = getattr(e, f.name)
        if f.name in _ARRAYS or value == f.default:
            continue
        out.append((f.name, number(value) if isinstance(value, float) else repr(value)))
    for name in _ARRAYS:
        value = getattr(e, name)
        if value is not None:
            out.append((name, f"array of shape {np.shape(value)}"))
    return out


def _cut(text: str) -> str:
    return text if len(text) <= MOST else text[: MOST - 3] + "..."


def _scalars(e: Experiment) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings(e) if k not in _ARRAYS)


def _arrays(e: Experiment) -> str:
    given = [f"{k} {v.removeprefix('array of shape ')}" for k, v in settings(e) if k in _ARRAYS]
    return f"; arrays: {', '.join(given)}" if given else ""


def experiment_repr(e: Experiment) -> str:
    """``Experiment(n=4, d=3, horizon=100)``: the fields that differ from the defaults."""
    return _cut(f"Experiment({_scalars(e)}{_arrays(e)})")


def _table(title: str, rows: Iterable[tuple[str, str]]) -> str:
    """A two-column HTML table; every cell is escaped (messages and notes are text, never markup)."""
    cells = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                    f"<td style='text-align:left'>{html.escape(v)}</td></tr>" for k, v in rows)
    return f"<table><caption style='text-align:left'>{html.escape(title)}</caption>{cells}</table>"


def experiment_html(e: Experiment) -> str:
    """The settings that differ from the defaults, as a table (all defaults: one row saying so)."""
    return _table("Experiment", settings(e) or [("settings", "all defaults")])


# ---- Result ---------------------------------------------------------------------------------------

def _progress(r: Result) -> str:
    """How far the run got: ``finished at t = 100`` or ``stopped at t = 3 of 100``."""
    end, horizon = float(r.t[-1]), r.experiment.horizon
    where = f"t = {number(end)}" if r.finished else f"t = {number(end)} of {number(horizon)}"
    return f"{r.status} at {where} ({len(r.t)} saved times)"


def _outcome(r: Result) -> str:
    if r.dead:
        return "dead: every score is 0, so no distribution and no winner"
    return f"winner token {r.winner}, 1 - max s = {number(float(r.one_minus_max[-1]))}"


def result_repr(r: Result) -> str:
    """``Result(n=4, d=3, horizon=100: finished at t = 100 (200 saved times); winner token 2, ...)``."""
    return _cut(f"Result({_scalars(r.experiment)}: {_progress(r)}; {_outcome(r)})")


def result_rows(r: Result) -> list[tuple[str, str]]:
    """The rows of ``result_html``: the run's settings, how far it ran, and its final state."""
    rows = [
        *settings(r.experiment), ("status", r.status),
        ("final time", number(float(r.t[-1]))), ("saved times", str(len(r.t))),
        ("winner", "none: every score is 0 (dead)" if r.dead else f"token {r.winner}"),
        ("1 - max s", number(float(r.one_minus_max[-1]))),
        ("entropy", number(float(r.entropy[-1]))), ("loss", number(float(r.loss[-1]))),
        ("evaluations", str(r.n_evaluations)),
    ]
    rows += [(name, text) for name, text in (("message", r.message), ("note", r.note)) if text]
    return rows


def result_html(r: Result) -> str:
    return _table("Result", result_rows(r))


def result_frame(r: Result, per: str = "token") -> pd.DataFrame:
    """A tidy frame of the saved series: one row per saved time and token, or per saved time.

    ``per="token"``: columns ``step, t, token, s, a, u, ratio, column_norm`` (and ``p`` for a logistic
    run on a target), ``K * n`` rows. ``per="time"``: ``step, t, loss, entropy, effective_support,
    one_minus_max, grad_norm_V, grad_norm_a, sv1..sv3`` and the running ``leader``, ``K`` rows.
    """
    import pandas as pd

    K, n = r.s.shape
    if per == "token":
        columns: dict[str, Any] = {"step": np.repeat(np.arange(K), n), "t": np.repeat(r.t, n),
                                   "token": np.tile(np.arange(n), K)}
        for name in ("s", "a", "u", "ratio", "p"):
            value = getattr(r, name)
            if value is not None:
                columns[name] = np.asarray(value).ravel()
        columns["column_norm"] = r.column_norms.ravel()
        return pd.DataFrame(columns)
    if per == "time":
        columns = {"step": np.arange(K), "t": r.t}
        for name in ("loss", "entropy", "effective_support", "one_minus_max", "grad_norm_V", "grad_norm_a"):
            columns[name] = getattr(r, name)
        for k in range(r.singular_values.shape[1]):
            columns[f"sv{k + 1}"] = r.singular_values[:, k]
        # No leader where every score is 0 (a dead run): missing, not token 0.
        leader = pd.array(np.argmax(r.s, axis=1), dtype="Int64")
        leader[~np.any(np.asarray(r.s) != 0, axis=1)] = pd.NA
        columns["leader"] = leader
        return pd.DataFrame(columns)
    raise ValueError(f"per must be 'token' or 'time', got {per!r}")


# ---- Ensemble -------------------------------------------------------------------------------------

def _winners(winner: np.ndarray, shown: int = 3) -> str:
    """``token 0: 55, token 2: 30, 1 other: 15`` (the most frequent winners first)."""
    tokens, counts = np.unique(winner, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    parts = [f"token {tokens[k]}: {counts[k]}" for k in order[:shown]]
    rest = counts[order[shown:]]
    if len(rest):
        parts.append(f"{len(rest)} other{'s' if len(rest) > 1 else ''}: {rest.sum()}")
    return ", ".join(parts)


def _ensemble_progress(m: Ensemble) -> str:
    """``100 starts to t = 1e+04, all finished``; an ensemble cut short by its budget says so (even of
    no start at all: ``0 starts to t = 1e+04, out of time before any start was done``)."""
    stopped = int(np.count_nonzero(~m.finished))
    complete = m.status is Status.FINISHED
    if complete and len(m):
        ran = "all finished" if not stopped else f"{stopped} stopped early"
    else:
        ran = f"{m.status} before {'the rest' if len(m) else 'any start'} was done" + (
            f", {stopped} stopped early" if stopped else "")
    end = m.experiment.save_at(2).t[-1]
    return f"{len(m)} start{'s' if len(m) != 1 else ''} to t = {number(end)}, {ran}"


def _spread(values: np.ndarray, how: Any) -> str:
    """``how`` of ``values`` in four digits, or ``none`` of no value (never ``nan``)."""
    return number(float(how(values))) if len(values) else "none"


def ensemble_repr(m: Ensemble) -> str:
    """``Ensemble(n=3, horizon=1e+04: 100 starts to t = 1e+04, all finished; winners token 0: 55, ...)``."""
    won = _winners(m.winner) if len(m) else "none"
    return _cut(f"Ensemble({_scalars(m.experiment)}: {_ensemble_progress(m)}; winners {won}; "
                f"median 1 - max s = {_spread(m.one_minus_max, np.median)})")


def ensemble_html(m: Ensemble) -> str:
    rows = [
        *((k, v) for k, v in settings(m.experiment) if k != "a0"),
        ("status", str(m.status)),
        ("starts", str(len(m))), (Status.FINISHED.value, f"{int(np.count_nonzero(m.finished))} of {len(m)}"),
        ("winners", _winners(m.winner, shown=8) if len(m) else "none"),
        ("median 1 - max s", _spread(m.one_minus_max, np.median)),
        ("largest 1 - max s", _spread(m.one_minus_max, np.max)),
        ("saved times", "final only" if m.t is None else str(len(m.t))),
    ]
    return _table("Ensemble", rows)


def _per_token(columns: dict[str, Any], name: str, values: np.ndarray) -> None:
    for i in range(values.shape[1]):
        columns[f"{name}_{i}"] = values[:, i]


def ensemble_frame(m: Ensemble, per: str = "start") -> pd.DataFrame:
    """A tidy frame: one row per start, per start and token, or per start, saved time and token.

    ``per="start"``: ``start, winner, one_minus_max, finished`` and each token's ``a0_i``, ``s_i``
    (``K`` rows). ``per="token"``: ``start, token, a0, s, a, won`` (``K * n`` rows). ``per="path"``
    (an ensemble run with ``trajectories=True``): ``start, step, t, token, s`` (``K * T * n`` rows).
    """
    import pandas as pd

    K, n = m.s.shape
    if per == "start":
        columns: dict[str, Any] = {"start": np.arange(K), "winner": m.winner,
                                   "one_minus_max": m.one_minus_max, Status.FINISHED.value: m.finished}
        _per_token(columns, "a0", m.a0)
        _per_token(columns, "s", m.s)
        return pd.DataFrame(columns)
    if per == "token":
        return pd.DataFrame({"start": np.repeat(np.arange(K), n), "token": np.tile(np.arange(n), K),
                             "a0": m.a0.ravel(), "s": m.s.ravel(), "a": m.a.ravel(),
                             "won": (m.winner[:, None] == np.arange(n)[None]).ravel()})
    if per == "path":
        if m.t is None or m.s_path is None:
            raise ValueError("per='path' needs an ensemble run with trajectories=True")
        T = len(m.t)
        return pd.DataFrame({"start": np.repeat(np.arange(K), T * n),
                             "step": np.tile(np.repeat(np.arange(T), n), K),
                             "t": np.tile(np.repeat(m.t, n), K), "token": np.tile(np.arange(n), K * T),
                             "s": m.s_path.ravel()})
    raise ValueError(f"per must be 'start', 'token' or 'path', got {per!r}")


def as_dict(outcome: Result | Ensemble) -> dict[str, Any]:
    """JSON-ready: the resolved config (``config``) and every other field, arrays as lists, unset ones out."""
    out: dict[str, Any] = {"config": outcome.experiment.to_dict()}
    for f in dataclasses.fields(outcome):
        value = getattr(outcome, f.name)
        if f.name == "experiment" or value is None:
            continue
        out[f.name] = finite(value.tolist()) if isinstance(value, np.ndarray) else value  # NaN: null
    return out


# ---- figures (the plots layer, imported only when a figure is asked for) -------------------------------

_OPTIONS = {"dashboard": ("frames", "height", "repulsion", "narrow"), "paper": (),
            "rate": ("frames", "animated"), "ensemble": ("title", "height")}
"""The options each figure takes (``Result.figure``'s kinds, and ``Ensemble.figure``)."""
MOST_FRAMES, HEIGHTS = 1000, (100, 4000)
"""Most animation frames a figure may ask for, and the heights (px) it may have."""


def _options(kind: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` checked one by one (``polarize.fields``): a ``ConfigError`` naming the one at fault."""
    allowed = _OPTIONS[kind]
    for name, value in options.items():
        if name not in allowed:
            raise ConfigError(name, f"is not an option of the {kind} figure (it takes "
                              f"{', '.join(allowed) or 'none'})")
        if name == "frames":
            integer(name, value, 1, MOST_FRAMES)
        elif name == "height":
            integer(name, value, *HEIGHTS)
        elif name in ("narrow", "animated") and not isinstance(value, bool):
            raise ConfigError(name, f"must be True or False, got {shown(value)}")
        elif name == "title" and not isinstance(value, str):
            raise ConfigError(name, f"must be text, got {shown(value)}")
    return options


def result_figure(r: Result, kind: str = "dashboard", **options: Any) -> go.Figure:
    """The app's own figure of one run (``FIGURES``); ``options`` go to the figure's builder.

    Raises
    ------
    ConfigError
        Naming ``kind`` or the option that is not one of the figure's or not a value it takes.
    """
    import plotly.graph_objects as go

    options = _options(choice("kind", kind, tuple(FIGURES)), options)
    # The library's edge: a figure object for notebooks (the app sends the builders' dicts as they are).
    return go.Figure(FIGURES[kind](r, **options), _validate=False)


def _dashboard(r: Result, **options: Any) -> dict[str, Any]:
    from polarize.plots.dashboard import dashboard

    return dashboard(r, **{"narrow": False, **options})


def _paper(r: Result, **options: Any) -> dict[str, Any]:
    from polarize.plots.paper import logistic_figure

    return logistic_figure(r, **options)


def _rate(r: Result, **options: Any) -> dict[str, Any]:
    from polarize.plots.comparisons import rate_figure
    from polarize.science.studies import polarization_rate

    late = int(np.count_nonzero(r.t > 1.0))
    if late < 2:  # the rate is drawn against log t, from t > 1
        from polarize.plots.words import words_figure

        times = f"{late} time{'s' if late != 1 else ''}"
        return words_figure(f"Too little to draw the rate: the run saved {times} after t = 1 (it stopped "
                            f"at t = {number(float(r.t[-1]))}: {r.status}); the "
                            "rate needs at least two.")
    return rate_figure(r, polarization_rate(r), **options)


FIGURES: dict[str, Callable[..., dict[str, Any]]] = {"dashboard": _dashboard, "paper": _paper, "rate": _rate}
"""What ``Result.figure`` draws, by kind: the Explorer's animated dashboard, the paper's static figure of a
run (scores and value projections), or the rate of polarization against its asymptotics."""


def _tokens(tokens: Any, n: int) -> tuple[int, ...]:
    """The triangle's three tokens as ints (for n = 2 the starts lie on a segment: any whole numbers)."""
    wrong = ConfigError("tokens", f"need 3 different tokens out of 0..{n - 1}, got {shown(tokens)}")
    if isinstance(tokens, (str, bytes)):
        raise wrong
    try:
        chosen = tuple(integer("tokens", k, 0, n - 1 if n > 2 else 2**31) for k in tokens)
    except (ConfigError, TypeError):
        raise wrong from None
    if n > 2 and (len(chosen) != 3 or len(set(chosen)) != 3):
        raise wrong
    return chosen


def ensemble_figure(m: Ensemble, tokens: Sequence[int] = (0, 1, 2), **options: Any) -> go.Figure:
    """Each start on the triangle of three ``tokens``, coloured by the token that wins from it."""
    import plotly.graph_objects as go

    n = m.experiment.n
    options, chosen = _options("ensemble", options), _tokens(tokens, n)
    if not len(m):
        from polarize.plots.words import words_figure

        figure = words_figure(f"No start to draw: the ensemble is {m.status} before any start was done "
                              "(give it a larger budget, or fewer starts).")
    else:
        from polarize.plots.portrait import starts_figure

        figure = starts_figure(m, chosen, **options)
    return go.Figure(figure, _validate=False)  # the library's edge, as ``result_figure``
