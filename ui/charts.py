"""The figures' hand-off to Streamlit: a figure built as a plain dict goes out as it is.

``st.plotly_chart`` validates a figure given as a dict (it builds a ``go.Figure`` of it:
for the Explorer's hundreds of frame traces, several times the run itself) but takes a
``go.Figure``'s ``to_dict()`` as valid. The app's heavy figures are built as plain dicts
(``polarize.plots.dashboard``) and validated once by the tests, so such a dict is
handed over inside a figure whose ``to_dict`` is that dict. A ``go.Figure`` is turned into
its dict once (a deep copy: 60 ms for the normalizers' eight animated panels), not on every
rerun of every session that shows it from the shared view cache.
"""

from __future__ import annotations

import weakref
from typing import Any

import plotly.graph_objects as go
import streamlit as st

__all__ = ["chart"]


class _Finished(go.Figure):
    """An empty ``go.Figure`` whose ``to_dict`` is a finished figure dict (shared; never changed)."""

    def __init__(self, spec: dict[str, Any]):
        super().__init__()
        self._spec = spec

    def to_dict(self) -> dict[str, Any]:
        # plotly.io.to_json (as Streamlit calls it) drops each trace's uid from what it is given:
        # it gets copies of the traces, never the cached figure's own.
        return {**self._spec, "data": [dict(trace) for trace in self._spec["data"]]}


_DICTS: dict[int, dict[str, Any]] = {}
"""``id`` of a live ``go.Figure`` -> its ``to_dict()`` (dropped with the figure)."""


def _as_dict(figure: go.Figure) -> dict[str, Any]:
    """The figure's dict, made once per figure object (views, and so figures, are never changed)."""
    key = id(figure)
    found = _DICTS.get(key)
    if found is None:
        found = _DICTS[key] = figure.to_dict()
        weakref.finalize(figure, _DICTS.pop, key, None)
    return found


def chart(figure: go.Figure | dict[str, Any], **options: Any) -> Any:
    """``st.plotly_chart`` of a figure or a figure dict, without validating or copying it again.

    Parameters
    ----------
    figure : go.Figure or dict
        A dict must be a finished figure of ``polarize.plots`` (``data``, ``layout``, maybe
        ``frames``); it is read, never changed, so a cached view may share it. A figure must
        not change after it is first drawn.
    **options
        Passed to ``st.plotly_chart``.
    """
    return st.plotly_chart(_Finished(figure if isinstance(figure, dict) else _as_dict(figure)), **options)
