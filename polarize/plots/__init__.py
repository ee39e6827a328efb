"""The figure toolkit: every Plotly figure of the app, the CLI and the paper, in one style.

- ``dashboard``: the Explorer's animated five-panel figure, and the small static figures;
- ``grid``: animated small multiples for the comparison pages;
- ``paper``: the paper's static figures (``polarize reproduce``).

Builders take results (``polarize.diagnostics.Result``) and return ``go.Figure``;
nothing here imports Streamlit.
"""

from polarize.plots import grid, paper
from polarize.plots.dashboard import (
    DIGITS,
    FONT_SIZE,
    FRAMES,
    PANELS,
    SPEEDS,
    DashboardTraces,
    animation_controls,
    comparison_figure,
    dashboard,
    frame_indices,
    project_to_polygon,
    round_significant,
    scores_figure,
    simplex_vertices,
    token_colors,
)
from polarize.plots.grid import (
    LOSS_COLORS,
    Line,
    Panel,
    animated_grid,
    descent_figure,
    kappa_figure,
    losses_figure,
    normalizers_figure,
    rate_figure,
    regression_figure,
    tied_figure,
)

__all__ = [
    "DIGITS",
    "FONT_SIZE",
    "FRAMES",
    "LOSS_COLORS",
    "PANELS",
    "SPEEDS",
    "DashboardTraces",
    "Line",
    "Panel",
    "animated_grid",
    "animation_controls",
    "comparison_figure",
    "dashboard",
    "descent_figure",
    "frame_indices",
    "grid",
    "kappa_figure",
    "losses_figure",
    "normalizers_figure",
    "paper",
    "project_to_polygon",
    "rate_figure",
    "regression_figure",
    "round_significant",
    "scores_figure",
    "simplex_vertices",
    "tied_figure",
    "token_colors",
]
