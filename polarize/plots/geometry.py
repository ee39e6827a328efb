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

__all__ = ["BAND", "CONTROLS_MARGIN", "DASHBOARD_ROW_GAP", "DASHBOARD_TOP", "DESCENT_ROW", "EDGE",
           "GRID_BOTTOM", "GRID_TOP", "HEATMAP_ROW", "KAPPA_ROW", "LEAST_PLOT", "LEAST_ROW", "LEGEND_GAP",
           "LEGEND_WIDTH", "LOSSES_ROW", "MASSIVE_ROW", "NORMALIZERS_ROW", "NOTE_ROOM", "ON_TOP",
           "PHONE_COLS", "PHONE_DASHBOARD_PLOT", "PHONE_HEATMAP_ROW", "PHONE_LEGEND_SHARE", "PHONE_ROW",
           "PHONE_TRAINING_PLOT", "PLOT_HEIGHT", "RATE_ROW", "REGRESSION_ROW", "ROW_GAP", "SHARED_GAP",
           "SLIDER_TOP", "SPEED_ROW", "TICK_LABELS", "TIED_ROW", "TITLE_LIFT", "TITLE_LINE",
           "TRAINING_AXIS_ROOM", "TRANSPORT_TOP", "fraction", "margins"]

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

PLOT_HEIGHT = 516
"""Pixels of plot area assumed when none is given."""
NOTE_ROOM = 180
"""Pixels a panel needs to hold a note or a legend inside it besides its data (``crowding``)."""

# ---- the small multiples (``multiples.animated_grid``), the comparison pages' grid -------------------

GRID_TOP, GRID_BOTTOM = 50, 40
"""Pixels above a grid's first row (its title) and, for a still grid, below its last."""
TITLE_LINE = 22
"""Pixels of one line of a panel's title."""
ROW_GAP = 72
"""Pixels between two rows of panels, besides the lower row's title: the upper row's ticks and x title."""
SHARED_GAP = 16
"""Pixels between two rows of panels over one time axis, besides the lower row's title: the axis is
labelled once, under the lowest (``crowding.uncrowded``)."""
LEGEND_GAP = 14
"""Pixels between a grid's legend and its first row's titles."""
TITLE_LIFT = 6
"""Pixels between a panel's top and its title (within ``LEGEND_GAP`` and the rows' gap)."""
LEGEND_WIDTH = {False: 770, True: 270}
"""Pixels of plot a legend from its left edge may fill before it wraps, by ``narrow``: on a 1280 px
projector with the sidebar open and on a phone (the figure less its margins and y tick labels)."""
PHONE_COLS, PHONE_ROW = 2, 220
"""Most columns and pixels per row on a phone, before the figure is fitted to its window (``web.fit``)."""
NORMALIZERS_ROW, LOSSES_ROW, KAPPA_ROW, REGRESSION_ROW = 270, 330, 280, 300
TIED_ROW, DESCENT_ROW, RATE_ROW, MASSIVE_ROW = 260, 300, 420, 340
"""Pixels per row of panels of each comparison figure on a desktop (``comparisons``; the massive
activations' beside the tied toy, ``transformer``)."""

# ---- the Explorer's dashboard (``dashboard``) --------------------------------------------------------

TICK_LABELS = 24
"""Pixels under a panel for its x tick labels (a log axis' powers of ten), its x title aside."""
DASHBOARD_TOP = 34
"""Pixels above the dashboard's panels: their one-line titles. No token legend: the simplex's corners,
numbered in the tokens' colours, are its key (a legend took one or two rows at 1280 x 720, four on a
phone, and left the time panels 31 px tall)."""
DASHBOARD_ROW_GAP = TICK_LABELS + SHARED_GAP + TITLE_LINE
"""Pixels between a desktop dashboard's two rows: the upper row's time ticks (the scores' over the
fitness panel; the entropy's time is labelled once, under the loss) and the lower row's one-line
titles. Its x titles are said once, under the lower row (``crowding.uncrowded``)."""
PHONE_DASHBOARD_PLOT = 486
"""Pixels of the dashboard's plot on a phone: the simplex across the figure, the four other panels two
by two under it; with its transport on top, it fits a 390 x 844 window under Streamlit's header."""

# ---- the attention-sink figures (``transformer``) ----------------------------------------------------

HEATMAP_ROW, PHONE_HEATMAP_ROW = 300, 260
"""Pixels of plot per row of attention heatmaps, on a desktop and on a phone."""
TRAINING_AXIS_ROOM = 70
"""Pixels below the training panel for its tick labels and x title (on a phone, above its legend)."""
PHONE_TRAINING_PLOT = 310
"""Pixels of the training panel's plot on a phone."""


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
