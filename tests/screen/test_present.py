"""Presentation mode and decks in the app: the link key, figures scaled and fitted, adding, presenting."""

from __future__ import annotations

import re
from pathlib import Path

import plotly.graph_objects as go
import pytest
import streamlit
from streamlit.testing.v1 import AppTest
from support.app import figures, link_note, open_deck_box, open_page, table_column
from support.controls import control
from support.figures import dashboard_figure

from polarize import Experiment, simulate
from polarize.plots.crowding import TICK_KEYS, TICK_PITCH
from polarize.plots.display import Display
from polarize.plots.geometry import NOTE_ROOM
from polarize.plots.present_figure import BANDS, LOG_TICK_GROWTH, described, fitted, presented
from polarize.plots.style import FONT_SIZE, PRESENT_LEAST, PRESENT_SCALE, scale_fonts
from polarize.web import links, pages
from polarize.web.deck_store import Deck, DeckStore, Slide
from polarize.web.fit import figure_first, fit, main_block
from polarize.web.view import Caption, Columns, Metric, Plot, Text, View
from ui import deckbar

APP = str(Path(__file__).resolve().parents[2] / "app.py")


# ---- without Streamlit -------------------------------------------------------------------------


def test_present_is_a_key_every_page_knows():
    spec = pages.EXPLORER
    values, ignored = links.read_link(spec, {"n": "5", "present": "true", "utm_source": "x"})
    assert values["n"] == 5 and ignored == {}
    assert links.presenting({"present": "true"}) and links.presenting({"present": ["0", "1"]})
    assert links.presenting({}) is False and links.presenting({"present": "false"}) is False
    _, ignored = links.read_link(spec, {"present": "maybe"})
    assert set(ignored) == {"present"} and links.presenting({"present": "maybe"}) is None
    address = links.link(spec, values, present=True)
    assert address.startswith("/?") and address.endswith("&present=true")  # the default page is the root
    page, query = links.resolve(address, pages.PAGES)
    assert page is spec and links.read_link(spec, query) == (values, {})
    assert links.resolve(address.replace("/?", "/explorer?"), pages.PAGES)[0] is spec  # as older decks say
    rates = pages.by_name("rates")
    assert links.link(rates, rates.defaults(None)).startswith("/rates?")


@pytest.mark.parametrize("address", ["https://evil.example/explorer", "//evil.example/x",
                                     "javascript:alert(1)", "/nowhere?n=3", "explorer?n=3"])
def test_an_address_that_leaves_the_app_or_names_no_page_resolves_to_nothing(address):
    assert links.resolve(address, pages.PAGES) is None


@pytest.fixture(scope="module")
def figure():
    return dashboard_figure(simulate(Experiment(n=5, d=5, seed=0, horizon=1e3)))


PROJECTOR = Display(presenting=True)
"""A 1280 x 720 projector in presentation mode, nothing measured yet."""


def _shown(figure, display: Display = PROJECTOR):
    """``figure`` (a figure dict, or a ``go.Figure``'s) as the fit shows it on ``display`` (the page's only
    figure), validated."""
    figure = figure.to_dict() if isinstance(figure, go.Figure) else figure
    return go.Figure(fit(View(blocks=(Plot("p", figure),)), display).blocks[0].figure)


def test_fonts_scale_everywhere_and_the_original_is_left_alone(figure):
    data = scale_fonts(figure.to_dict(), 2.0)
    assert data["layout"]["font"]["size"] == 2 * figure.layout.font.size
    assert data["layout"]["legend2"]["font"]["size"] == 2 * figure.layout.legend2.font.size
    assert data["layout"]["sliders"][0]["currentvalue"]["font"]["size"] == \
        2 * figure.layout.sliders[0].currentvalue.font.size
    big = _shown(figure)
    assert big.layout.font.size == pytest.approx(FONT_SIZE * PRESENT_SCALE, abs=0.1)
    assert figure.layout.font.size == FONT_SIZE
    assert figure.layout.height == 780 and big.layout.height == PROJECTOR.figure_room
    assert len(big.frames) == len(figure.frames)


