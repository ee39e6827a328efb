"""The figures' hand-off to Streamlit: a figure built as a plain dict goes out as it is.

``st.plotly_chart`` validates a figure given as a dict (it builds a ``go.Figure`` of it:
for the Explorer's hundreds of frame traces, several times the run itself) but takes a
``go.Figure``'s ``to_dict()`` as valid. The app's heavy figures are built as plain dicts
(every builder of ``polarize.plots``) and validated once by the tests, so such a dict is
handed over inside a figure whose ``to_dict`` is that dict: not copied or validated on every
rerun of every session that shows it from the shared view cache.
"""

from __future__ import annotations

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


def chart(figure: dict[str, Any], **options: Any) -> Any:
    """``st.plotly_chart`` of a figure dict, without validating or copying it again.

    Parameters
    ----------
    figure : dict
        A finished figure of ``polarize.plots`` (``data``, ``layout``, ``frames``); it is read,
        never changed, so a cached view may share it.
    **options
        Passed to ``st.plotly_chart``.
    """
    return st.plotly_chart(_Finished(figure), **options)
