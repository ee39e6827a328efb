"""The figure toolkit: every Plotly figure of the app, the CLI and the paper, in one style.

- ``style``: palette, fonts, axes and tick formats (``numbers``: rounding and ranges);
- ``lines``: ``Line``, ``Panel``, the per-token lines, traces found by ``uid``;
- ``multiples``: the one small-multiples renderer, animated or static;
- ``animation``: frame times and the play/pause/speed/slider controls;
- ``panels``, ``replicator`` and ``dashboard``: the Explorer's five-panel figure, one builder per panel
  (the repulsion panel has two: points, or the replicator lens's bars);
- ``comparisons``: the comparison pages' figures (also the paper's, static);
- ``portrait``: the phase portrait (field, rest points, runs, basin map, odds);
- ``transformer``: the attention-sink experiments (heatmaps, sink scores, training curves);
- ``maths``: the small static figures of the maths page;
- ``paper``: the paper's static figures (``polarize reproduce``); ``static``: PNG/SVG export;
- ``crowding`` and ``present_figure``: figures fitted to small panels and to their room;
- ``display``: the ``Display`` a page is shown on; ``geometry``: the pixel geometry (transport, rows).

Builders take results (``polarize.diagnostics.Result``) and return plotly's figure JSON as plain
dicts (``data``, ``layout``, ``frames``): one form from the builders through the fit to the page, never
validated on the way (the tests validate them with ``go.Figure``). A ``go.Figure`` is made only at the
library's edge (``Result.figure``, ``Ensemble.figure``, ``Basins.figure``, ``polarize reproduce``);
nothing here imports Streamlit.
"""

from polarize.plots import comparisons, paper, style
from polarize.plots.animation import FRAMES, SPEEDS, animation_controls, frame_indices
from polarize.plots.comparisons import (
    descent_figure,
    kappa_figure,
    losses_figure,
    normalizers_figure,
    rate_figure,
    regression_figure,
    tied_figure,
)
from polarize.plots.dashboard import PANELS, dashboard
from polarize.plots.lines import Line, Panel, find_trace, token_lines, trace_index
from polarize.plots.maths import comparison_figure, gap_figure, scores_figure
from polarize.plots.multiples import animated_grid
from polarize.plots.numbers import DIGITS, round_significant
from polarize.plots.polygon import project_to_polygon, simplex_vertices
from polarize.plots.style import FONT_SIZE, LOSS_COLORS, Palette, set_palette, token_colors

__all__ = [
    "DIGITS",
    "FONT_SIZE",
    "FRAMES",
    "LOSS_COLORS",
    "PANELS",
    "SPEEDS",
    "Line",
    "Palette",
    "Panel",
    "animated_grid",
    "animation_controls",
    "comparison_figure",
    "comparisons",
    "dashboard",
    "descent_figure",
    "find_trace",
    "frame_indices",
    "gap_figure",
    "kappa_figure",
    "losses_figure",
    "normalizers_figure",
    "paper",
    "project_to_polygon",
    "rate_figure",
    "regression_figure",
    "round_significant",
    "scores_figure",
    "set_palette",
    "simplex_vertices",
    "style",
    "tied_figure",
    "token_colors",
    "token_lines",
    "trace_index",
]
