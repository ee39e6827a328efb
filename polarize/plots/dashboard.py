"""The Explorer's animated dashboard: five panels of one run that move together.

The panels (``panels.py``, one builder each) are laid out in one figure and
driven by plotly.js frames (play, pause, a time slider and three speeds), so
that the animation plays in the browser without a round trip to Python:

1. the scores ``s(t)`` on the simplex, with a comet tail and the current point;
2. each score ``s_i(t)`` against log time;
3. the entropy ``H(s(t))`` with the uniform value ``log n`` marked;
4. the repulsion panel: each token as a point (fitness ``u_i``, score ``s_i``),
   and for the logistic loss also its value projection ``p_i``; or, in its
   replicator mode (``replicator.py``), a signed bar ``u_i - s.u`` per token;
5. the loss on log-log axes.

Frames are spaced evenly in log time and carry only the traces that move;
axis ranges are fixed for the whole animation. Every trace has a ``uid``
(``"simplex-path"``, ``"scores-token3"``...): find one with ``lines.find_trace``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache
from typing import Any

from plotly.subplots import make_subplots

from polarize.diagnostics import Result
from polarize.plots import style
from polarize.plots.animation import FRAMES, animation_controls
from polarize.plots.geometry import (
    DASHBOARD_ROW_GAP,
    DASHBOARD_TOP,
    PHONE_DASHBOARD_PLOT,
    fraction,
    margins,
)
from polarize.plots.numbers import rounded
from polarize.plots.panels import (
    PanelTraces,
    RunFrames,
    entropy_panel,
    loss_panel,
    repulsion_panel,
    scores_panel,
    simplex_panel,
)
from polarize.plots.replicator import REPULSION_TITLES, replicator_panel
from polarize.science import format_time

__all__ = ["BUILDERS", "PANELS", "dashboard", "titles"]

PANELS: dict[str, str] = {
    "simplex": "Simplex of scores",
    "scores": "Scores s<sub>i</sub>(t)",
    "entropy": "Entropy H(s(t))",
    "repulsion": REPULSION_TITLES["fitness"],
    "loss": "Loss",
}
"""Panel key -> title, in the order the panels are laid out: one line each over a panel ~160 px wide
(1280 px window, sidebar open), or the rows' titles took the panels' room."""

BUILDERS: dict[str, Callable[[RunFrames, str, str], PanelTraces]] = {
    "simplex": simplex_panel, "scores": scores_panel, "entropy": entropy_panel,
    "repulsion": repulsion_panel, "loss": loss_panel,
}
"""Panel key -> its builder."""

_AXES = {key: (f"x{'' if i == 1 else i}", f"y{'' if i == 1 else i}") for i, key in enumerate(PANELS, start=1)}
"""Panel key -> its axes: the order in which ``make_subplots`` numbers the cells below."""


def dashboard(result: Result, *, frames: int = FRAMES, height: int = 780, repulsion: str = "fitness",
              narrow: bool = False) -> dict[str, Any]:
    """The animated five-panel dashboard of one run, as the plain figure dict that plotly.js reads.

    Plotly's figure objects validate every frame's traces as they are built, even unvalidated,
    which costs several times the run itself: the dict goes to the browser as it is, and
    ``Result.figure`` (the library's edge) wraps it in a ``go.Figure``. Validation is done by the
    tests (``go.Figure(figure)``), not on every run.

    Parameters
    ----------
    result : Result
        A simulated run (``K`` saved times, ``n`` tokens); a run that stopped
        early is shown up to where it stopped.
    frames : int
        Wanted number of animation frames, spaced evenly in log time.
    height : int
        Figure height in pixels (the width follows the page).
    repulsion : {"fitness", "replicator"}
        The repulsion panel's mode: points (fitness, score), or bars of ``u_i - s.u``.
    narrow : bool, optional
        For a phone: the simplex across the figure and the other panels two by two under it, in
        the order above, the plot ``PHONE_DASHBOARD_PLOT`` px tall (``height`` is then not used), the
        transport on top.

    Returns
    -------
    dict
        ``data``: static traces (polygon, full path, curves), then the moving ones, whose
        indices ``layout["meta"]["animated"]`` lists; every trace named by its ``uid``.
        ``frames``: one a shown time, named by its index into ``result.t``; play, pause and speed
        buttons and a time slider. ``layout["meta"]`` also records ``n``, ``frame_times`` and the
        panel axes. No token legend: the simplex's corners, numbered in the tokens' colours, are
        the key (a legend's rows above the panels took their room at 1280 x 720). The layout holds
        plotly's default template, as a ``go.Figure`` adds it (one dict shared by every figure: read
        it, never change it).
    """
    view = RunFrames.of(result, frames)
    top, bottom = margins(DASHBOARD_TOP, narrow=narrow)  # on a phone the transport on top
    height = PHONE_DASHBOARD_PLOT + top + bottom if narrow else height
    # Rows apart by pixels, not a share of the plot: the fit (``present_figure``) keeps them so.
    gap = None if narrow else round(fraction(DASHBOARD_ROW_GAP, height - top - bottom), 4)
    grid = _grid(repulsion, gap)  # first: it checks ``repulsion``
    builders = BUILDERS | ({"repulsion": replicator_panel} if repulsion == "replicator" else {})
    parts = {key: build(view, *_AXES[key]) for key, build in builders.items()}
    static = [{"showlegend": False} | trace for part in parts.values() for trace in part.static]
    moving = [trace for part in parts.values() for trace in part.moving]
    animated = list(range(len(static), len(static) + len(moving)))
    frame_list = [dict(name=str(int(k)), traces=animated,
                       data=[state for part in parts.values() for state in part.frame(int(k))])
                  for k in view.shown]
    layout = _layout(grid, parts, height=height, margin=dict(l=20, r=20, t=top, b=bottom))
    if narrow:
        _phone_text(layout, repulsion)
    layout.update(
        **animation_controls([str(int(k)) for k in view.shown],
                             [format_time(float(view.t[k])) for k in view.shown],
                             plot_height=height - top - bottom, narrow=narrow, top=top),
        meta=dict(n=view.n, animated=animated, frame_times=rounded(view.t[view.shown]),
                  panels={key: list(axes) for key, axes in _AXES.items()}),
        template=style.plotly_template(),
    )
    return dict(data=static + moving, layout=layout, frames=frame_list)


_PHONE_TITLES = {"simplex": None, "scores": None, "entropy": "Entropy H(s)", "loss": None, "repulsion": None}
"""Panel key -> its title on a phone, where the four small panels are about 130 px wide (None: as on a
desktop)."""
_PHONE_X = {"scores": "", "entropy": "", "loss": "time t (log)",
            "repulsion": {"fitness": "p<sub>i</sub> (rings: u<sub>i</sub>)", "replicator": None}}
"""Panel key -> its x axis title on a phone (None: as on a desktop; ""; none): the two time axes
side by side are labelled once, under the loss."""


def _phone_text(layout: dict[str, Any], repulsion: str) -> None:
    """Shorter titles and fewer x titles for a phone's small panels, and no repulsion key; in place."""
    layout["showlegend"] = False
    for note, key in zip(layout["annotations"], PANELS, strict=False):
        title = _PHONE_TITLES[key]
        title = title[repulsion] if isinstance(title, dict) else title
        note["font"] = style.font(-3, style.PALETTE.ink)  # a desktop's +2 wraps over ~130 px
        if title is not None:
            note["text"] = title
    for key, text in _PHONE_X.items():
        x = _AXES[key][0]
        text = text[repulsion] if isinstance(text, dict) else text
        if text is not None:
            layout["xaxis" + x[1:]]["title"] = {**layout["xaxis" + x[1:]].get("title", {}), "text": text}


@cache
def _grid_layout(repulsion: str, gap: float | None) -> dict[str, Any]:
    """The subplots' axes and titles (``make_subplots`` builds them once per mode, screen and gap):
    a phone's (``gap`` None) or a desktop's, its two rows ``gap`` of the plot apart."""
    # Either way make_subplots numbers the panels' axes in the order of PANELS (``_AXES``).
    grid = (dict(rows=3, cols=2, specs=[[{"colspan": 2}, None], [{}, {}], [{}, {}]], row_heights=[1.6, 1, 1],
                 horizontal_spacing=0.16, vertical_spacing=0.12) if gap is None else
            dict(rows=2, cols=3, specs=[[{"rowspan": 2}, {}, {}], [None, {}, {}]],
                 column_widths=[0.34, 0.33, 0.33], horizontal_spacing=0.09, vertical_spacing=gap))
    layout = make_subplots(**grid, subplot_titles=list(titles(repulsion).values())).layout.to_plotly_json()
    layout.pop("template", None)
    return layout


def _grid(repulsion: str, gap: float | None) -> dict[str, Any]:
    """A fresh copy of the subplots' layout, for one figure to fill in."""
    return copy.deepcopy(_grid_layout(repulsion, gap))


def titles(repulsion: str = "fitness") -> dict[str, str]:
    """Panel key -> title, in layout order, with the repulsion panel in the mode ``repulsion``."""
    if repulsion not in REPULSION_TITLES:
        raise ValueError(f"repulsion must be one of {', '.join(REPULSION_TITLES)}, got {repulsion!r}")
    return PANELS | {"repulsion": REPULSION_TITLES[repulsion]}



def _layout(layout: dict[str, Any], parts: dict[str, PanelTraces], *, height: int,
            margin: dict[str, int]) -> dict[str, Any]:
    """The subplots' layout with each panel's axes and notes, in the common style."""
    for ann in layout.get("annotations", []):
        ann["font"] = style.font(2, style.PALETTE.ink)
    for key, part in parts.items():
        x, y = _AXES[key]
        layout["xaxis" + x[1:]].update(part.axes["x"])
        # The small panels' titles say what they show: a y title, beside the ticks in the ~50 px
        # between two panels, ran into the panel on its left.
        layout["yaxis" + y[1:]].update(part.axes["y"] | ({"title": {"text": ""}} if key != "simplex" else {}))
        layout["annotations"] += part.annotations
    repulsion = layout["xaxis" + _AXES["repulsion"][0][1:]], layout["yaxis" + _AXES["repulsion"][1][1:]]
    layout.update(
        style.base_layout(height=height, margin=margin),
        showlegend=True,
        legend2=dict(x=repulsion[0]["domain"][1] - 0.005, y=sum(repulsion[1]["domain"]) / 2, xanchor="right",
                     yanchor="middle", bgcolor=style.PALETTE.veil, font=style.font(-3),
                     itemclick=False, itemdoubleclick=False),
    )
    return layout