def test_a_figure_dict_is_presented_as_a_dict_like_its_figure(figure):
    spec = figure.to_dict()
    big = fit(View(blocks=(Plot("p", spec),)), PROJECTOR).blocks[0].figure
    assert isinstance(big, dict) and spec["layout"]["height"] == 780  # a copy; the original stays
    assert big["layout"]["height"] == PROJECTOR.figure_room
    assert big["layout"]["font"]["size"] == _shown(figure).layout.font.size
    assert big["layout"]["margin"] == _shown(figure).layout.margin.to_plotly_json()


def _below(fig, y):
    """Pixels from the plot area's bottom edge down to a paper ``y`` below it."""
    margin = fig.layout.margin
    return -y * (fig.layout.height - margin.t - margin.b)


def test_controls_keep_their_distance_below_the_plot_scaled_with_the_type(figure):
    big = _shown(figure)
    assert big.layout.margin.b == pytest.approx(PRESENT_SCALE * figure.layout.margin.b, abs=1)
    for old, new in zip([*figure.layout.updatemenus, *figure.layout.sliders],
                        [*big.layout.updatemenus, *big.layout.sliders], strict=True):
        assert _below(big, new.y) == pytest.approx(PRESENT_SCALE * _below(figure, old.y), rel=0.01)
        assert _below(big, new.y) < big.layout.margin.b  # still inside the figure


def test_rows_of_panels_keep_their_gap_scaled_with_the_type(figure):
    def gap(fig):  # pixels between the lower row's top and the upper row's bottom
        plot = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
        return (fig.layout.yaxis2.domain[0] - fig.layout.yaxis4.domain[1]) * plot

    big = _shown(figure, Display(presenting=True, height=740))
    # The gap holds tick labels and titles: it grows as the smallest tick labels do (scaled, then
    # raised to a hall's least type).
    ticks = min(axis.tickfont.size or figure.layout.font.size for axis in
                (figure.layout[key] for key in figure.layout if key.startswith(("xaxis", "yaxis"))))
    assert gap(big) == pytest.approx(max(PRESENT_SCALE, PRESENT_LEAST / ticks) * gap(figure), rel=0.02)
    assert tuple(big.layout.yaxis.domain) == (0, 1)  # the simplex spans both rows and keeps doing so
    titles = {note.text: note.y for note in big.layout.annotations if note.yref in (None, "paper")}
    assert titles["Loss"] == pytest.approx(big.layout.yaxis5.domain[1])  # a panel's title follows it


@pytest.mark.parametrize(("first", "then", "scale"), [(604, 964, PRESENT_SCALE), (964, 420, 1.0),
                                                     (604, 300, PRESENT_SCALE)])
def test_a_fitted_figure_fitted_again_from_its_description_is_presented_at_the_new_height(
        figure, first, then, scale):
    """The browser fits the figure the server fitted, from its ``layout.meta`` alone: the same bands
    and rows as Python's fit of the built figure at that height."""
    built = figure.to_dict()
    again = presented(built, height=first, width=1100, scale=scale)
    plot = fitted(again, height=then)
    direct = presented(built, height=then, width=1100, scale=scale)["layout"]
    layout = again["layout"]
    assert plot == direct["height"] - direct["margin"]["t"] - direct["margin"]["b"]
    assert (layout["height"], layout["margin"]) == (direct["height"], direct["margin"])
    for key in [key for key in direct if key.startswith("yaxis")]:
        assert layout[key]["domain"] == pytest.approx(direct[key]["domain"], abs=1e-9)
    for key in ("updatemenus", "sliders"):
        assert [item["y"] for item in layout[key]] == pytest.approx([item["y"] for item in direct[key]])
    ours, theirs = ({note["text"]: note["y"] for note in fig["annotations"]} for fig in (layout, direct))
    kept = ours.keys() & theirs.keys()  # the panels' titles kept (and wrapped alike) at both heights
    assert len(kept) > 3 and [ours[k] for k in kept] == pytest.approx([theirs[k] for k in kept])
    assert layout["meta"][BANDS]["placed"] == pytest.approx(direct["meta"][BANDS]["placed"])


