"""The Explorer's figure in Dash: the peer ``python benchmarks/browser.py --peers`` measures the app against.

A title, a Seed box, a "New random start" button and the Explorer's default dashboard for that
seed, built from polarize's public API (``polarize.dashboard(polarize.simulate(Experiment(seed=...)))``,
the figure the app's Explorer draws) and drawn by ``dcc.Graph``, which updates a figure in place with
``Plotly.react``. One callback answers both controls (a new seed draws the figure in one round trip),
the run in the server's process, each seed's figure cached, as a Dash user would write it; Dash's own
server (``app.run``), no other element. Dash is a benchmark-only dependency (``pip install
'polarize[bench]'``), never the app's.

    python benchmarks/apps/dash_app.py --port 8050
"""

from __future__ import annotations

import argparse
import functools
import random
import sys
from pathlib import Path

from dash import Dash, Input, Output, ctx, dcc, html, no_update

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository's ``polarize``

import polarize

SEEDS = 100_000
"""A new random start draws its seed below this, as the app's button does (``ui.starts.SEEDS``)."""
UPDATING = "Updating..."
"""The page's title while a callback is pending (Dash's ``update_title``): the benchmark waits it out."""
TITLE = "Explorer's figure in Dash"

_RANDOM = random.SystemRandom()


@functools.lru_cache(maxsize=64)
def figure(seed: int) -> dict:
    """The Explorer's default dashboard for ``seed`` (its default settings otherwise)."""
    return polarize.dashboard(polarize.simulate(polarize.Experiment(seed=seed)))


app = Dash(__name__, title=TITLE, update_title=UPDATING)
app.layout = html.Main([
    html.H1("Explorer's figure, nothing else"),
    html.Label(["Seed ", dcc.Input(id="seed", type="number", value=0, min=0, step=1, debounce=True)]),
    html.Button("New random start", id="reseed"),
    html.Div(dcc.Graph(id="dashboard", config={"displayModeBar": False}), className="main-figure"),
])


@app.callback(Output("dashboard", "figure"), Output("seed", "value"),
              Input("seed", "value"), Input("reseed", "n_clicks"))
def draw(seed: int | None, _clicks: int | None) -> tuple[dict, object]:
    """The figure of the seed typed, or of a new random seed (shown in the box) after the button."""
    if ctx.triggered_id == "reseed":
        new = _RANDOM.randrange(SEEDS)
        return figure(new), new
    return figure(int(seed or 0)), no_update


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8050)
    app.run(host="127.0.0.1", port=parser.parse_args().port, debug=False)
