"""An animated figure that keeps the run's end for Play: its curves are drawn as far as the frame shown.

A figure's traces that a builder marks ``meta={"reveal": ...}`` are drawn whole and left alone by
its frames: before Play, the time panels already show where the run ends (the Explorer's scores,
entropy and loss curves, its dotted path on the simplex), which a lecturer keeping the verdict for
after Play does not want told. ``revealed`` makes them move with the frames: each frame draws them
up to its own time, at the frames' times (one point a frame), and the last frame whole. Marks:

- ``"time"``: a curve over time (its ``x`` are times, as a log time axis shows them);
- ``"step"``: one point a saved time (a path), indexed by the saved index each frame is named by.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

__all__ = ["REVEAL", "revealed"]

REVEAL = "reveal"
"""The key of a trace's ``meta`` that marks it revealed with the frames (``"time"`` or ``"step"``)."""


def revealed(figure: dict[str, Any]) -> dict[str, Any]:
    """``figure`` with its marked traces drawn up to each frame's time (a new figure; ``figure`` is shared).

    Parameters
    ----------
    figure : dict
        An animated figure: ``frames`` named by saved index, each listing the ``traces`` it moves,
        and ``layout["meta"]["frame_times"]`` (one time a frame, as its traces' ``x`` show times).

    Returns
    -------
    dict
        Its marked traces start at the first frame (the start alone) and each frame carries them
        up to its time; a figure without frames or marks is returned as it is.
    """
    frames = figure.get("frames") or []
    marked = [(i, (trace.get("meta") or {}).get(REVEAL)) for i, trace in enumerate(figure["data"])]
    marked = [(i, how) for i, how in marked if how in ("time", "step")]
    if not frames or not marked:
        return figure
    times = np.asarray(figure["layout"]["meta"]["frame_times"], dtype=float)
    steps = [int(frame["name"]) for frame in frames]
    out = copy.copy(figure)
    data = [dict(trace) for trace in figure["data"]]
    upto: dict[int, list[list[Any]]] = {}
    for i, how in marked:
        x, y = list(data[i]["x"]), list(data[i]["y"])
        if how == "step":
            points = [min(k, len(x) - 1) for k in steps]
        else:  # the curve's point at each frame's time (its last at or before it)
            xs = np.asarray([np.nan if v is None else v for v in x], dtype=float)
            points = [int(np.searchsorted(xs, t * (1 + 1e-9), side="right")) - 1 for t in times]
        upto[i] = [_prefix(x, y, points[: j + 1], whole=j == len(frames) - 1) for j in range(len(frames))]
        data[i]["x"], data[i]["y"] = upto[i][0]
    out["data"] = data
    out["frames"] = [{**frame, "traces": [*frame["traces"], *upto],
                      "data": [*frame["data"], *({"type": data[i].get("type", "scatter"), "x": upto[i][j][0],
                                                   "y": upto[i][j][1]} for i in upto)]}
                     for j, frame in enumerate(frames)]
    return out


def _prefix(x: list[Any], y: list[Any], points: list[int], *, whole: bool) -> list[list[Any]]:
    """The curve at ``points`` (indices; -1: none yet), or all of it for the last frame."""
    if whole:
        return [x, y]
    kept = sorted({p for p in points if p >= 0})
    return [[x[p] for p in kept], [y[p] for p in kept]]
