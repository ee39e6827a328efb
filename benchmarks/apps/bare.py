"""Streamlit alone with the Explorer's figure: the floor for ``python benchmarks/browser.py --bare``.

A title, a Seed box and a "New random start" button in the sidebar (as the app's: a new seed below
``ui.starts.SEEDS``) and the Explorer's default dashboard for that seed, simulated in this process
and drawn by ``st.plotly_chart`` in a container keyed like the app's main figure. No other control,
no worker, no fitting to the window, no measuring, no other element: what a visit and a change take
here is what Streamlit and Plotly themselves take to show this figure on the machine (``streamlit run
benchmarks/apps/bare.py`` from the repository's root).
"""

import functools
import random
import sys
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository's ``polarize`` and ``ui``

from polarize.integrate import simulate
from polarize.plots.dashboard import dashboard
from polarize.web.pages import by_name
from polarize.web.pages.explorer import job
from ui.starts import SEEDS

EXPLORER = by_name("explorer")


class _Finished(go.Figure):
    """An empty ``go.Figure`` whose ``to_dict`` is a finished figure dict: ``st.plotly_chart`` sends it
    without validating it (given the dict, it would build a ``go.Figure`` of every frame, several times
    the run), as the app's own chart element never does."""

    def __init__(self, spec: dict[str, Any]):
        super().__init__()
        self._spec = spec

    def to_dict(self) -> dict[str, Any]:
        return {**self._spec, "data": [dict(trace) for trace in self._spec["data"]]}  # to_json drops uids


@functools.lru_cache(maxsize=64)
def figure(seed: int) -> dict:
    """The Explorer's default dashboard for ``seed`` (its default settings otherwise)."""
    values = {**EXPLORER.defaults(None), "seed": seed}
    return dashboard(simulate(job(values).experiment.resolved()))


def reseed() -> None:
    """A new random start: a new seed, set before the rerun draws the box."""
    st.session_state.seed = random.SystemRandom().randrange(SEEDS)


st.title("Explorer's figure, nothing else")
seed = st.sidebar.number_input("Seed", value=0, min_value=0, step=1, key="seed")
st.sidebar.button("New random start", on_click=reseed)
with st.container(key="main_figure"):
    st.plotly_chart(_Finished(figure(int(seed))), key="dashboard", theme=None,
                    config={"displayModeBar": False})
