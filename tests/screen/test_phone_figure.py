"""A phone's animated figure, built with its transport on top (``plots.geometry``): Play near the top,
and fitted to a phone's window once (``polarize.web.fit``)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
from support.figures import dashboard_figure

from polarize import Experiment, simulate
from polarize.plots.crowding import LEGEND_ROW, legend_rows
from polarize.plots.display import Display
from polarize.plots.lines import Line, Panel
from polarize.plots.multiples import animated_grid
from polarize.web.fit import fit
from polarize.web.view import Plot, View

PHONE = Display(width=390, height=844, column=356)
"""A phone's window, as the browser measures it."""


@pytest.fixture(scope="module")
def result():
    return simulate(Experiment(n=5, d=5, seed=0, horizon=1e3))


def _plot_px(layout) -> float:
    return layout.height - layout.margin.t - layout.margin.b


def _from_top(layout, y: float) -> float:
    """Pixels from the figure's top down to a paper ``y`` above the plot."""
    return layout.margin.t - (y - 1) * _plot_px(layout)


def _fitted(figure, display: Display = PHONE) -> go.Figure:
    """``figure`` (a figure dict, or a ``go.Figure``'s) as the fit shows it on ``display``, validated."""
    figure = figure.to_dict() if isinstance(figure, go.Figure) else figure
    return go.Figure(fit(View(blocks=(Plot("p", figure),)), display).blocks[0].figure)


def _band(layout) -> tuple[float, float]:
    """Pixels from the figure's top to its buttons' top, and to the bottom of its speeds' row."""
    (speeds,) = [m for m in layout.updatemenus if m.buttons[0].name.startswith("speed-")]
    return _from_top(layout, layout.updatemenus[0].y), _from_top(layout, speeds.y) + 40


@pytest.mark.parametrize("fitted", [False, True])
def test_a_phone_dashboard_has_its_transport_at_its_top(result, fitted):
    figure = dashboard_figure(result, narrow=True)
    layout = (_fitted(figure) if fitted else figure).layout
    for menu in (*layout.updatemenus, *layout.sliders):
        assert menu.y > 1 and 0 < _from_top(layout, menu.y) < layout.margin.t, menu.y  # above the panels
    play, speeds_bottom = _band(layout)
    assert 0 < play <= 10  # Play at the figure's top
    slider = _from_top(layout, layout.sliders[0].y)
    assert play < slider < speeds_bottom <= layout.margin.t  # buttons, slider, then the speeds' own row
    titles = [a for a in layout.annotations if a.yref in (None, "paper") and a.y is not None and a.y <= 1.2]
    assert titles and all(_from_top(layout, a.y) > speeds_bottom for a in titles if a.y >= 1)
    assert layout.margin.b < dashboard_figure(result).layout.margin.b  # no transport below: only tick room


def test_a_desktop_figure_keeps_its_transport_below():
    figure = go.Figure(animated_grid(_panels(4, 2), cols=2, legend=True))
    assert all(menu.y < 0 for menu in (*figure.layout.updatemenus, *figure.layout.sliders))


def _panels(count: int, entries: int, name: str = "entry") -> list[Panel]:
    t = np.geomspace(0.1, 1e4, 40)
    return [Panel(title=f"panel {k}", lines=tuple(
        Line(x=t, y=1 / (1 + t / (k + j + 1)), name=f"{name} {j}", legend=True) for j in range(entries)))
        for k in range(count)]


def test_a_legend_above_the_plot_keeps_its_rows_under_the_band():
    """Loss and conditioning's legend sits above the panels, placed from them, in as many rows as a
    phone needs: the band stays above all of it (its entries ran into the time counter)."""
    figure = _fitted(animated_grid(_panels(4, 6, "a long legend entry"), cols=2, legend=True, narrow=True))
    layout = figure.layout
    names = [f"a long legend entry {j}" for j in range(6)]
    rows = legend_rows(names, size=layout.legend.font.size, width=0.5 * PHONE.column_width)
    assert rows >= 3
    legend_top = _from_top(layout, layout.legend.y) - rows * LEGEND_ROW * layout.legend.font.size
    assert _band(layout)[1] <= legend_top
    assert layout.height <= PHONE.figure_room or layout.meta["taller"]


def test_a_phone_figure_is_fitted_to_its_window_once():
    """A figure whose bottom margin was wider than its ticks need (the attention heatmaps') used to
    grow past the window when its transport was moved on top after the fit: fitted again. Built with
    its transport on top, one fit makes it the window's height."""
    figure = go.Figure(animated_grid(_panels(4, 3), cols=2, legend=True, narrow=True))
    figure.update_layout(margin_b=130)
    fitted = _fitted(figure)
    assert fitted.layout.height <= PHONE.figure_room and fitted.layout.updatemenus[0].y > 1


def test_a_figure_that_does_not_play_has_no_transport():
    still = go.Figure(animated_grid(_panels(2, 2), cols=2, animated=False, narrow=True))
    assert not still.layout.updatemenus and not still.layout.sliders
