"""Figure layouts for the window's size class: stacked panels on a phone, titles and notes that fit.

The browser half (no text box overlaps another at three window sizes) is tests/browser/test_layout_browser.py;
here the layouts themselves: panels one column wide on a narrow screen, never two panels in one
place, the screen passed from the renderer to every figure a page builds.
"""

from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go
import pytest
from support.figures import dashboard_figure

from polarize import Experiment, simulate
from polarize.config import ConfigError
from polarize.plots import style
from polarize.plots.dashboard import PANELS
from polarize.plots.display import Display
from polarize.plots.lines import Line, Panel
from polarize.plots.multiples import _line_chars, animated_grid, legend_height
from polarize.plots.transformer import training_figure
from polarize.web.fit import fit
from polarize.web.page import PageSpec
from polarize.web.view import Plot, View

PHONE = Display(width=390, height=844, column=356)
"""A phone's window, as the browser measures it."""


def _fitted(figure, display: Display):
    """``figure`` (a figure dict, or a ``go.Figure``'s) as the fit shows it on ``display`` (the page's only
    figure), validated."""
    figure = figure.to_dict() if isinstance(figure, go.Figure) else figure
    return go.Figure(fit(View(blocks=(Plot("p", figure),)), display).blocks[0].figure)


def _cells(figure) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Each panel's (x domain, y domain), in axis order."""
    layout = figure.layout
    out = []
    for k in range(1, 100):
        suffix = "" if k == 1 else str(k)
        x, y = layout[f"xaxis{suffix}"] if f"xaxis{suffix}" in layout else None, None
        if x is None:
            break
        y = layout[f"yaxis{suffix}"]
        out.append((tuple(x.domain), tuple(y.domain)))
    return out


def _apart(cells) -> bool:
    """No two panels share any area."""
    for i, (xa, ya) in enumerate(cells):
        for xb, yb in cells[i + 1:]:
            if min(xa[1], xb[1]) - max(xa[0], xb[0]) > 1e-9 and min(ya[1], yb[1]) - max(ya[0], yb[0]) > 1e-9:
                return False
    return True


def _panels(count: int, title: str = "panel", note: str = "") -> list[Panel]:
    t = np.geomspace(0.1, 1e4, 40)
    return [Panel(title=f"{title} {k}", note=note,
                  lines=(Line(x=t, y=1 / (1 + t / (k + 1)), name=f"curve {k}", legend=True),))
            for k in range(count)]


@pytest.fixture(scope="module")
def result(run):
    return run(Experiment())


def _phone_cells(cells) -> bool:
    """The simplex across the figure on top, the four other panels two by two under it, in order."""
    (simplex_x, simplex_y), rest = cells[0], cells[1:]
    columns = sorted({x for x, _ in rest})
    rows = sorted({y for _, y in rest}, reverse=True)
    return (simplex_x == (0.0, 1.0) and len(columns) == len(rows) == 2
            and all(y[1] <= simplex_y[0] for _, y in rest)
            and [(columns.index(x), rows.index(y)) for x, y in rest] == [(0, 0), (1, 0), (0, 1), (1, 1)])