@pytest.mark.parametrize("height", [300, 604, 964])
def test_a_presented_figure_describes_what_crowding_chose_for_its_height_as_built(figure, height):
    """The chart element makes crowding's choices again for the height it fits (issue 41), from the
    description: what they changed, as built. Put back, the presented figure's y ticks and titles, its
    notes and its traces' legends and visibility are the built figure's (scaled, not crowded)."""
    built = figure.to_dict()
    shown = presented(built, height=height, width=1100, scale=PRESENT_SCALE)
    whole = described(built, height=height, width=1100, scale=PRESENT_SCALE)  # before any crowding
    layout, crowd = shown["layout"], shown["layout"]["meta"][BANDS]["crowd"]
    if height == 300:  # short panels: thinned ticks, a dropped note
        assert crowd["ticks"] and crowd["notes"]
    assert crowd["room"] == NOTE_ROOM and crowd["pitch"] == TICK_PITCH
    for key, before in crowd["ticks"].items():
        for name, value in before.items():
            layout[key].pop(name, None) if value is None else layout[key].update({name: value})
    for key, text in crowd["titles"].items():
        layout[key]["title"]["text"] = text
    for index, note in crowd["notes"]:
        layout["annotations"].insert(index, note)
    for index, (legend, visible) in crowd["traces"].items():
        trace = shown["data"][int(index)]
        for name, value in (("showlegend", legend), ("visible", visible)):
            trace.pop(name, None) if value is None else trace.update({name: value})
    axes = [key for key in whole["layout"] if key.startswith("yaxis")]
    for key in axes:
        ours, theirs = layout[key], whole["layout"][key]
        assert {name: ours.get(name) for name in TICK_KEYS} == {name: theirs.get(name) for name in TICK_KEYS}
        assert (ours.get("title") or {}).get("text") == (theirs.get("title") or {}).get("text"), key
    on_axes = [[note for note in fig["layout"]["annotations"] if str(note.get("yref")).startswith("y")]
               for fig in (shown, whole)]
    assert on_axes[0] == on_axes[1] and len(layout["annotations"]) == len(whole["layout"]["annotations"])
    assert [(t.get("showlegend"), t.get("visible")) for t in shown["data"]] == \
        [(t.get("showlegend"), t.get("visible")) for t in whole["data"]]


def test_a_grid_s_legend_built_in_two_rows_takes_one_row_s_room_where_one_holds_it():
    """Built for the narrowest window with the sidebar (two legend rows), presented 1,230 px wide (one
    row): the top keeps room for the legend's row at its larger type, not for two."""
    spec = pages.by_name("descent")
    figure = spec.view(spec.make_job(spec.defaults(None))).plots()[0].figure
    assert figure["layout"]["meta"]["legend_rows"] == 2
    wide, narrow = (presented(figure, height=600, width=width, scale=PRESENT_SCALE, least_font=PRESENT_LEAST)
                    for width in (1230, 760))
    for shown in (wide, narrow):
        over, rows = shown["layout"]["meta"][BANDS]["legend"]
        grow = PRESENT_SCALE  # 600 px leave the plot its least: the margins grow with the type
        assert shown["layout"]["margin"]["t"] >= round(over * grow + rows)  # room for the legend it has
    one_row = 2.1 * PRESENT_LEAST  # crowding.LEGEND_ROW font sizes a row, at the hall's type
    assert narrow["layout"]["margin"]["t"] - wide["layout"]["margin"]["t"] >= 0.9 * one_row


def test_a_small_figure_grows_only_with_its_type(figure):
    small = _shown(_with_height(figure, 300))
    assert small.layout.height == 300 * PRESENT_SCALE


def _with_height(figure, height):
    from plotly import graph_objects as go

    out = go.Figure(figure.to_dict(), _validate=False)
    out.layout.height = height
    return out


def test_a_presented_view_drops_the_small_print(figure):
    spec = figure.to_dict()
    view = View(blocks=(Caption("small"), Plot("p", spec, caption="under"),
                        Columns(((Metric("m", "1", help="why"),), (Caption("x"),)))), sidebar="note")
    shown = fit(view, PROJECTOR)
    (plot, columns) = shown.blocks
    assert plot.caption == "" and plot.figure is not spec
    assert plot.figure["layout"]["height"] == PROJECTOR.figure_room
    assert columns.columns == ((Metric("m", "1"),), ()) and shown.sidebar == ""
    assert view.blocks[1].figure is spec and view.sidebar == "note"  # the cached view is untouched


