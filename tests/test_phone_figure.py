"""A phone's animated figure with its transport on top (``polarize.plots.phone``): Play near the top."""

from __future__ import annotations

import pytest

from polarize import Experiment, simulate
from polarize.plots import dashboard
from polarize.plots.animation import TRANSPORT_TOP
from polarize.plots.phone import BAND, SPEED_ROW, controls_on_top


@pytest.fixture(scope="module")
def phone_figure():
    return dashboard(simulate(Experiment(n=5, d=5, seed=0, horizon=1e3)), narrow=True)


def _plot_px(layout) -> float:
    return layout.height - layout.margin.t - layout.margin.b


def test_the_transport_moves_above_the_panels_and_the_panels_keep_their_size(phone_figure):
    moved = controls_on_top(phone_figure)
    old, new = phone_figure.layout, moved.layout
    assert new.height == old.height + SPEED_ROW + 6 and _plot_px(new) == _plot_px(old)  # panels as they were
    assert new.margin.b == old.margin.b - BAND and new.margin.t > old.margin.t + BAND
    assert new.margin.b >= TRANSPORT_TOP  # the last panel's ticks and axis title keep their room
    plot = _plot_px(new)
    for menu in (*new.updatemenus, *new.sliders):
        above = (menu.y - 1) * plot  # pixels from the panels' top up to the control's top
        assert 0 < above <= new.margin.t, menu.y
    transport = new.updatemenus[0]
    play_top = new.margin.t - (transport.y - 1) * plot  # pixels from the figure's top
    legend_top = new.margin.t - (new.legend.y - 1) * plot
    assert new.legend.yref == "paper"  # moves with the plot and the controls if plotly widens the margin
    assert 0 < play_top < legend_top and legend_top - play_top >= BAND + SPEED_ROW - 1e-6  # legend under them
    (speeds,) = [m for m in new.updatemenus if m.buttons[0].name.startswith("speed-")]
    slider_bottom = play_top + BAND  # the band: the buttons, then the counter and the rail
    assert new.margin.t - (speeds.y - 1) * plot >= slider_bottom  # the speeds in a row of their own
    assert phone_figure.layout.updatemenus[0].y < 0  # the original is left alone


def test_a_figure_that_does_not_play_is_left_as_it_is():
    still = {"data": [], "layout": {"height": 400, "margin": {"t": 40, "b": 40}}}
    assert controls_on_top(still) is still


def test_a_legend_above_the_plot_keeps_its_rows_under_the_band():
    """Loss and conditioning's legend sits above the panels, placed from them, in as many rows as a
    phone needs: the band goes above all of it (its entries ran into the time counter)."""
    from polarize.plots.animation import animation_controls
    from polarize.plots.crowding import LEGEND_ROW, legend_rows

    plot, names = 900, [f"a long legend entry {i}" for i in range(6)]
    figure = {"data": [{"type": "scatter", "name": name} for name in names],
              "layout": {"height": plot + 60 + 130, "margin": {"t": 60, "b": 130}, "font": {"size": 12},
                         "legend": {"orientation": "h", "y": 1 + 30 / plot, "yanchor": "bottom"},
                         **animation_controls(["0", "1"], ["0", "1"], plot_height=plot)}}
    moved = controls_on_top(figure, width=330)["layout"]
    rows = legend_rows(names, size=12, width=330)
    assert rows >= 3  # more than the 60 px the figure kept for it
    legend_top = 30 + rows * LEGEND_ROW * 12  # px above the plot
    band_bottom = moved["margin"]["t"] - (moved["updatemenus"][0]["y"] - 1) * plot + BAND + SPEED_ROW
    assert moved["margin"]["t"] - band_bottom >= legend_top  # the legend between the band and the plot
    assert moved["margin"]["b"] >= TRANSPORT_TOP and moved["height"] == moved["margin"]["t"] + plot + \
        moved["margin"]["b"]


def test_a_figure_that_grows_more_with_its_transport_on_top_is_fitted_again():
    """A figure whose bottom margin is less than its controls' band (the attention heatmaps': 130 px)
    keeps room under its panels for their ticks, so it grows by more than ``GROWTH``: fitted for the
    room less ``GROWTH``, it ran past the window's bottom."""
    import numpy as np

    from polarize.plots.lines import Line, Panel
    from polarize.plots.multiples import animated_grid
    from polarize.plots.phone import GROWTH
    from polarize.web.present_view import FIGURE_GAP, HEADER, fitted_view, on_a_phone
    from polarize.web.view import Plot, View

    t = np.geomspace(0.1, 1e4, 40)
    panels = [Panel(title=f"panel {k}", lines=tuple(
        Line(x=t, y=1 / (1 + t / (k + j + 1)), name=f"entry {j}", legend=True) for j in range(3)))
        for k in range(4)]
    room, width = 768, 356
    figure = animated_grid(panels, cols=2, legend=True, narrow=True)
    figure.update_layout(margin_b=130)
    view = View(blocks=(Plot("grid", figure),))
    fitted = fitted_view(view, height=room - GROWTH, width=width, stacked=True)
    once = on_a_phone(fitted, width=width).blocks[0].figure
    assert once.layout.height > room  # the legend's rows: more than GROWTH
    again = on_a_phone(view, width=width, window=room + HEADER + FIGURE_GAP).blocks[0].figure
    assert again.layout.height <= room and again.layout.updatemenus[0].y > 1  # the transport on top