def test_the_dashboard_fits_a_phone_with_its_simplex_on_top(result):
    wide = _cells(dashboard_figure(result, narrow=False))
    narrow = _cells(dashboard_figure(result, narrow=True))
    assert len(wide) == len(narrow) == len(PANELS)
    assert len({x for x, _ in wide}) == 3  # three columns on a wide screen
    assert _phone_cells(narrow)
    assert _apart(wide) and _apart(narrow)
    figure = dashboard_figure(result, narrow=True)
    # With its transport on top, it fits a 390 x 844 window under Streamlit's header as it was built.
    assert _fitted(figure, PHONE).layout.height == figure.layout.height
    assert figure.layout.showlegend is False  # the simplex's numbered corners are the key
    labels = next(t for t in figure.data if t.uid == "simplex-labels")
    assert list(labels.text) == [str(i) for i in range(result.s.shape[1])]
    # The four small panels' titles and axis titles fit their ~130 px (short, or none).
    small = [a.text for a in figure.layout.annotations[1:5]]
    assert all(len(re.sub(r"<[^>]+>", "", text)) <= 16 for text in small), small


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 12])
def test_each_corner_s_label_sits_on_the_side_of_its_marker_away_from_the_centre(n):
    """Placed by plotly.js in pixels past the marker (``textposition``), never in data units: a phone's
    small simplex had its numbers on its markers."""
    result = simulate(Experiment(n=n, d=n, horizon=10.0))
    figure = dashboard_figure(result, frames=3, narrow=True)
    labels = next(t for t in figure.data if t.uid == "simplex-labels")
    vertices = next(t for t in figure.data if t.uid == "simplex-vertices")
    assert list(labels.x) == list(vertices.x) and list(labels.y) == list(vertices.y)
    assert labels.marker.size == vertices.marker.size and labels.marker.opacity == 0
    way = {"top": 1, "middle": 0, "bottom": -1, "left": -1, "center": 0, "right": 1}
    for x, y, position in zip(labels.x, labels.y, labels.textposition, strict=True):
        vertical, horizontal = position.split()
        side = np.array([way[horizontal], way[vertical]], dtype=float)
        out = np.array([x, y]) if n > 2 else np.array([0.0, -1.0])  # a segment's labels go below it
        cos = side @ out / (np.linalg.norm(side) * np.linalg.norm(out))
        assert cos >= np.cos(np.pi / 8) - 1e-9, (n, x, y, position)  # within an eighth of a turn of outward


@pytest.mark.parametrize("cols", [2, 3, 4, 5])
def test_grids_take_two_columns_on_a_phone(cols):
    panels = _panels(8)
    wide = _cells(go.Figure(animated_grid(panels, cols=cols, legend=True)))
    narrow_figure = go.Figure(animated_grid(panels, cols=cols, legend=True, narrow=True))
    narrow = _cells(narrow_figure)
    assert len({x for x, _ in wide}) == cols
    assert len({x for x, _ in narrow}) == 2 and len(narrow) == 8 and len({y for _, y in narrow}) == 4
    assert _apart(wide) and _apart(narrow)
    # Rows over one time axis sit closer together than a desktop's (which label each row's axis).
    plot = narrow_figure.layout.height - narrow_figure.layout.margin.t - narrow_figure.layout.margin.b
    tops = sorted({y[1] for _, y in narrow}, reverse=True)
    bottoms = sorted({y[0] for _, y in narrow}, reverse=True)
    assert all((bottom - top) * plot < 72 for bottom, top in zip(bottoms, tops[1:], strict=False))
    assert min(y[1] - y[0] for _, y in narrow) * plot >= 150


def test_long_titles_and_notes_wrap_to_their_panel_width():
    title = "lr = 0.1: solid flow, dashed descent, and a good deal more besides"
    note = "descent diverges: its loss grew from 0.5 to 1e9 after 40 steps, so it is drawn up to there"
    for cols, narrow in ((4, False), (3, False), (1, True)):
        figure = go.Figure(animated_grid(_panels(cols, title=title, note=note), cols=cols, narrow=narrow))
        texts = [a.text for a in figure.layout.annotations]
        titles = [t for t in texts if t.startswith("lr =")]
        notes = [t for t in texts if t.startswith("descent")]
        assert len(titles) == len(notes) == cols
        for text, chars in [(t, _line_chars(cols, narrow=narrow)) for t in titles] + [
                (t, _line_chars(cols, narrow=narrow, note=True)) for t in notes]:
            lines = text.split("<br>")
            assert len(lines) >= 2 and all(len(line) <= chars for line in lines), (cols, text)
    # Two-line titles get the room of two lines: the first row starts lower than with one.
    short = go.Figure(animated_grid(_panels(3), cols=3))
    long = go.Figure(animated_grid(_panels(3, title=title), cols=3))
    assert long.layout.margin.t > short.layout.margin.t


