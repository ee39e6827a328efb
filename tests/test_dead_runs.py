"""A dead ReLU run (every score 0: no distribution) is drawn as gaps, never as a number it does not have."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go

from polarize import Experiment, simulate


def test_a_dead_relu_run_has_no_entropy_curve_rather_than_zero():
    """Every score 0 is no distribution: the entropy panel draws a gap there, not the 0 of a one-hot s."""
    from polarize.plots.dashboard import dashboard

    dead = simulate(Experiment(n=3, d=3, normalizer="relu", a0=[-1.0, -2.0, -0.5], horizon=10.0))
    assert not np.any(dead.s)  # independent of the figure: relu of negative logits is 0 throughout
    spec = dashboard(dead, frames=4)
    json.dumps(spec, allow_nan=False)  # the gaps are nulls, not NaN
    go.Figure(spec)  # and valid for plotly
    (curve,) = [t for t in spec["data"] if t.get("uid") == "entropy-curve"]
    assert curve["y"] and all(y is None for y in curve["y"])
    (index,) = [k for k, t in enumerate(spec["data"]) if t.get("uid") == "entropy-now"]
    now = [frame["data"][frame["traces"].index(index)] for frame in spec["frames"]]
    assert now and all(t["y"] == [None] for t in now)

    live = simulate(Experiment(n=3, d=3, normalizer="relu", a0=[0.3, -2.0, -0.5], horizon=100.0, seed=1))
    (curve,) = [t for t in dashboard(live, frames=4)["data"] if t.get("uid") == "entropy-curve"]
    assert None not in curve["y"]


def _moving(spec, uid):
    (index,) = [k for k, t in enumerate(spec["data"]) if t.get("uid") == uid]
    return [frame["data"][frame["traces"].index(index)] for frame in spec["frames"]]


def test_a_dead_relu_run_has_no_point_on_the_simplex_rather_than_its_centre():
    """The centre of the simplex is uniform scores; a run with every score 0 has no shares to place."""
    from polarize.plots.dashboard import dashboard

    dead = simulate(Experiment(n=3, d=3, normalizer="relu", a0=[-1.0, -2.0, -0.5], horizon=10.0))
    assert not np.any(dead.s)
    spec = dashboard(dead, frames=4)
    json.dumps(spec, allow_nan=False)
    (path,) = [t for t in spec["data"] if t.get("uid") == "simplex-path"]
    assert path["x"] and all(v is None for v in path["x"] + path["y"])
    for uid in ("simplex-now", "simplex-tail"):
        points = [v for t in _moving(spec, uid) for v in t["x"] + t["y"]]
        assert points and all(v is None for v in points), uid

    live = simulate(Experiment(n=3, d=3, normalizer="relu", a0=[0.3, -2.0, -0.5], horizon=100.0, seed=1))
    assert np.all(np.any(live.s != 0, axis=-1))  # some score is positive at every saved time
    spec = dashboard(live, frames=4)
    (path,) = [t for t in spec["data"] if t.get("uid") == "simplex-path"]
    assert None not in path["x"] + path["y"]
    assert all(None not in t["x"] for t in _moving(spec, "simplex-now"))


def test_a_dead_relu_run_is_one_story_in_every_export_and_word():
    """Issue 34 item 5: relu of negative logits is 0 for every token, a fixed point (checked here on the run's
    own scores, not by the code that writes the files): so no entropy, no effective support, no winner
    or leader, in the CSV, the JSON, to_pandas, the repr, the metrics and the captions."""
    import pandas as pd

    from polarize.web import export
    from polarize.web.pages import explorer
    from polarize.web.view import Caption, Metric

    dead = simulate(Experiment(n=3, d=3, normalizer="relu", a0=[-1.0, -2.0, -0.5], horizon=10.0))
    assert not np.any(dead.s) and dead.dead
    frame = dead.to_pandas("time")
    assert frame["entropy"].isna().all() and frame["effective_support"].isna().all()
    assert frame["leader"].isna().all()
    rows = [line.split(",") for line in export.trajectory_csv(dead).strip().split("\n")]
    column = rows[0].index("entropy")
    assert all(row[column] == "" for row in rows[1:])
    data = json.loads(export.trajectory_json(dead))
    assert all(v is None for v in data["entropy"] + data["effective_support"])
    assert "no winner" in repr(dead) and "winner token" not in repr(dead)

    view = explorer.explore(dead.experiment, frames=4)
    found = []

    def walk(block):
        if isinstance(block, (Metric, Caption)):
            found.append(block)
        for part in getattr(block, "columns", ()) or ():
            for inner in part:
                walk(inner)
    for block in view.blocks:
        walk(block)
    metrics = {m.label: m.value for m in found if isinstance(m, Metric)}
    assert metrics["Final entropy"] == metrics["Winning token"] == metrics["1 \u2212 max s"] == "\u2014"
    captions = [c.text for c in found if isinstance(c, Caption)]
    assert len(captions) == 5 and all("Every score is 0" in c for c in captions)
    assert not any("rich get richer" in c or "decays like" in c for c in captions)

    live = simulate(Experiment(n=3, d=3, normalizer="relu", a0=[0.3, -2.0, -0.5], horizon=100.0, seed=1))
    assert not live.dead and not live.to_pandas("time")["entropy"].isna().any()
    assert isinstance(live.to_pandas("time")["leader"].dtype, pd.Int64Dtype)


def test_the_normalizers_page_says_a_dead_run_is_dead():
    """A relu run from all-negative logits is dead (every score 0, checked on its scores): the table has
    no entropy for it and the caption calls it dead, not "off the simplex"."""
    import dataclasses

    from polarize.science.studies import compare_normalizers
    from polarize.web.pages import normalizers

    values = normalizers.defaults(None)
    e = dataclasses.replace(normalizers.experiment(values).resolved(), a0=[-1.0] * 10)
    rows = compare_normalizers(e, names=("relu", "softmax"))
    assert not np.any(rows[0].result.s[-1])
    drawn = normalizers.draw(values, rows)
    assert drawn.table[0]["final entropy"] is None and drawn.table[1]["final entropy"] is not None
    assert "relu (every score 0, so no distribution: a dead run)" in drawn.plots[0].caption
