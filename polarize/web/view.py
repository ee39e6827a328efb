"""What a page shows: a ``View``, a sequence of blocks plus warnings and downloads.

Blocks are text, maths, figures with captions, metrics, a table, side-by-side
columns, buttons that change stored data and links into the app; the renderer
(``ui.blocks``) draws each. Nothing here imports Streamlit.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from polarize.plots.alt_text import describe
from polarize.web.slides import Slide

__all__ = ["Action", "Caption", "Columns", "Download", "Folded", "Header", "Link", "Maths", "Metric", "Plot",
           "Table", "Text", "View", "rebuild", "walk"]


@dataclass(frozen=True)
class Text:
    """Markdown (with ``$...$`` maths)."""

    text: str


@dataclass(frozen=True)
class Caption:
    """Small print: markdown."""

    text: str


@dataclass(frozen=True)
class Header:
    text: str


@dataclass(frozen=True)
class Maths:
    """A displayed LaTeX formula."""

    latex: str


@dataclass(frozen=True, eq=False)
class Plot:
    """A figure dict (``polarize.plots``; shared through a cache: do not modify it) and what to
    notice in it.

    Attributes
    ----------
    selects : mapping
        Controls that clicking a point sets: control key -> position in the point's ``customdata``
        (``{"pick_a": 1}``: the clicked point's ``customdata[1]``). Empty: the figure is not clickable.
    """

    key: str
    figure: dict[str, Any]
    caption: str = ""
    selects: Mapping[str, int] = field(default_factory=dict)

    @functools.cached_property
    def summary(self) -> str:
        """The figure in words, for screen readers (``plots.alt_text.describe``): made once per view,
        which the renderer caches, rather than on every rerun (a comparison grid took ~10 ms)."""
        return describe(self.figure)


@dataclass(frozen=True)
class Metric:
    label: str
    value: str
    help: str = ""


@dataclass(frozen=True)
class Table:
    """Rows of a table (column -> value, the first column naming the row).

    Attributes
    ----------
    wrap : bool
        Long text in it is drawn whole, its cells wrapping (never cut by the grid).
    room : float or None
        The width it is drawn in, px, and ``scale`` the page's type (times a normal page's), set by
        ``polarize.web.fit``: by them ``polarize.web.tables.layout`` chooses the grid, one plain
        table or parts.
    """

    rows: tuple[Mapping[str, Any], ...]
    wrap: bool = False
    room: float | None = None
    scale: float = 1.0


@dataclass(frozen=True, eq=False)
class Columns:
    """Blocks side by side: one tuple of blocks per column, with relative widths."""

    columns: tuple[tuple[Any, ...], ...]
    widths: tuple[float, ...] | None = None
    gap: str = "small"


@dataclass(frozen=True, eq=False)
class Folded:
    """Blocks folded under a label until the reader opens them (e.g. a verdict kept for after Play).

    ``label`` is our own words (markdown, never a user's string).
    """

    label: str
    blocks: tuple[Any, ...]
    expanded: bool = False


@dataclass(frozen=True, eq=False)
class Download:
    """A download button; ``data`` is text, bytes, or a callable making them on click.

    Attributes
    ----------
    slow : bool
        ``data`` takes seconds and reports how far it has got (``polarize.web.progress.report``):
        a button makes it first, in a run of the page that shows its progress, and the download
        button then offers what it made.
    """

    key: str
    label: str
    data: str | bytes | Callable[[], str | bytes]
    filename: str
    mime: str
    icon: str = ":material/download:"
    help: str | None = None
    slow: bool = False


@dataclass(frozen=True, eq=False)
class Action:
    """A button that changes stored data (e.g. a deck), or a file upload that does.

    Attributes
    ----------
    key : str
    label : str
        Our own words (a button label is markdown: never a user's string).
    run : callable
        ``run()``, or ``run(data)`` with the uploaded file's bytes: ``(ok, message)``, the
        message markdown with any user's string shown as text (``echo.echo``); or
        ``(ok, message, choices)``, a question: ``choices`` are ``Action``s (plain buttons)
        shown under the message until one is clicked, then the answer is that one's.
    help : str
    upload : tuple of str
        File types to accept; empty for a plain button.
    """

    key: str
    label: str
    run: Callable[..., tuple[bool, str] | tuple[bool, str, tuple[Action, ...]]]
    help: str = ""
    upload: tuple[str, ...] = ()


@dataclass(frozen=True)
class Link:
    """A button that opens a view of this app in presentation mode, or presents several in turn.

    Attributes
    ----------
    key : str
    label : str
        Our own words (a button label is markdown: never a user's string).
    slides : tuple of Slide
        The views (``polarize.web.slides.Slide``: an address relative to the app, a title, notes); the
        first is opened, and with more than one, Next and Previous step through them. An address
        that names no page of the app is shown as text instead of a button.
    help : str
    """

    key: str
    label: str
    slides: tuple[Slide, ...]
    help: str = ""


@dataclass(frozen=True, eq=False)
class View:
    """Everything a page shows for one setting of its controls.

    Attributes
    ----------
    blocks : tuple
        ``Text``, ``Caption``, ``Header``, ``Maths``, ``Plot``, ``Metric`` (a row of them is a
        ``Columns``), ``Table``, ``Columns``, ``Folded``, ``Action`` and ``Link``, in order.
    error : str or None
        Why there is nothing to show, in words.
    warnings : tuple of str
        Runs that stopped early, diverged, ... in words.
    downloads : tuple of Download
    sidebar : str
        A note under the controls (markdown), or empty.
    data : any
        What the view was made from (a ``Result``, the runs), for scripts and tests.
    seconds : float
        Wall time of making the view.
    passing : bool
        Whether ``error`` may pass on its own (a busy server, a crashed worker): the renderer
        then does not keep the view for others, and the next rerun tries again.
    """

    blocks: tuple[Any, ...] = ()
    error: str | None = None
    warnings: tuple[str, ...] = ()
    downloads: tuple[Download, ...] = ()
    sidebar: str = ""
    data: Any = None
    seconds: float = 0.0
    passing: bool = False

    def plots(self) -> list[Plot]:
        """Every figure of the view, in order (also those inside columns)."""
        return [block for block in walk(self.blocks) if isinstance(block, Plot)]


def walk(blocks: Iterable[Any]) -> Iterator[Any]:
    """Every block, in reading order: each ``Columns`` followed by the blocks of its columns, column by
    column, and each ``Folded`` by its blocks (at any depth). The one walk over a view's blocks."""
    for block in blocks:
        yield block
        if isinstance(block, Columns):
            for column in block.columns:
                yield from walk(column)
        elif isinstance(block, Folded):
            yield from walk(block.blocks)


def rebuild(blocks: tuple[Any, ...], change: Callable[[Any], Any]) -> tuple[Any, ...]:
    """The blocks with ``change(block)`` for each block that holds no others (at any depth), the
    ``Columns`` and ``Folded`` kept as they are around them: a new tuple (views are shared: never
    changed in place)."""
    def one(block: Any) -> Any:
        if isinstance(block, Columns):
            columns = tuple(rebuild(column, change) for column in block.columns)
            return dataclasses.replace(block, columns=columns)
        if isinstance(block, Folded):
            return dataclasses.replace(block, blocks=rebuild(block.blocks, change))
        return change(block)

    return tuple(map(one, blocks))
