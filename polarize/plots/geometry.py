"""The figures' geometry in pixels, in one place: the transport's band, the least plot and rows, a
phone's legend; converted to Plotly's paper fractions once (``fraction``).

Plotly places controls, legends and panels in fractions of the plot area, which change with the
figure's height: every distance here is in pixels, and a builder or the fit
(``present_figure.presented``) turns it into a fraction of the plot it is placed against.

The transport (``animation.animation_controls``) is one band of two rows: the buttons (play, pause,
reset, step back, step forward), then the time counter and the slider's rail. On a desktop it sits
below the plot, ``TRANSPORT_TOP`` px under it (the bottom panels' tick labels and axis titles
between), the speeds at the counter's right. On a phone it sits at the figure's top, ``EDGE`` px
under it, the speeds in a row of their own under the slider (beside a long counter they collided):
a figure built for a phone (``narrow=True``) is laid out so from the start.
"""

from __future__ import annotations

__all__ = ["BAND", "CONTROLS_MARGIN", "EDGE", "LEAST_PLOT", "LEAST_ROW", "ON_TOP", "PHONE_LEGEND_SHARE",
           "SLIDER_TOP", "SPEED_ROW", "TRANSPORT_TOP", "fraction", "margins"]

TRANSPORT_TOP = 68
"""Pixels below the plot where a desktop's buttons start (the bottom panels' tick labels and axis
titles above them); on a phone, the room kept under the plot for those."""
SLIDER_TOP = 114
"""Pixels below the plot where a desktop's slider (counter, then rail) starts."""
CONTROLS_MARGIN = 180
"""The bottom margin a desktop's transport needs."""
BAND = CONTROLS_MARGIN - TRANSPORT_TOP
"""Pixels of the transport's band: the buttons, then the counter and the rail."""
SPEED_ROW = 44
"""Pixels of a phone's row of speed buttons, under the slider."""
EDGE = 6
"""Pixels between a phone figure's top and its first button."""
ON_TOP = EDGE + BAND + SPEED_ROW
"""Pixels a phone's transport takes at the figure's top, above its titles and legend."""
LEAST_PLOT = 160
"""Fewest pixels left for a fitted figure's plot area: below it the margins shrink instead."""
LEAST_ROW = 56
"""Fewest pixels of a row of panels on a phone: a figure with more rows than its window holds at this
(a phone's twelve panels) is fitted taller than the window rather than crushed."""
PHONE_LEGEND_SHARE = 0.7
"""The share of a phone's width a legend's rows are estimated at: plotly aligns a legend's entries in
columns, which on a phone takes more rows than the estimate at the full width (Loss and
conditioning's 12 entries: 7 rows, estimated 4)."""


def fraction(px: float, plot: float) -> float:
    """``px`` pixels as a fraction of a plot area ``plot`` px tall (Plotly's paper units)."""
    return px / max(plot, 1.0)


def margins(top: int, *, narrow: bool, animated: bool = True) -> tuple[int, int]:
    """The top and bottom margins (px) of a figure whose titles and legend take ``top`` px above its
    plot: with a playing figure's transport below the plot (a desktop) or above everything (a phone).

    Returns
    -------
    (int, int)
        Top, bottom. A still figure: ``top`` and no room for a transport (0: the caller's own).
    """
    if not animated:
        return top, 0
    return (top + ON_TOP, TRANSPORT_TOP) if narrow else (top, CONTROLS_MARGIN)