def test_a_fitted_view_keeps_its_type_and_small_print(figure):
    spec = figure.to_dict()
    view = View(blocks=(Caption("small"), Plot("p", spec, caption="under"),
                        Columns(((Metric("m", "1", help="why"),), (Caption("x"),)))), sidebar="note")
    desktop = Display(top=284, column=800)  # a page that explains first: the figure lower down
    shown = fit(view, desktop)
    caption, plot, columns = shown.blocks
    assert caption == Caption("small") and plot.caption == "under"
    assert columns.columns == view.blocks[2].columns
    higher = fit(view, Display(top=150)).blocks[1].figure
    assert plot.figure["layout"]["height"] == desktop.figure_room < higher["layout"]["height"]
    assert plot.figure["layout"]["font"]["size"] == figure.layout.font.size
    assert shown.sidebar == "note" and view.blocks[1].figure is spec


@pytest.mark.parametrize(("window", "top"), [(720, 200), (1080, 200), (720, 400), (720, 300), (1080, 700)])
def test_the_main_figure_takes_the_window_below_what_is_above_it(window, top):
    display = Display(height=window, top=top)
    room = display.figure_room
    if top < window / 2:  # the figure and its transport show with the page at its top
        assert top + room < window
    else:  # too little room below the page's top part: a whole window, seen scrolled to under the header
        assert display.header + room < window and room > window - top


def test_numbers_above_the_main_figure_move_below_it(figure):
    numbers, why = Columns(((Metric("a", "1"),), (Metric("b", "2"),))), Text("why")
    plot, later = Plot("p", figure), Plot("q", figure)
    view = View(blocks=(numbers, why, plot, later))
    assert main_block(view.blocks) == 2
    assert figure_first(view).blocks == (why, plot, numbers, later)  # text that explains stays first
    beside = View(blocks=(Columns(((plot,), (Metric("a", "1"),))), numbers))
    assert main_block(beside.blocks) == 0 and figure_first(beside).blocks == beside.blocks
    assert figure_first(View(blocks=(numbers,))).blocks == (numbers,)


def test_a_memory_store_is_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("POLARIZE_DATA_DIR", str(tmp_path))
    one, two = DeckStore.in_memory(), DeckStore.in_memory()
    one.add_slide("mine", Slide(link="/rates", title="t"))
    assert one.names() == ["mine"] and two.names() == [] and one.key != two.key
    assert one.path is None and DeckStore.shared().names() == [] and not any(tmp_path.iterdir())


@pytest.mark.parametrize(("raw", "ok"), [("", False), ("0", False), ("1", True), ("yes", True),
                                         ("Off", False), ("2", None), ("y", None)])
def test_the_hosted_flag_is_a_switch(monkeypatch, raw, ok):
    from polarize.config import ConfigError
    from polarize.env import environment_problem, hosted

    monkeypatch.setenv("POLARIZE_HOSTED", raw)
    if ok is None:
        with pytest.raises(ConfigError) as info:
            hosted()
        assert info.value.field == "POLARIZE_HOSTED" and "POLARIZE_HOSTED" in environment_problem()
    else:
        assert hosted() is ok and environment_problem() is None


def test_the_container_is_hosted():
    text = (Path(APP).parent / "Dockerfile").read_text()
    env = re.search(r"^ENV ((?:.*\\\n)*.*)$", text, re.MULTILINE).group(1)
    assert "POLARIZE_HOSTED=1" in env.split()


# ---- in the app (AppTest) ----------------------------------------------------------------------


