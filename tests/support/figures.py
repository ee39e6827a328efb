"""Runs and dashboards shared by the figure tests, each made once per process."""

from __future__ import annotations

from functools import cache

import plotly.graph_objects as go

from polarize import Experiment, simulate
from polarize.plots import dashboard, trace_index

__all__ = ["dashboard_figure", "figure", "moving_state", "run", "trace"]


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
    """The state of the moving trace ``uid`` in ``frame``."""
    return frame.data[list(frame.traces).index(trace_index(fig.to_dict(), uid))]
