"""What the comparison pages share: controls cut from the Explorer's, the step cap, and a study as a View.

A comparison page runs one study (several runs) in a worker process under the
runner's time limit, with a budget just under it (``science.deadline``: a study
out of time is drawn as far as it got, with advice from ``overtime``), draws it
(``Drawn``: figures, a table, the runs, notes, numbers), and shows it with the
same downloads on every page: the table as CSV, every run as JSON, each figure
as HTML that plays offline.
"""

from __future__ import annotations

import dataclasses
import io
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from polarize.config import ConfigError
from polarize.science import format_time
from polarize.science.deadline import Partial, within_budget
from polarize.serialize import finite, strict_dumps
from polarize.status import Status
from polarize.web import export, overtime, precomputed
from polarize.web.controls import Control, format_value
from polarize.web.experiment_controls import CONTROLS, HORIZONS, MAX_GD_STEPS
from polarize.web.failures import config_reason, failure_view
from polarize.web.limited import BUDGET, failed_view, run_each
from polarize.web.page import Problem
from polarize.web.progress import draft, drafting
from polarize.web.view import Caption, Columns, Download, Metric, Plot, Table, View

__all__ = ["DRAFT_AFTER", "Advice", "Drawn", "Runs", "explorer_control", "field_problem", "gd_problem",
           "horizon", "horizons", "intro", "start", "stopped_notes", "study_view"]

Values = Mapping[str, Any]


def intro(text: str) -> Callable[[Values], str]:
    """A page caption: ``text``, then that the page's address holds its settings."""
    return lambda values: f"{text} Every setting is in the page's address: copy it to share this view."


def explorer_control(key: str, **changes: Any) -> Control:
    """The Explorer's control ``key``, some attributes changed (its rules dropped: they need its values)."""
    (control,) = [c for c in CONTROLS if c.key == key]
    plain = {"applies": None, "derive": None, "group": "", "half": False}
    return dataclasses.replace(control, **{**plain, **changes})


def start(most_tokens: int) -> tuple[Control, Control]:
    """The Explorer's ``n`` (up to ``most_tokens``) and ``seed`` controls: where a fresh run starts."""
    return explorer_control("n", high=most_tokens), explorer_control("seed")


def horizon(low: float, high: float, extra: tuple[float, ...] = ()) -> Control:
    """The Explorer's horizon control, offering only the horizons in ``[low, high]`` (and ``extra``)."""
    options = (*(h for h in HORIZONS if low <= h <= high), *extra)
    return explorer_control("horizon", options=options)


def horizons(controls: tuple[Control, ...]) -> tuple[float, ...]:
    """The horizons a page offers (its ``horizon`` control's options), for advice that names one."""
    return next(c.options for c in controls if c.key == "horizon")


def gd_problem(values: Values, lrs: tuple[float, ...], key: str, label: str) -> Problem | None:
    """Whether gradient descent at these step sizes would take too many steps (naming ``key``), or None."""
    for lr in lrs:
        steps = round(values["horizon"] / lr)
        if steps > MAX_GD_STEPS:
            return Problem((key, "horizon"), (
                f"{label}: gradient descent with lr = {lr:g} up to t = {format_time(values['horizon'])} "
                f"takes "
                f"{steps:,} steps; this page runs at most {MAX_GD_STEPS:,}. Lower the horizon or raise the "
                "learning rate."))
    return None


def field_problem(exc: ConfigError, labels: Mapping[str, str]) -> Problem:
    """A ``ConfigError`` as a problem naming its field (with the field's label in the message)."""
    return Problem((exc.field,), f"{labels.get(exc.field, exc.field)}: {config_reason(exc)}")


def stopped_notes(runs: Mapping[str, Any]) -> tuple[str, ...]:
    """A sentence for each run that stopped early (those out of time are in the study's own warning)."""
    return tuple(f"{label}: the run stopped early at t = {format_time(float(r.t[-1]))} ({r.message}); "
                 "it is drawn up to there." for label, r in runs.items()
                 if not r.finished and r.status is not Status.OUT_OF_TIME)


@dataclass(frozen=True, eq=False)
class Drawn:
    """A study, drawn: figures with captions, table rows, every run (label -> Result), notes, numbers."""

    plots: tuple[Plot, ...]
    table: list[dict[str, Any]]
    runs: dict[str, Any]
    notes: tuple[str, ...] = ()
    metrics: tuple[Metric, ...] = ()
    values: dict[str, Any] = field(default_factory=dict)
    page: str = ""

    def data_json(self) -> str:
        """Every run as JSON: the settings, the table, then each ``Result.to_dict`` (non-finite as null)."""
        data = {"page": self.page, "settings": self.values, "table": self.table,
                "runs": {label: r.to_dict() for label, r in self.runs.items()}}
        return strict_dumps(finite(data))

    def table_csv(self) -> str:
        """The table as CSV."""
        out = io.StringIO()
        columns = list(self.table[0]) if self.table else []
        out.write(",".join(columns) + "\n")
        for row in self.table:
            out.write(",".join(_csv_cell(row[c]) for c in columns) + "\n")
        return out.getvalue()


