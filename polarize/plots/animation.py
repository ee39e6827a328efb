"""What makes a figure play: frame times, and the play, pause, speed and slider controls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from polarize.plots import style

__all__ = ["FRAMES", "PLOT_HEIGHT", "SPEEDS", "animation_controls", "frame_indices"]

FRAMES = 80
"""Default number of animation frames (fewer when the run saved fewer times)."""
SPEEDS: dict[str, int] = {"slow": 180, "normal": 80, "fast": 25}
"""Milliseconds per frame for the three speed buttons."""
PLOT_HEIGHT = 610
"""Pixels of plot area the controls' offsets below it are set for (the dashboard's, 780 - 50 - 120)."""


def frame_indices(t: np.ndarray, count: int = FRAMES) -> np.ndarray:
    """Indices of the saved times shown as frames, spaced evenly in log time.

    The engine saves times on a log-spaced grid (rounded to whole steps of
    ``lr`` at the start), so every ``m``-th saved time, counted back from the
    last, is evenly spaced in log time; ``m`` is chosen to give about ``count``
    frames. The first positive time is always kept, as the starting frame.

    Parameters
    ----------
    t : ndarray, shape (K,)
        Saved times, increasing, ``t[0] = 0``.
    count : int
        Wanted number of frames.

    Returns
    -------
    ndarray of int, shape (F,)
        Increasing indices into ``t`` of positive times; ``F`` is within a factor
        of about 1.5 of ``count`` (or all of them when fewer are saved);
        ``[0]`` when no time is positive.
    """
    t = np.asarray(t, dtype=float)
    positive = np.flatnonzero(t > 0)
    if len(positive) == 0:
        return np.array([0])
    every = max(1, round(len(positive) / max(count, 1)))
    picked = positive[::-1][::every][::-1]
    if picked[0] != positive[0]:
        picked = np.concatenate([positive[:1], picked])
    return picked


def animation_controls(names: Sequence[str], labels: Sequence[str], *,
                       plot_height: float = PLOT_HEIGHT) -> dict[str, Any]:
    """Play, pause and speed buttons and a time slider for an animated figure (layout entries).

    Parameters
    ----------
    names : sequence of str, length F
        The frames' names, in order.
    labels : sequence of str, length F
        The time shown by the slider at each frame.
    plot_height : float
        Pixels of the figure's plot area: Plotly places the controls in fractions of it, so
        they are scaled to sit the same distance in pixels below any plot.

    Returns
    -------
    dict
        ``updatemenus`` (play/pause, then the speeds) and ``sliders`` (one), to
        pass to ``layout.update``; they sit below the plot (leave a bottom margin
        of about 120 px).
    """

    def play(ms: int) -> list[Any]:
        return [None, dict(frame=dict(duration=ms, redraw=False), fromcurrent=True, mode="immediate",
                           transition=dict(duration=0))]

    below = PLOT_HEIGHT / plot_height  # fractions of the plot area, scaled to fixed pixel offsets
    pause = [[None], dict(frame=dict(duration=0, redraw=False), mode="immediate",
                          transition=dict(duration=0))]
    palette = style.PALETTE
    return dict(
        updatemenus=[
            dict(type="buttons", direction="right", showactive=False, x=0.0, y=-0.06 * below, xanchor="left",
                 yanchor="top", pad=dict(r=10, t=10), font=style.font(-1), bgcolor=palette.button,
                 buttons=[dict(label="▶ Play", method="animate", args=play(SPEEDS["normal"])),
                          dict(label="❚❚ Pause", method="animate", args=pause)]),
            dict(type="buttons", direction="right", showactive=True, active=1, x=0.0, y=-0.135 * below,
                 xanchor="left", yanchor="top", pad=dict(r=10, t=4), font=style.font(-3),
                 bgcolor=palette.button,
                 buttons=[dict(label=f"{name} \u25b6", method="animate", args=play(ms))
                          for name, ms in SPEEDS.items()]),
        ],
        sliders=[dict(
            active=0, x=0.24, len=0.76, y=-0.05 * below, xanchor="left", yanchor="top", pad=dict(t=10, b=0),
            currentvalue=dict(prefix="t = ", font=style.font(1, palette.ink), xanchor="left"),
            # The steps' labels would crowd the slider: the current value says the time instead.
            font=dict(size=1, color=style.TRANSPARENT), ticklen=0, minorticklen=0,
            tickcolor=style.TRANSPARENT,
            transition=dict(duration=0), bgcolor=palette.slider, activebgcolor=palette.slider_active,
            steps=[dict(method="animate", label=label,
                        args=[[name], dict(mode="immediate", frame=dict(duration=0, redraw=False),
                                           transition=dict(duration=0))])
                   for name, label in zip(names, labels, strict=True)],
        )],
    )
