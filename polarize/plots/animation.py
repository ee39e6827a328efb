"""What makes a figure play: frame times, and the transport controls (play, pause, reset, step, speed).

The controls are plotly layout entries placed in pixels whatever the figure's height
(``plots.geometry``). On a desktop they are drawn below the plot in two bands:

- from ``TRANSPORT_TOP``: the transport buttons (play, pause, reset to the
  first frame, step back, step forward), alone in their band;
- from ``SLIDER_TOP``: the time counter in large type on the left and the
  speeds on the right, then the slider's rail, the width of the figure. The
  counter shares its band only with the speeds, at the other end, so it cannot
  run into a button or an axis title on any figure wider than the two (~420 px).

On a phone the same band is at the figure's top, the speeds in a row of their own under it.

Play, pause, reset and the speeds are plain plotly ``animate`` buttons. Plotly
cannot step relative to the current frame, so the two step buttons have
method ``"skip"`` and a ``name`` (``STEP_BACK``, ``STEP_FORWARD``): the transport
script (``polarize/web/transport.js``, in the app and in the offline HTML) hears their clicks and steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from polarize.plots import style
from polarize.plots.geometry import BAND, EDGE, PLOT_HEIGHT, SLIDER_TOP, TRANSPORT_TOP, fraction

__all__ = ["FRAMES", "SPEEDS", "STEP_BACK", "STEP_FORWARD",
           "animation_controls", "frame_indices"]

FRAMES = 80
"""Default number of animation frames (fewer when the run saved fewer times)."""
SPEEDS: dict[str, int] = {"slow": 180, "normal": 80, "fast": 25}
"""Milliseconds per frame for the three speed buttons."""
STEP_BACK, STEP_FORWARD = "step-back", "step-forward"
"""Names of the two step buttons (``layout.updatemenus[0].buttons[i].name``), for the transport script."""


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


def _still(names: list[str] | None) -> list[Any]:
    """``animate`` arguments that show frame ``names`` at once (None with ``[None]``: stop where it is)."""
    return [names, dict(frame=dict(duration=0, redraw=False), mode="immediate", transition=dict(duration=0))]


def _play(ms: int) -> list[Any]:
    return [None, dict(frame=dict(duration=ms, redraw=False), fromcurrent=True, mode="immediate",
                       transition=dict(duration=0))]


def animation_controls(names: Sequence[str], labels: Sequence[str], *,
                       plot_height: float = PLOT_HEIGHT, start: int = 0, narrow: bool = False,
                       top: float = 0) -> dict[str, Any]:
    """The transport controls and the time slider of an animated figure (layout entries).

    Parameters
    ----------
    names : sequence of str, length F
        The frames' names, in order.
    labels : sequence of str, length F
        The time shown by the counter at each frame.
    plot_height : float
        Pixels of the figure's plot area: Plotly places the controls in fractions of it, so
        they are scaled to sit the same distance in pixels below any plot.
    start : int
        The frame the slider shows first (the figure's own traces must be that frame's).
    narrow : bool
        For a phone: at the figure's top (``geometry.ON_TOP`` px of its top margin), the buttons'
        symbols only, the speeds without their arrows, in a row under the slider.
    top : float
        On a phone, pixels from the figure's top to its plot's (its top margin, ``geometry.margins``).

    Returns
    -------
    dict
        ``updatemenus`` (the transport buttons, then the speeds) and ``sliders`` (one), to
        pass to ``layout.update``; they need the margins ``geometry.margins`` gives.
    """
    names = list(names)
    # Where each row starts: below the plot (negative fractions of it), or above it on a phone.
    if narrow:
        buttons = 1 + fraction(top - EDGE, plot_height)
        slider = buttons - fraction(SLIDER_TOP - TRANSPORT_TOP, plot_height)
        speed_row = buttons - fraction(BAND + 4, plot_height)
    else:
        buttons, slider = -fraction(TRANSPORT_TOP, plot_height), -fraction(SLIDER_TOP, plot_height)
        speed_row = slider
    palette = style.PALETTE
    # On a phone the words would push the last buttons off the figure: the symbols alone fit, the
    # steps marked "1" (one frame), or Step forward would look just like Play.
    words = ("Play", "Pause", "Reset", "Step", "Step") if not narrow else ("", "", "", "1", "1")
    transport = [
        dict(label=f"\u25b6 {words[0]}".strip(), name="play", method="animate", args=_play(SPEEDS["normal"])),
        dict(label=f"\u275a\u275a {words[1]}".strip(), name="pause", method="animate", args=_still([None])),
        dict(label=f"|\u25c0 {words[2]}".strip(), name="reset", method="animate", args=_still(names[:1])),
        dict(label=f"\u25c0 {words[3]}".strip(), name=STEP_BACK, method="skip", args=[]),
        dict(label=f"{words[4]} \u25b6".strip(), name=STEP_FORWARD, method="skip", args=[]),
    ]
    band = dict(type="buttons", direction="right", yanchor="top", bgcolor=palette.button,
                bordercolor=palette.axis_line)
    # On a phone the speeds drop their arrows and take smaller type, to fit beside the time counter.
    arrow, size = ("", -2) if narrow else (" \u25b6", 0)
    speeds = [
        band | dict(showactive=True, active=1, x=1.0, y=speed_row, xanchor="right", pad=dict(t=0),
                    font=style.font(size),
                    buttons=[dict(label=f"{name}{arrow}", name=f"speed-{name}", method="animate",
                                  args=_play(ms)) for name, ms in SPEEDS.items()])]
    return dict(
        updatemenus=[
            band | dict(showactive=False, x=0.0, y=buttons, xanchor="left", pad=dict(r=6, t=0),
                        font=style.font(3),
                        buttons=transport),
            *speeds,
        ],
        sliders=[dict(
            active=start, x=0.0, len=1.0, y=slider, xanchor="left", yanchor="top",
            pad=dict(t=0, b=0),
            currentvalue=dict(prefix="t = ", font=style.font(9, palette.ink), xanchor="left", offset=8),
            # The steps' labels would crowd the slider: the counter says the time instead.
            font=dict(size=1, color=style.TRANSPARENT), ticklen=0, minorticklen=0,
            tickcolor=style.TRANSPARENT,
            transition=dict(duration=0), bgcolor=palette.slider, activebgcolor=palette.slider_active,
            steps=[dict(method="animate", label=label, args=_still([name]))
                   for name, label in zip(names, labels, strict=True)],
        )],
    )