@dataclass(frozen=True, eq=False)
class Runs:
    """A study as runs that go to the workers at once, and how their outcomes make the study's.

    Attributes
    ----------
    parts : mapping
        Label -> (function, args), in the order the figure shows them: each a module-level function
        taking a ``deadline`` keyword, as a whole study does (``within_budget``), that makes one run
        (or the few that go together, e.g. a flow and its descent).
    join : callable
        ``join(outcomes)``: the study's outcome of its parts' (label -> outcome, in the order of
        ``parts``, only those that came back).
    """

    parts: Mapping[str, tuple[Callable[..., Any], tuple[Any, ...]]]
    join: Callable[[dict[str, Any]], Any]


Study = Callable[[Values], "tuple[Callable[..., Any], tuple[Any, ...]] | Runs"]
Advice = Callable[[Values, Partial | None], str]
"""What a page advises for its settings when its study ran out of time (``overtime.to_see``): the
values, and what the study finished (None when its worker was stopped at the hard limit)."""

DRAFT_AFTER = 0.5
"""Seconds a study may take before the runs done so far are drawn as they come (``progress.draft``), and
between two such drafts: as long as the spinner waits; a quicker study is drawn once, whole."""


def _whole(function: Callable[..., Any], args: tuple[Any, ...]) -> Runs:
    """A study that is one job: one part, its outcome the study's."""
    return Runs({"": (function, args)}, lambda outcomes: outcomes[""])


def _merged(partials: Mapping[str, Partial], outcome: Any) -> Partial:
    """One ``Partial`` of the parts': ``outcome``, and what each cut and left out."""
    every = list(partials.values())
    return Partial(outcome=outcome, cut=tuple(c for p in every for c in p.cut),
                   left_out=tuple(c for p in every for c in p.left_out),
                   reached=tuple(r for p in every for r in p.reached),
                   seconds=min((p.seconds for p in every), default=math.inf))


def study_view(page: str, values: Values, study: Study,
               draw: Callable[[Values, Any, bool], Drawn], *, advise: Advice,
               timeout: float | None = None,
               stored: Callable[[Values], Any] | None = None, narrow: bool = False) -> View:
    """Run a page's study in workers (with a time limit) and show it; never raises.

    ``study(values)`` gives a module-level function and its arguments, or ``Runs``: several such, handed
    to the workers at once (``limited.run_each``), whose outcomes make the study's. Each function
    takes a ``deadline`` keyword (``science.deadline``) and makes its runs through it, under a budget
    just under the time limit (``budget.within``). ``draw(values, outcome, narrow)`` gives the
    ``Drawn`` (its figures built for a phone when ``narrow``); when
    the budget ran out, what the study finished is drawn with a warning that ends in
    ``advise(values, partial)``, and the view is ``passing`` (not kept for others: on a quieter
    server the study may finish). A part that failed (stopped at the hard limit, a crashed worker, a
    busy server) is said in one line naming it, and the others are drawn; the view is then
    ``passing`` too. Past ``DRAFT_AFTER`` seconds, the parts done are drawn as they come back
    (``progress.draft``), at most once each ``DRAFT_AFTER``. ``stored(values)``, when given, is the
    outcome computed ahead for these values (``precomputed``) or None; a stored outcome is shown with a
    note that says so.
    """
    begin = time.perf_counter()
    values = dict(values)
    partial, failed = None, {}
    try:
        outcome = stored(values) if stored else None
        runs = study(values) if outcome is None else None
    except Exception as exc:  # a failure must not become a traceback on the page
        return failure_view(exc)
    ahead = outcome is not None
    if not ahead:
        ran = _run(values, runs if isinstance(runs, Runs) else _whole(*runs), draw, advise, timeout, narrow,
                   kept=isinstance(runs, Runs))
        if isinstance(ran, View):
            return ran
        partial, failed, limit = ran
        outcome = partial.outcome
    cut_short = partial is not None and not partial.complete
    notes = tuple(f"{label}: {error}" for label, error in failed.items())
    try:
        drawn = dataclasses.replace(draw(values, outcome, narrow), values=values, page=page)
    except Exception:
        if not (cut_short or failed):
            raise
        drawn = None  # too little finished to draw: no run at all, or too few saved times for a figure
    if drawn is None or (cut_short and not drawn.runs):
        said = (overtime.nothing_drawn(limit, advise(values, partial)),) if cut_short else ()
        return View(error=" ".join((*notes, *said)), passing=True)
    if cut_short:
        notes += (overtime.study_warning(partial, limit, advise(values, partial)),)
    drawn = dataclasses.replace(drawn, notes=(*notes, *drawn.notes))
    stem = f"polarize-{page}"
    # The title of the offline HTML and of the clips: the page and its settings, as in the link.
    heading = (f"polarize: {page}", " \u00b7 ".join(
        f"{key} = {','.join(map(format_value, v)) if isinstance(v, (tuple, list)) else format_value(v)}"
        for key, v in values.items()))
    blocks: tuple[Any, ...] = (Caption(precomputed.note(outcome)),) if ahead else ()
    if drawn.metrics:
        blocks += (Columns(tuple((m,) for m in drawn.metrics) + ((),) * (4 - len(drawn.metrics))),)
    blocks += (*drawn.plots, Table(tuple(drawn.table), wrap=True))  # a run's message is a sentence
    downloads = (
        Download("csv", "Table (CSV)", drawn.table_csv, f"{stem}.csv", "text/csv", ":material/table:"),
        Download("json", "Every run (JSON)", drawn.data_json, f"{stem}.json", "application/json",
                 ":material/data_object:", "The settings and each run's whole trajectory and configuration."),
        *(Download(plot.key, "Figure (HTML)" if len(drawn.plots) == 1 else f"Figure: {plot.key} (HTML)",
                   lambda figure=plot.figure: export.dashboard_html(figure, title=stem, heading=heading),
                   f"{stem}-{plot.key}.html", "text/html", ":material/movie:",
                   "The figure as one file that plays offline (plotly.js embedded).")
          for plot in drawn.plots),
        *(clip for plot in drawn.plots if plot.figure["frames"] for clip in export.clip_downloads(
            plot.figure, key=f"{plot.key}-", name="Clip" if len(drawn.plots) == 1 else f"Clip: {plot.key}",
            title=heading, stem=f"{stem}-{plot.key}",
            help_text="The figure as an animated clip for slides (takes a few seconds).")),
    )
    return View(blocks=blocks, warnings=drawn.notes, downloads=downloads, data=drawn,
                seconds=time.perf_counter() - begin, passing=cut_short or bool(failed))


