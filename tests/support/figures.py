"""Runs and dashboards shared by the figure tests, each made once per process."""

from __future__ import annotations

from functools import cache

import plotly.graph_objects as go

from polarize import Experiment, simulate
from polarize.plots import dashboard
from polarize.plots.display import Display
from polarize.web.pages import by_name
from polarize.web.view import Columns, Plot

__all__ = ["dashboard_figure", "figure", "moving_state", "page_figure", "run", "trace"]


@cache
def run(**fields):
    """The run of ``Experiment(**fields)``."""
    return simulate(Experiment(**fields))


def dashboard_figure(result, **options) -> go.Figure:
    """``plots.dashboard`` of ``result`` (a plain dict) as a ``go.Figure``: validated in full, as the
    app never does (it sends the dict)."""
    return go.Figure(dashboard(result, **options))


@cache
def figure(**fields) -> go.Figure:
    """The dashboard of ``run(**fields)`` (``dashboard_figure``)."""
    return dashboard_figure(run(**fields))


def trace(fig: go.Figure, uid: str):
    """The one trace of ``fig`` whose ``uid`` is ``uid`` (as ``plots.find_trace`` finds it in a dict)."""
    (found,) = [t for t in fig.data if t.uid == uid]
    return found


def moving_state(fig: go.Figure, frame: go.Frame, uid: str):
    """The state of the moving trace ``uid`` in ``frame``.

    The trace is found in ``fig.data`` itself: ``fig.to_dict()`` (what ``plots.trace_index`` reads)
    copies every frame, and a test reading each frame's states made that copy per state, most of
    ``test_figures``' time."""
    (index,) = [i for i, t in enumerate(fig.data) if t.uid == uid]
    return frame.data[list(frame.traces).index(index)]


@cache
def page_figure(page: str, *, phone: bool) -> dict:
    """The main figure (a dict, as built, not fitted) of the page named ``page`` at its defaults, built
    for a phone or a desktop (the chart element's fit test serves it and fits it in Python too)."""
    spec = by_name(page)
    view = spec.show(spec.make_job(spec.defaults(None)), Display(width=390 if phone else 1280))
    return next(_plots(view.blocks))


def _plots(blocks):
    for block in blocks:
        if isinstance(block, Plot):
            yield block.figure
        elif isinstance(block, Columns):
            for column in block.columns:
                yield from _plots(column)