def test_a_log_axis_over_two_decades_labels_whole_decades_only():
    t = np.geomspace(1, 1e3, 30)
    panel = Panel(title="p", log_y=True, lines=(Line(x=t, y=np.geomspace(1e-3, 0.5, 30), name="gap"),))
    axis = go.Figure(animated_grid([panel], cols=1, animated=False)).layout.yaxis
    assert axis.dtick == 1  # not "D2": its 2s and 5s ran into the decades' labels in a short panel
    short = Panel(title="p", log_y=True, lines=(Line(x=t, y=np.geomspace(0.1, 0.5, 30), name="gap"),))
    assert go.Figure(animated_grid([short], cols=1, animated=False)).layout.yaxis.dtick == "D2"


def test_a_page_builds_its_view_for_the_display_it_is_given():
    seen = []
    spec = PageSpec(name="probe", nav_title="Probe", title="Probe", icon=":material/check:", url_path="probe",
                    view=lambda job, narrow: seen.append(narrow) or View())
    spec.show((), Display(width=390, height=844))
    spec.show((), Display(width=1920, height=1080, presenting=True))
    spec.show(())
    assert seen == [True, False, False]  # a phone's window: panels stacked; a projector's: not


@pytest.mark.parametrize(("field", "value"), [("presenting", "yes"), ("width", -5), ("height", 1.5),
                                              ("top", 0), ("column", "wide"), ("dark_page", 1)])
def test_a_display_is_validated_once_naming_its_field(field, value):
    with pytest.raises(ConfigError) as caught:
        Display(**{field: value})
    assert caught.value.field == field
    assert Display.of(**{field: value}) == Display()


def test_a_display_says_its_mode_and_room():
    from polarize.plots.display import Mode

    assert Display().mode is Mode.NORMAL and (Display().width, Display().height) == (1280, 720)
    assert Display(presenting=True).mode is Mode.PRESENT
    assert Display(width=390, height=844, presenting=True).mode is Mode.PHONE  # the phone's layout wins
    assert Display(top=200).figure_room == 720 - 200 - Display().gap
    # Less than half the window below what is above it: the figure takes the window under the header.
    assert Display(top=500).figure_room == 720 - Display().header - Display().gap
    assert Display(dark_page=True).dark and Display(dark_page=True, presenting=True).dark
    assert not Display(presenting=True).dark


def _plot_px(figure) -> float:
    return figure.layout.height - figure.layout.margin.t - figure.layout.margin.b


@pytest.mark.parametrize("narrow", [False, True])
def test_a_grids_legend_has_room_above_its_titles_at_any_width(narrow):
    """Plotly pushes the margin for a legend that has none and shrinks the plot: the row gaps
    (fractions of it) then lose the pixels that hold an x title above the next panel's title."""
    t = np.geomspace(0.1, 1e4, 40)
    one = _panels(2)
    many = [*one, Panel(title="more", lines=tuple(Line(x=t, y=t / k, name=f"a much longer curve name {k}",
                                                       legend=True) for k in range(1, 9)))]
    tops = []
    for panels in (one, many):
        figure = go.Figure(animated_grid(panels, cols=2, legend=True, narrow=narrow, animated=False))
        names = list(dict.fromkeys(line.name for p in panels for line in p.lines))
        legend = figure.layout.legend
        above = (legend.y - 1) * _plot_px(figure) + legend_height(names, size=legend.font.size, narrow=narrow)
        assert legend.yanchor == "bottom" and above <= figure.layout.margin.t
        tops.append(figure.layout.margin.t)
    assert tops[1] > tops[0]  # ten long entries take more rows than two, at either width
    # Without a legend, no room for one.
    assert go.Figure(animated_grid(one, cols=2, narrow=narrow, animated=False)).layout.margin.t < tops[0]


def _sinks_record(layers: int = 2, heads: int = 4) -> dict:
    rng = np.random.default_rng(0)
    return {"history": [{"step": step, "sink_scores": rng.uniform(size=(layers, heads)).tolist(),
                         "accuracy": step / 2000} for step in range(0, 2001, 250)]}