def _run(values: Values, runs: Runs, draw: Callable[[Values, Any, bool], Drawn], advise: Advice,
         timeout: float | None, narrow: bool, *, kept: bool) -> tuple[Partial, dict[str, str], float] | View:
    """Every part of ``runs`` at once, each under the time limit (``limited.run_each``), drafts drawn
    as they come, ``DRAFT_AFTER`` apart (those that came back whole kept by their content when ``kept``):
    what they made (``Partial``), the failed parts' words by label,
    and the limit; or the view of the failure when nothing came back."""
    drafted = time.perf_counter()  # the last draft's time: the start before any
    done: dict[str, Partial] = {}
    failed: dict[str, Exception] = {}
    limit = math.inf
    jobs = {label: (within_budget, (function, BUDGET, *args))
            for label, (function, args) in runs.parts.items()}
    # A whole study is kept as its view (``ui.renderer.VIEWS``); runs, each by its content, for any setting.
    for label, ran in run_each(jobs, timeout=timeout, keep=lambda outcome: kept and outcome.complete):
        if isinstance(ran, Exception):
            failed[label] = ran
        else:
            done[label], limit = ran.outcome, ran.limit
        # A draft costs the figure's making in this thread while the workers run: one each DRAFT_AFTER.
        late = time.perf_counter() - drafted >= DRAFT_AFTER
        if done and len(done) + len(failed) < len(jobs) and late and drafting():
            _draft(values, runs, done, _said(failed, values, advise), draw, narrow)
            drafted = time.perf_counter()
    if not done:  # every part failed: said once when each failed alike, else each in its line
        if len({(type(exc), str(exc)) for exc in failed.values()}) == 1:
            return failed_view(next(iter(failed.values())), lambda: advise(values, None), "These runs")
        said = _said(failed, values, advise)
        return View(error=" ".join(f"{label}: {error}" for label, error in said.items()), passing=True)
    return _merged(done, runs.join({label: done[label].outcome for label in runs.parts if label in done})), \
        _said(failed, values, advise), limit


def _said(failed: Mapping[str, Exception], values: Values, advise: Advice) -> dict[str, str]:
    """Each failed part's words (``limited.failed_view``), by label."""
    return {label: failed_view(exc, lambda: advise(values, None)).error for label, exc in failed.items()}


def _draft(values: Values, runs: Runs, done: Mapping[str, Partial], failed: Mapping[str, str],
           draw: Callable[[Values, Any, bool], Drawn], narrow: bool) -> None:
    """Draw what the parts ``done`` make (``progress.draft``), naming those still running and those
    that failed; nothing when they are too few to draw (the figure needs another)."""
    try:
        drawn = draw(values, runs.join({label: done[label].outcome for label in runs.parts if label in done}),
                     narrow)
    except Exception:
        return
    running = [label for label in runs.parts if label not in done and label not in failed]
    text = (f"{len(done)} of {len(runs.parts)} runs drawn; still running: {', '.join(running)}."
            + "".join(f" {label}: {error}" for label, error in failed.items()))
    # Without frames: a draft is looked at, not played (the transport comes with the whole view).
    plots = tuple(dataclasses.replace(plot, figure={**plot.figure, "frames": []}) for plot in drawn.plots)
    draft(View(blocks=plots, warnings=tuple(f"{label}: {error}" for label, error in failed.items())), text)


def _csv_cell(value: Any) -> str:
    text = repr(float(value)) if isinstance(value, (float, np.floating)) else str(value)
    return f'"{text}"' if any(ch in text for ch in ',"\n') else text