@pytest.fixture
def app(tmp_path, monkeypatch):
    """A fresh app with its decks under ``tmp_path``; the sidebar state it asks for, in ``app.sidebar``."""
    monkeypatch.setenv("POLARIZE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("POLARIZE_HOSTED", raising=False)
    import ui

    asked: list[str] = []
    real = streamlit.set_page_config
    monkeypatch.setattr(streamlit, "set_page_config",
                        lambda **kw: (asked.append(kw["initial_sidebar_state"]), real(**kw))[1])
    at = AppTest.from_file(APP, default_timeout=120)
    at.sidebar_asked = asked
    assert ui
    return at


def _no_exception(at):
    assert not at.exception, [e.value for e in at.exception]


def _dashboard(at):
    return figures(at)[0]


@pytest.mark.parametrize("how", ["present", "embed"])
def test_presentation_mode_in_the_app(app, how):
    app.query_params["n"] = "5"
    if how == "present":
        app.query_params["present"] = "true"
    else:
        # Streamlit keeps embed=true out of st.query_params; the browser tells the app its address.
        app.context = {"is_embedded": True, "url": "https://example.org/course/explorer"}
    open_deck_box(app).run()
    _no_exception(app)
    assert app.sidebar_asked[-1] == "collapsed"
    assert [c.value for c in app.caption] == []  # the page's, the figures' and the controls' captions
    assert all(not s.help for s in app.sidebar.slider) and all(not m.help for m in app.metric)
    layout = _dashboard(app)["layout"]
    assert layout["font"]["size"] == pytest.approx(FONT_SIZE * PRESENT_SCALE, abs=0.1)
    assert layout["height"] <= Display().figure_room
    assert (app.query_params.get("present") in ("true", ["true"])) == (how == "present")
    (code,) = app.code  # the presentation link, with a copy button
    start = "/?" if how == "present" else "https://example.org/course/?"
    assert code.value.startswith(start) and "n=5" in code.value and code.value.endswith("present=true")


def test_without_presentation_mode_nothing_changes(app):
    app.run()
    _no_exception(app)
    assert app.sidebar_asked[-1] == "auto" and app.caption
    assert _dashboard(app)["layout"]["font"]["size"] == FONT_SIZE and "present" not in app.query_params


def _add(at, title, notes=""):
    open_deck_box(at).run()
    at.text_input(key="explorer_deckbar_title").input(title)
    at.text_area(key="explorer_deckbar_notes").input(notes)
    (submit,) = [b for b in at.button if b.label == "Add to deck"]
    submit.click().run()
    _no_exception(at)


def test_add_to_deck_then_present_with_next_and_previous(app):
    app.query_params["n"] = "5"
    app.run()
    _add(app, "Five <b>tokens</b>", "say *this*")
    assert [s.value for s in app.success] == ["Added slide 1 to the deck `Lecture`."]
    control(app, key="explorer_n").set_value(3).run()
    _add(app, "Three")
    (deck,) = [DeckStore.shared().get(name) for name in DeckStore.shared().names()]
    assert [s.title for s in deck.slides] == ["Five <b>tokens</b>", "Three"]
    assert deck.slides[0].notes == "say *this*"
    assert links.read_link(pages.EXPLORER, links.resolve(deck.slides[1].link, pages.PAGES)[1])[0]["n"] == 3

    open_page(app, "deck").run()
    app.button(key="deck_present0").click().run()
    _no_exception(app)
    assert app.title[0].value.startswith("Explorer") and control(app, key="explorer_n").value == 5
    assert app.markdown[0].value == "Slide 1 of 2: `Five <b>tokens</b>`"  # the title as a code span: text
    assert app.button(key="_show_back").disabled and app.caption.len == 0
    assert [t.value for t in app.sidebar.text] == ["say *this*"]  # the speaker notes, as text
    # AppTest stays on the page its own switch_page named; the app's switch_page lasts one run.
    open_page(app, "explorer")
    app.button(key="_show_next").click().run()
    _no_exception(app)
    assert control(app, key="explorer_n").value == 3 and app.query_params["n"] in ("3", ["3"])
    assert app.markdown[0].value == "Slide 2 of 2: `Three`" and app.button(key="_show_next").disabled
    app.button(key="_show_back").click().run()
    assert control(app, key="explorer_n").value == 5
    app.button(key="_show_end").click().run()
    assert app.title[0].value == "Lecture decks" and app.session_state["_show"] is None


def test_a_tampered_deck_shows_its_links_as_text(app):
    bad = "/nowhere?x=[open](javascript:alert(1))"
    DeckStore.shared().save(Deck(name="d", slides=(Slide(link=bad, title="[click](javascript:alert(1))"),
                                            Slide(link="/explorer?n=[x](javascript:alert(1))", title="t"))))
    app.run()
    open_page(app, "deck").run()
    _no_exception(app)
    assert [t.value for t in app.text] == [f"Not a page of this app: {bad}"]
    from markdown_it import MarkdownIt

    parsed = [token for m in app.markdown for block in MarkdownIt("commonmark").parse(m.value)
              for token in block.children or ()]
    assert any("](javascript:" in token.content for token in parsed if token.type == "code_inline")
    assert not any(token.type == "link_open" for token in parsed)
    assert app.button(key="deck_open0_1").label == "Open"
    app.button(key="deck_open0_1").click().run()  # the page reads the odd value and says so, as text
    open_page(app, "explorer").run()
    _no_exception(app)
    assert control(app, key="explorer_n").value == 8
    assert "`n=[x](javascript:alert(1))`" in link_note(app)


def test_hosted_decks_stay_in_their_session(app, tmp_path, monkeypatch):
    monkeypatch.setenv("POLARIZE_HOSTED", "1")
    other = AppTest.from_file(APP, default_timeout=120)
    app.run()
    _add(app, "mine")
    open_page(other, "deck").run()
    _no_exception(other)
    assert [m.value for m in other.markdown if "mine" in m.value] == []
    assert any(m.value.startswith("No decks yet") for m in other.markdown)
    assert not any(str(tmp_path) in c.value for c in other.caption)
    assert any("for this visit only" in c.value for c in other.caption)
    open_page(app, "deck").run()
    assert table_column(app, "title") == ["mine"]
    assert not (tmp_path / "decks.sqlite3").exists()


def test_short_panels_lose_labels_and_notes_not_type(figure):
    from polarize.plots.crowding import TICK_PITCH
    from polarize.plots.geometry import NOTE_ROOM

    big = _shown(figure, Display(presenting=True, height=640))
    layout, margin = big.layout, big.layout.margin
    plot = layout.height - margin.t - margin.b
    loss = layout.yaxis5  # the loss panel: a log axis over several decades
    tall = (loss.domain[1] - loss.domain[0]) * plot
    labels = [d for d in range(-30, 30) if loss.range[0] <= loss.tick0 + d * loss.dtick <= loss.range[1]]
    pitch = loss.dtick * tall / (loss.range[1] - loss.range[0])
    assert 1 <= len(labels) and pitch >= TICK_PITCH * layout.font.size * 0.85  # tick type: font - 2 px
    assert layout.font.size == pytest.approx(FONT_SIZE * PRESENT_SCALE, abs=0.1)
    # Entropy and loss share a time axis in one column: labelled once, under the loss.
    assert layout.xaxis3.showticklabels is False and layout.xaxis5.showticklabels is not False
    assert tall < NOTE_ROOM and not [a for a in layout.annotations if a.text and "uniform" in a.text]
    assert not [t for t in big.data if t.legend == "legend2" and t.showlegend is not False]
    assert [a for a in figure.layout.annotations if a.text and "uniform" in a.text]  # the original keeps it


def test_a_title_wider_than_its_panel_takes_two_lines(figure):
    title = "Repulsion: fitness against score"  # the dashboard's titles are one line at 1280 x 720
    long = figure.to_dict()
    next(a for a in long["layout"]["annotations"] if a["text"] == "Fitness vs score")["text"] = title
    narrow, wide = (_shown(long, Display(presenting=True, height=740, column=c)) for c in (900, 3000))
    assert [a.text for a in wide.layout.annotations if a.text == title]
    (wrapped,) = [a.text for a in narrow.layout.annotations if a.text.replace("<br>", " ") == title]
    assert wrapped.count("<br>") == 1


def test_a_phone_keeps_its_figures_type_in_presentation_mode(figure):
    phone = Display(width=390, height=844, presenting=True)
    shown = fit(View(blocks=(Caption("small"), Plot("p", figure.to_dict(), caption="under"))), phone)
    (plot,) = shown.blocks
    assert plot.figure["layout"]["font"]["size"] == figure.layout.font.size and plot.caption == ""


def test_a_legend_gets_the_rows_it_takes():
    from polarize.plots.crowding import legend_rows

    assert legend_rows(["a" * 10] * 3, size=14, width=1000) == 1
    assert legend_rows(["a" * 10] * 30, size=14, width=400) > legend_rows(["a" * 10] * 30, size=14, width=800)


def test_a_figure_with_category_ticks_is_presented():
    """Two panels sharing an x axis whose ticks are words (not numbers) fit presentation mode."""
    figure = {"data": [{"type": "bar", "x": ["softmax", "l2"], "y": [1, 2], "xaxis": "x", "yaxis": "y"},
                       {"type": "bar", "x": ["softmax", "l2"], "y": [2, 1], "xaxis": "x2", "yaxis": "y2"}],
              "layout": {"height": 600, "xaxis": {"domain": [0, 1], "tickvals": ["softmax", "l2"]},
                         "xaxis2": {"domain": [0, 1], "tickvals": ["softmax", "l2"], "anchor": "y2"},
                         "yaxis": {"domain": [0.55, 1]}, "yaxis2": {"domain": [0, 0.45]}}}
    projector = Display(presenting=True, height=520)
    shown = fit(View(blocks=(Plot("p", figure),)), projector).blocks[0].figure
    assert shown["layout"]["height"] <= projector.figure_room
    assert shown["layout"]["xaxis2"]["tickvals"] == ["softmax", "l2"]


def test_every_panel_takes_the_same_type_in_presentation_mode():
    """Plotly hands the first panel's x and y axes one tick font dict: scaled once for each, the first
    panel's ticks were 1.25 times the others' (Normalizers, Loss and conditioning, Flow vs descent)."""
    import numpy as np

    from polarize.plots.lines import Line, Panel
    from polarize.plots.multiples import animated_grid

    t = np.geomspace(0.1, 1e3, 30)
    panels = [Panel(title=f"p{k}", lines=(Line(x=t, y=t / (k + 1), name="a"),)) for k in range(4)]
    grid = go.Figure(animated_grid(panels, cols=4))
    layout = _shown(grid).layout.to_plotly_json()
    # As drawn: plotly.js draws a log axis's power labels LOG_TICK_GROWTH times their font (measured in
    # Chromium by tests/browser/test_browser_present.py), so their font is that much smaller.
    axes = [key for key in layout if key.startswith(("xaxis", "yaxis"))]
    growth = {key: LOG_TICK_GROWTH if layout[key].get("type") == "log" else 1 for key in axes}
    sizes = {key: layout[key]["tickfont"]["size"] * growth[key] for key in axes}
    assert len(sizes) == 8 and len(set(sizes.values())) == 1, sizes
    least = max(grid.layout.yaxis2.tickfont.size * PRESENT_SCALE, PRESENT_LEAST)
    assert sizes["yaxis"] == pytest.approx(least, abs=0.1)
    shared = {"size": 10}
    scaled = scale_fonts({"layout": {"xaxis": {"tickfont": shared}, "yaxis": {"tickfont": shared}}}, 2.0)
    assert scaled["layout"]["yaxis"]["tickfont"]["size"] == 20  # one font, scaled once


def test_the_deck_box_is_drawn_inside_only_while_open_and_keeps_its_deck(app):
    app.run()
    _no_exception(app)
    # Folded: no link (``st.code`` would load its syntax highlighter in every first visit), no form.
    assert not app.code and not [t for t in app.text_input if "deckbar" in (t.key or "")]
    open_deck_box(app).run()
    (code,) = app.code
    assert code.value.endswith("present=true")
    app.text_input(key="explorer_deckbar_name").input("Week 3")
    app.text_input(key="explorer_deckbar_title").input("One")
    next(b for b in app.button if b.label == "Add to deck").click().run()
    assert [s.value for s in app.success] == ["Added slide 1 to the deck `Week 3`."]
    app.session_state[deckbar.OPEN] = False  # folded: its widgets are not drawn
    app.run()
    assert not app.code
    open_deck_box(app).run()
    assert app.text_input(key="explorer_deckbar_name").value == "Week 3"