def test_the_sinks_training_legend_sits_under_its_x_title_on_a_phone():
    figure = go.Figure(training_figure(_sinks_record(), narrow=True))
    legend, margin = figure.layout.legend, figure.layout.margin
    below = -legend.y * _plot_px(figure)  # pixels from the plot's bottom to the legend's top
    assert legend.orientation == "h" and legend.yanchor == "top"
    assert below >= 60  # the tick labels and "training step" first
    names = [trace.name for trace in figure.data]
    assert margin.b >= below + legend_height(names, size=legend.font.size, narrow=True)
    assert _plot_px(figure) >= 300  # the legend takes its own room, not the panel's
    assert go.Figure(training_figure(_sinks_record())).layout.legend.y is None  # beside the panel: desktop


def test_the_replicator_scale_has_a_row_of_its_own_above_the_notes(result):
    """In a dashboard panel about 160 px wide the scale ran into "logit grows" and the tick "1"; on a
    phone, fitted to its window, the panel is too short for either: both go (``crowding.uncrowded``)."""
    phone = _fitted(dashboard_figure(result, repulsion="replicator", narrow=True), PHONE)
    assert not [a for a in phone.layout.annotations if "logit grows" in a.text]
    assert next(t for t in phone.data if t.uid == "replicator-scale").visible is False
    for narrow in (False,):
        figure = dashboard_figure(result, repulsion="replicator", narrow=narrow)
        scale = next(t for t in figure.data if t.uid == "replicator-scale")
        axis = figure.layout[f"yaxis{scale.yaxis[1:]}"]
        notes = [a for a in figure.layout.annotations if "logit grows" in a.text]
        panel_px = (axis.domain[1] - axis.domain[0]) * _plot_px(figure)
        px = panel_px / (axis.range[1] - axis.range[0])  # pixels a unit of the bars
        row = 1.2 * scale.textfont.size
        assert len(notes) == 1 and (scale.y[0] - notes[0].y) * px >= row, narrow
        assert (axis.range[1] - scale.y[0]) * px >= row / 2  # inside the panel
        assert len(scale.text[0]) <= 16  # "bars ÷ 0.069": narrower than the panel


def test_wrapping_never_cuts_text_and_tags_take_no_room():
    """Flow vs descent's lower titles were cut to "lr = 0.1: |s<sub>gd</sub> -..." by a wrap that
    counted the tags as letters and gave up after two lines."""
    title = "lr = 0.1: |s<sub>gd</sub> \u2212 s<sub>flow</sub>|"
    wrapped = style.wrap(title, 20)
    assert wrapped.replace("<br>", " ") == title  # every word kept, each tag whole
    shown = [re.sub(r"<[^>]+>", "", line) for line in wrapped.split("<br>")]
    assert shown == ["lr = 0.1: |sgd \u2212", "sflow|"]
    note = ("descent ends on token 0, the flow on token 1: the step is too large to follow the flow, "
            "and so on for a while longer")
    lines = style.wrap(note, 20).split("<br>")
    assert " ".join(lines) == note and all(len(line) <= 20 for line in lines) and len(lines) > 4


def test_a_phones_step_forward_does_not_look_like_play():
    from polarize.plots.animation import animation_controls

    buttons = animation_controls(["0", "1"], ["0", "1"], narrow=True)["updatemenus"][0]["buttons"]
    labels = [b["label"] for b in buttons]
    assert len(set(labels)) == len(labels)  # five buttons, five different faces
    assert all(len(label) <= 3 for label in labels)  # still symbols, to fit a phone's row


def test_a_phone_has_the_speed_buttons_too():
    from polarize.plots.animation import SPEEDS, animation_controls

    for narrow in (False, True):
        menus = animation_controls(["0", "1"], ["0", "1"], narrow=narrow)["updatemenus"]
        (speeds,) = [m for m in menus if m["buttons"][0]["name"].startswith("speed-")]
        assert [b["name"] for b in speeds["buttons"]] == [f"speed-{name}" for name in SPEEDS]
        durations = [b["args"][1]["frame"]["duration"] for b in speeds["buttons"]]
        assert durations == list(SPEEDS.values()), narrow


