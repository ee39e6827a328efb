"""The one walk over a view's blocks, the one rebuild of them (columns at any depth), and a table laid out for
its room."""

from __future__ import annotations

import re
from html import escape

import pytest
from support.app import plain_table_cells

from polarize.plots.display import PRESENT_TYPE, Display
from polarize.web.fit import figure_first, fit, main_block
from polarize.web.tables import CLASS, TYPE_PX, Layout, html, layout
from polarize.web.view import Caption, Columns, Metric, Plot, Table, Text, View, rebuild, walk

FIGURE = {"data": [], "layout": {}, "frames": []}


def test_walk_reads_columns_in_order_at_any_depth():
    inner = Columns(((Text("b"),), (Metric("m", "1"),)))
    plot = Plot("p", FIGURE)
    blocks = (Text("a"), Columns(((inner, plot), (Caption("c"),))), Text("d"))
    assert [type(b).__name__ for b in walk(blocks)] == [
        "Text", "Columns", "Columns", "Text", "Metric", "Plot", "Caption", "Text"]
    assert View(blocks=blocks).plots() == [plot]
    assert main_block(blocks) == 1 and main_block((Text("a"),)) is None


def test_rebuild_changes_every_block_but_columns_and_leaves_the_view_as_it_was():
    blocks = (Text("a"), Columns(((Text("b"), Columns(((Text("c"),),))), (Metric("m", "1"),))))
    shouted = rebuild(blocks, lambda b: Text(b.text.upper()) if isinstance(b, Text) else b)
    assert [b.text for b in walk(shouted) if isinstance(b, Text)] == ["A", "B", "C"]
    assert [b.text for b in walk(blocks) if isinstance(b, Text)] == ["a", "b", "c"]  # not changed in place
    assert shouted[1].widths == blocks[1].widths and isinstance(shouted[1], Columns)


def test_numbers_above_the_figure_move_below_it():
    numbers, plot = Columns(((Metric("m", "1"),), (Metric("n", "2"),))), Plot("p", FIGURE)
    view = figure_first(View(blocks=(Text("t"), numbers, plot)))
    assert view.blocks == (Text("t"), plot, numbers)


def test_a_table_above_the_figure_moves_below_it_and_is_fitted_to_the_page_s_width():
    table, plot = Table(({"axis": "n", "values": "4, 8"},)), Plot("p", FIGURE)
    assert figure_first(View(blocks=(Text("t"), table, plot))).blocks == (Text("t"), plot, table)
    for display, scale in ((Display(width=390, height=844), 1.0), (Display(presenting=True), PRESENT_TYPE)):
        fitted = next(b for b in fit(View(blocks=(plot, table)), display).blocks if isinstance(b, Table))
        assert (fitted.room, fitted.scale) == (display.column_width, scale)


# A comparison's rows as the Normalizers page has them: the first column names the run.
ROWS = tuple({"normalizer": name, "final entropy": 0.1633, "max s": 0.9764, "loss": "2.96e-06",
              "on simplex": True, "status": "finished", "message": ""}
             for name in ("softmax", "sigmoid", "relu", "sparsemax"))


def _words_px(words, type_px):
    """Our own generous width of the widest word (0.6 of the type a character) and a cell's padding."""
    return max(0.6 * type_px * len(w) for w in words) + 17 * type_px / TYPE_PX


def test_a_wide_room_takes_the_sortable_grid_and_no_room_said_keeps_it():
    assert layout(ROWS, 1000) == Layout(grid=True, parts=(tuple(ROWS[0]),))
    assert layout(ROWS, None).grid
    sentence = ({"lr": 5, "what happened": "descent ends on token 0, the flow on token 1: too large"},)
    assert layout(sentence, None, wrap=True) == Layout(grid=False, parts=(("lr", "what happened"),))
    assert not layout(sentence, 2000, wrap=True).grid  # the grid would cut the sentence


@pytest.mark.parametrize(("room", "scale"), [(354, 1.0), (340, 1.5), (250, 1.0)])
def test_a_narrow_room_takes_parts_that_fit_each_naming_its_rows(room, scale):
    chosen = layout(ROWS, room, scale=scale)
    columns = tuple(ROWS[0])
    assert not chosen.grid and len(chosen.parts) > 1
    assert all(part[0] == "normalizer" for part in chosen.parts)
    assert tuple(c for part in chosen.parts for c in part[1:]) == columns[1:]  # each once, in order
    type_px = TYPE_PX * scale
    for part in chosen.parts:
        # Each part's columns fit by their longest words (as a plain table wraps them), unless a
        # part is its name and one column: that column could go nowhere narrower.
        words = {c: [*c.split(), *(w for row in ROWS for w in str(row[c]).split())] for c in part}
        need = sum(_words_px(words[c], type_px) for c in part)
        assert need <= room * 1.15 or len(part) == 2, (part, need, room)


def test_a_table_that_fits_wrapped_is_one_plain_table():
    rows = ({"axis": "normalizer \u03c3", "values": "softmax, sparsemax, l2", "count": 3},)
    chosen = layout(rows, 300)
    assert chosen == Layout(grid=False, parts=(("axis", "values", "count"),))


HOSTILE = ("**bold** [Log in](https://evil.example) www.evil.example $x^2$ :red[red] "
           "<b>b</b> <script>alert(1)</script> &amp; \"'")
"""A visitor's slide title as it may come in a shared deck file: Markdown, HTML, maths, a bare address."""


def test_a_plain_table_shows_every_cell_as_text_never_markup():
    rows = ({"deck": "Exam", "title": HOSTILE, "notes": "first line\nsecond <i>line</i>"},
            {"deck": "<th>", "title": None, "notes": True})
    drawn = html(rows, ("deck", "title", "notes"))
    assert drawn.startswith(f'<table class="{CLASS}">')
    assert plain_table_cells(drawn) == [["deck", "title", "notes"],
                                        ["Exam", HOSTILE, "first line\nsecond <i>line</i>"],
                                        ["<th>", "", "yes"]]
    tags = re.findall(r"<(\w+)", drawn)  # the only elements are the table's own
    assert set(tags) == {"table", "thead", "tbody", "tr", "th", "td"}, tags
    assert drawn.count("<th scope=row>") == 2 and drawn.count("<th scope=col>") == 3  # rows named for readers


def test_only_a_cell_with_a_long_word_breaks_it_anywhere():
    link = "/explorer?n=8&loss=logistic&seed=12345"
    drawn = html(({"lr": "0.1", "link": link, "notes": "short words only"},), ("lr", "link", "notes"))
    assert re.findall(r"<t[hd][^>]*class=long>([^<]*)<", drawn) == [escape(link)]


def test_a_part_shows_only_its_columns_in_their_order():
    rows = ({"a": 1, "b": 2.5, "c": "x"},)
    assert plain_table_cells(html(rows, ("a", "c"))) == [["a", "c"], ["1", "x"]]
