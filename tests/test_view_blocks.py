"""The one walk over a view's blocks, and the one rebuild of them (columns at any depth)."""

from __future__ import annotations

from polarize.web.fit import figure_first, main_block
from polarize.web.view import Caption, Columns, Metric, Plot, Text, View, rebuild, walk

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