def test_a_y_title_longer_than_its_short_panel_loses_its_brackets_then_goes():
    from polarize.plots.crowding import uncrowded

    layout = {"font": {"size": 12}, "yaxis": {"domain": [0, 0.1], "title": {"text": "loss (log scale)"}},
              "yaxis2": {"domain": [0.2, 0.3], "title": {"text": "a very long title"}},
              "yaxis3": {"domain": [0.4, 1.0], "title": {"text": "entropy (nats)"}}}
    uncrowded(layout, [], plot_px=600, width=800)  # panels 60, 60 and 360 px tall
    assert layout["yaxis"]["title"]["text"] == "loss"
    assert layout["yaxis2"]["title"]["text"] == ""
    assert layout["yaxis3"]["title"]["text"] == "entropy (nats)"  # room enough: kept whole


@pytest.mark.parametrize("low, high, tall", [(-2.382, 3.9019, 77.0), (-2.382, 3.9019, 97.0),
                                            (-0.7, 0.4, 60.0), (-130.0, 260.0, 80.0), (0.013, 0.0211, 70.0)])
def test_a_short_linear_panel_still_labels_two_values_of_its_axis(low, high, tall):
    """The presented Normalizers' "sum" panel (77 px tall, 20 px type) read "0" alone: at most three
    ticks, plotly.js took a step of 5 over -2.4 to 3.9. Two labels at least, never closer than 1.2
    heights, at steps of 1, 2, 2.5 or 5 times a power of ten."""
    from polarize.plots.crowding import uncrowded

    font = 20.0
    axis = {"domain": [0, 1], "range": [low, high], "tickfont": {"size": font}}
    layout = {"font": {"size": font}, "yaxis": axis}
    uncrowded(layout, [], plot_px=tall, width=800)
    axis = layout["yaxis"]
    if "dtick" in axis:  # our own step: every multiple of it in the range is labelled
        step = axis["dtick"]
        assert axis["tick0"] == 0 and axis["tickmode"] == "linear"
        assert round(step / 10 ** np.floor(np.log10(step)), 6) in (1, 2, 2.5, 5)
    else:  # plotly's, for at most ``nticks``: the first of 2, 5, 10 x 10^k past (high - low) / nticks
        rough = (high - low) / axis["nticks"]
        base = 10 ** np.floor(np.log10(rough))
        step = base * min(m for m in (2, 5, 10) if m > rough / base)
    labels = [k * step for k in range(int(np.ceil(low / step)), int(np.floor(high / step)) + 1)]
    assert len(labels) >= 2, (axis, labels)
    assert step * tall / (high - low) >= 1.2 * font, axis


def test_the_tied_figure_keeps_its_three_quantities_as_columns_on_a_phone():
    """One row per size D, titled once above its columns, each row naming its D: it fits a phone."""
    from polarize import simulate
    from polarize.plots import comparisons

    runs = {D: simulate(Experiment(model="tied", n=D, d=D, horizon=10.0)) for D in (3, 4, 5, 6)}
    figure = go.Figure(comparisons.tied_figure(runs, frames=5, narrow=True))
    cells = _cells(figure)
    assert len({x for x, _ in cells}) == 3 and len({y for _, y in cells}) == 4 and _apart(cells)
    titles = [a.text for a in figure.layout.annotations if a.yref == "paper" and a.y > 0.9]
    assert len(titles) == 3 and not any("D =" in t for t in titles)
    y_titles = [figure.layout[f"yaxis{'' if k == 1 else k}"].title.text for k in range(1, 13, 3)]
    assert y_titles == [f"D = {D}" for D in runs]
    fitted = _fitted(figure, PHONE)
    assert "taller" not in fitted.layout.meta and fitted.layout.height <= PHONE.figure_room


