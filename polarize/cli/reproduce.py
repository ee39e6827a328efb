"""The paper's toy figures (arXiv:2603.06248 section 6), recomputed with the exact flow.

``PAPER_FIGURES`` maps each figure's name to the runs it needs and the builder
that draws it; ``reproduce(directory)`` runs them all and writes each figure as
standalone HTML and, where a Chromium browser is found for Plotly's static
export (kaleido), as PNG and SVG, plus ``summary.json`` with the key numbers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import plotly.graph_objects as go

from polarize.config import Experiment
from polarize.diagnostics import Result
from polarize.integrate import simulate
from polarize.plots.paper import (
    kl_figure,
    logistic_figure,
    normalizers_figure,
    regression_figure,
    tied_figure,
)
from polarize.plots.static import TABS, find_browser, missing_for_images, start_browser, write_images
from polarize.presets import PAPER_KAPPAS, PAPER_TIED_SIZES, PRESETS
from polarize.serialize import finite, strict_dumps

__all__ = ["PAPER_FIGURES", "PaperFigure", "find_browser", "reproduce", "summarize"]

COMPARED = ("l1", "sum", "l2", "softmax", "relu", "sigmoid", "linear", "sparsemax")
"""The paper's six normalizers, in its order, then the two this project adds."""


@dataclass(frozen=True, kw_only=True)
class PaperFigure:
    """One figure of the paper: labelled runs and the function that draws them."""

    name: str
    title: str
    runs: Callable[[], dict[str, Experiment]]
    draw: Callable[[dict[str, Result]], dict]


def _compare(loss: str) -> dict[str, Experiment]:
    preset = PRESETS[f"paper-compare-{loss}"]
    return {name: preset.with_changes(normalizer=name) for name in COMPARED}


PAPER_FIGURES: dict[str, PaperFigure] = {
    f.name: f
    for f in (
        PaperFigure(name="logistic", title="Logistic loss polarizes softmax (n = d = 8)",
                    runs=lambda: {"softmax": PRESETS["paper-logistic"].experiment},
                    draw=lambda r: logistic_figure(r["softmax"])),
        PaperFigure(name="compare-square", title="Normalizers compared, square loss",
                    runs=lambda: _compare("square"), draw=normalizers_figure),
        PaperFigure(name="compare-logistic", title="Normalizers compared, logistic loss",
                    runs=lambda: _compare("logistic"), draw=normalizers_figure),
        PaperFigure(name="tied", title="The tied model: massive activations",
                    runs=lambda: {f"D = {D}": PRESETS[f"paper-tied-{D}"].experiment
                                  for D in PAPER_TIED_SIZES},
                    draw=tied_figure),
        PaperFigure(name="regression", title="Regression: ill-conditioning polarizes more",
                    runs=lambda: {f"kappa = {k}": PRESETS[f"paper-regression-kappa-{k}"].experiment
                                  for k in PAPER_KAPPAS},
                    draw=regression_figure),
        PaperFigure(name="kl", title="Cross-entropy: the loss floors at H(p*)",
                    runs=lambda: {"softmax": PRESETS["paper-kl"].experiment},
                    draw=lambda r: kl_figure(r["softmax"])),
    )
}


def summarize(result: Result) -> dict:
    """The key numbers of a run: final ``max s``, entropy, loss, winner, status."""
    return {
        "max_s": float(result.s[-1].max()),
        "entropy": float(result.entropy[-1]),
        "loss": float(result.loss[-1]),
        "winner": result.winner,
        "t_final": float(result.t[-1]),
        "status": result.status,
        "message": result.message,
    }


def reproduce(directory: Path | str, *, images: bool = True, log: Callable[[str], None] = print) -> dict:
    """Run every paper figure and write it to ``directory``.

    Parameters
    ----------
    directory : path
        Created if missing. Receives ``NAME.html`` for each figure, ``NAME.png`` and
        ``NAME.svg`` when a browser is available, and ``summary.json``.
    images : bool
        Also export PNG and SVG (needs kaleido and a Chromium browser).
    log : callable
        Receives one line of progress per figure.

    Returns
    -------
    dict
        The summary: per figure, per run, the key numbers (as in ``summary.json``),
        plus ``seconds`` spent computing and drawing.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    summary: dict = {"figures": {}}
    # The images are drawn by Chromium while the next figure is computed (two cores at work):
    # the browser starts now, and each figure is exported as soon as it is drawn.
    export = _Export(out, log) if images else None
    start = time.perf_counter()
    for name, figure in PAPER_FIGURES.items():
        results = {label: simulate(e) for label, e in figure.runs().items()}
        fig = go.Figure(figure.draw(results), _validate=False)  # the figure dict, for its writers
        fig.update_layout(title_text=figure.title)
        fig.write_html(out / f"{name}.html", include_plotlyjs=True, full_html=True)
        if export is not None:
            export.add(name, fig)
        summary["figures"][name] = {label: summarize(r) for label, r in results.items()}
        log(f"{name}: {len(results)} runs, {time.perf_counter() - start:.2f} s so far")
    summary["seconds_compute"] = time.perf_counter() - start
    summary["images"] = export.finish() if export is not None else "not requested"
    summary["seconds"] = time.perf_counter() - start
    (out / "summary.json").write_text(strict_dumps(finite(summary), indent=2))
    return summary


class _Export:
    """PNG and SVG of each figure given, written in the background by the shared browser."""

    def __init__(self, out: Path, log: Callable[[str], None]) -> None:
        self.out, self.log, self.jobs = out, log, []
        self.missing = missing_for_images(find_browser())
        if self.missing is None:
            start_browser()
            self.pool = ThreadPoolExecutor(max_workers=TABS, thread_name_prefix="polarize-export")

    def add(self, name: str, fig: go.Figure) -> None:
        if self.missing is None:
            self.jobs.append((name, self.pool.submit(write_images, {self.out / f"{name}.{suffix}": fig
                                                                    for suffix in ("png", "svg")})))

    def finish(self) -> str:
        """What was written: ``"png, svg"``, or why not (also logged)."""
        if self.missing is not None:
            self.log(f"no PNG/SVG: {self.missing}; wrote HTML only")
            return f"skipped: {self.missing}"
        self.pool.shutdown(wait=True)
        errors = []
        for name, job in self.jobs:
            try:
                job.result()
            except Exception as exc:  # kaleido's failures come in many types; say what it said
                errors.append(f"{name}: {exc}")
        if errors:
            self.log(f"static export failed, those figures are HTML only: {'; '.join(errors)}")
            return f"failed: {'; '.join(errors)}"
        self.log(f"wrote PNG and SVG for {len(self.jobs)} figures")
        return "png, svg"