def test_the_attention_heatmaps_keys_and_queries_are_readable():
    """Their tick labels were 11 px (9 to 10 px drawn, rotated): at least 12 on a projector."""
    from polarize.web.pages import by_name

    spec = by_name("sinks")
    view = fit(spec.show(spec.make_job(spec.defaults(None))), Display())
    (attention,) = [plot.figure for plot in view.plots() if plot.key == "sinks-attention"]
    layout = attention.layout.to_plotly_json() if hasattr(attention, "layout") else attention["layout"]
    sizes = [layout[key]["tickfont"]["size"] for key in layout if key.startswith(("xaxis", "yaxis"))]
    assert sizes and min(sizes) >= 12, sizes


PROJECTORS = [Display(top=230, column=760), Display(presenting=True, top=90, column=1190), PHONE]
"""A 1280 x 720 projector as measured, in normal and in presentation mode, and a phone."""


@pytest.mark.parametrize("display", PROJECTORS, ids=["projector", "presented", "phone"])
def test_the_attention_panels_titles_stay_in_place_as_it_plays(display):
    """Each frame of the Sinks heatmaps carries its panels' titles (their sink scores at that step):
    fitted, they stayed where they were built while the layout's moved, so after one step the second
    row's titles jumped 23 px up onto the first row's keys (issue 45)."""
    from polarize.web.pages import by_name

    spec = by_name("sinks")
    view = fit(spec.show(spec.make_job(spec.defaults(None)), display), display)
    (figure,) = [plot.figure for plot in view.plots() if plot.key == "sinks-attention"]
    placed = [(note["x"], note["y"]) for note in figure["layout"]["annotations"] if note.get("text")]
    assert len({y for _, y in placed}) == (4 if display.phone else 2)  # rows of panels, titled
    for frame in figure["frames"]:
        assert [(note["x"], note["y"]) for note in frame["layout"]["annotations"]] == placed, frame["name"]


@pytest.mark.parametrize("display", PROJECTORS, ids=["projector", "presented", "phone"])
@pytest.mark.parametrize("page", ["tied", "losses"])
def test_panel_titles_stay_clear_of_the_panels_above(display, page):
    """At 1280 x 720 each row's panel titles on Massive activations were drawn across the panels
    above (four rows fitted into the window, their gaps squeezed with the panels); presented, Loss and
    conditioning's "loss (grey: the KL floor H(p*))" took a line more than its row's gap."""
    from polarize.web.pages import by_name

    spec = by_name(page)
    figure = go.Figure(fit(spec.show(spec.make_job(spec.defaults(None)), display), display).plots()[0].figure)
    layout = figure.layout
    plot = _plot_px(figure)
    for note in layout.annotations:
        if note.yref != "paper" or not note.text:
            continue
        lines = note.text.count("<br>") + 1
        bottom = note.y * plot + (note.yshift or 0)  # px above the plot's bottom edge
        top = bottom + lines * 1.2 * note.font.size
        lowest = [min(axis.domain) * plot for key in layout.to_plotly_json() if key.startswith("yaxis")
                  for axis in [layout[key]] if min(axis.domain) * plot > bottom + 1]
        assert not lowest or top <= min(lowest) + 1, (note.text, top, min(lowest))  # under the panel above


def test_a_phone_grid_titles_only_its_first_columns_y_axes():
    """In the narrow gap between a phone's two columns the second column's y title ("nats", Loss and
    conditioning's entropy) ran into the first column's plot."""
    panels = [Panel(title=f"p{k}", y_title=f"y{k}", lines=_panels(1)[0].lines) for k in range(4)]
    layout = go.Figure(animated_grid(panels, cols=2, narrow=True, animated=False)).layout
    titles = [layout[f"yaxis{'' if k == 1 else k}"].title.text for k in range(1, 5)]
    assert titles == ["y0", "", "y2", ""]
    wide = go.Figure(animated_grid(panels, cols=2, animated=False)).layout
    assert [wide[f"yaxis{'' if k == 1 else k}"].title.text for k in range(1, 5)] == ["y0", "y1", "y2", "y3"]
