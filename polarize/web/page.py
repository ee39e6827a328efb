"""A page as data: its controls, presets, check, and a function from values to a ``View``.

``ui.render(spec)`` draws any ``PageSpec``: the sidebar from its controls, the
link from and into the address (``polarize.web.links``), and the ``View`` its
``view`` returns. A view is a sequence of blocks (text, maths, figures with
captions, metrics, a table, side-by-side columns) plus warnings and downloads;
nothing here imports Streamlit.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go

from polarize.config import ConfigError
from polarize.deck import Slide
from polarize.normalizers import DegenerateStateError
from polarize.plots.style import narrow_screen
from polarize.runner import RunTimeout, ServerBusy, WorkerCrashed
from polarize.web.controls import Control

__all__ = ["Action", "Caption", "Columns", "Download", "Header", "Link", "Maths", "Metric", "PageSpec",
           "Plot", "Problem", "Screen", "Table", "Text", "View", "describe_failure", "failure_view",
           "queue_notice", "selected_values"]

Values = Mapping[str, Any]


@dataclass(frozen=True)
class Problem:
    """Why a page will not run these values, naming the fields at fault (most likely first)."""

    fields: tuple[str, ...]
    message: str


# ---- the blocks of a view -------------------------------------------------------------------------


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
    """A figure (shared through a cache: do not modify it) and what to notice in it.

    Attributes
    ----------
    selects : mapping
        Controls that clicking a point sets: control key -> position in the point's ``customdata``
        (``{"pick_a": 1}``: the clicked point's ``customdata[1]``). Empty: the figure is not clickable.
    """

    key: str
    figure: go.Figure
    caption: str = ""
    modebar: bool = True
    selects: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Metric:
    label: str
    value: str
    help: str = ""


@dataclass(frozen=True)
class Table:
    rows: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, eq=False)
class Columns:
    """Blocks side by side: one tuple of blocks per column, with relative widths."""

    columns: tuple[tuple[Any, ...], ...]
    widths: tuple[float, ...] | None = None
    gap: str = "small"


@dataclass(frozen=True, eq=False)
class Download:
    """A download button; ``data`` is text, bytes, or a callable making them on click."""

    key: str
    label: str
    data: str | bytes | Callable[[], str | bytes]
    filename: str
    mime: str
    icon: str = ":material/download:"
    help: str | None = None


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
        message markdown with any user's string escaped (``echo.literal``).
    help : str
    upload : tuple of str
        File types to accept; empty for a plain button.
    """

    key: str
    label: str
    run: Callable[..., tuple[bool, str]]
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
        The views (``polarize.deck.Slide``: an address relative to the app, a title, notes); the
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
        ``Columns``), ``Table``, ``Columns``, ``Action`` and ``Link``, in order.
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
        out: list[Plot] = []
        for block in self.blocks:
            if isinstance(block, Plot):
                out.append(block)
            elif isinstance(block, Columns):
                out += View(blocks=tuple(b for column in block.columns for b in column)).plots()
        return out


# ---- the page ---------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Screen:
    """What a view is shown on: the renderer's one view option for every page (part of the cache key).

    Attributes
    ----------
    narrow : bool
        A phone's window: every figure the view builds stacks its panels (``plots.style.narrow``).
    """

    narrow: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.narrow, bool):
            raise ConfigError("narrow", f"must be true or false, not {self.narrow!r}")


def _no_problem(values: Values) -> Problem | None:
    return None


@dataclass(frozen=True)
class PageSpec:
    """One page of the app.

    Attributes
    ----------
    name : str
        Short name: the widget keys' prefix and the file names' stem.
    nav_title, title, icon : str
        In the navigation; at the top of the page; a ``:material/...:`` icon.
    url_path : str
        The page's address (``""`` for the app's root).
    controls : tuple of Control
        In sidebar order; a control keyed ``preset`` loads ``defaults(preset)`` into the others.
    defaults : callable
        ``defaults(preset)``: every control's value (``preset`` None: the page's default preset).
    view : callable
        ``view(job)``: the ``View`` (never raises); cached by the renderer on ``job``.
    job : callable
        ``job(values)``: what ``view`` needs, hashable (the cache key), or a ``Problem``. Runs every rerun:
        keep it cheap. By default the values themselves after ``check``.
    check : callable
        ``check(values)``: a ``Problem`` naming the fields at fault, or None. The link reader drops
        those fields of a link until the values pass.
    caption : callable
        ``caption(values)``: markdown under the title.
    titled : callable, optional
        ``titled(values)``: the title at the top of the page when it depends on the settings (``heading``).
    spinner : str or callable
        Shown while ``view`` runs (after half a second): text, or ``spinner(values)`` saying what runs.
    slide : bool
        Whether a view of this page can be added to a lecture deck (not the deck page itself).
    """

    name: str
    nav_title: str
    title: str
    icon: str
    url_path: str
    view: Callable[[Any], View]
    controls: tuple[Control, ...] = ()
    defaults: Callable[[str | None], dict[str, Any]] = field(default=lambda preset: {})
    job: Callable[[Values], Hashable | Problem] | None = None
    check: Callable[[Values], Problem | None] = _no_problem
    caption: Callable[[Values], str] = field(default=lambda values: "")
    titled: Callable[[Values], str] | None = None
    spinner: str | Callable[[Values], str] = "Running..."
    default: bool = False
    slide: bool = True

    def show(self, job: Any, screen: Screen = Screen()) -> View:
        """``view(job)`` with its figures built for ``screen`` (stacked on a narrow one)."""
        with narrow_screen(screen.narrow):
            return self.view(job)

    def control(self, key: str) -> Control:
        """The control keyed ``key``."""
        for control in self.controls:
            if control.key == key:
                return control
        raise KeyError(key)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.controls)

    def heading(self, values: Values) -> str:
        """The title at the top of the page for ``values``."""
        return self.title if self.titled is None else self.titled(values)

    def running(self, values: Values) -> str:
        """What the spinner says while ``view`` runs for ``values``."""
        return self.spinner(values) if callable(self.spinner) else self.spinner

    def make_job(self, values: Values) -> Hashable | Problem:
        """``job(values)``, or by default the values (as a sorted tuple) when ``check`` passes."""
        if self.job is not None:
            return self.job(values)
        return self.check(values) or tuple(sorted(values.items()))


def selected_values(plot: Plot, points: Sequence[Mapping[str, Any]], spec: PageSpec,
                    values: Values | None = None) -> dict[str, Any]:
    """The control values a click on ``plot`` sets (``Plot.selects``), each fitted to its control.

    Parameters
    ----------
    points : sequence of mapping
        The selected points as the chart reports them; the last one carrying ``customdata`` long
        enough for every position counts (others, e.g. of a trace without it, are passed over).
    values : mapping, optional
        The controls' values now: a control they disable (``Control.enabled``) is left as it is.

    Returns
    -------
    dict
        Control key -> value (``Control.fit``); empty when no point names them all.
    """
    for point in reversed(points):
        data = point.get("customdata")
        data = [data] if data is not None and not isinstance(data, (list, tuple)) else data
        if data is None or any(i >= len(data) for i in plot.selects.values()):
            continue
        chosen = {key: spec.control(key).fit(data[i]) for key, i in plot.selects.items()
                  if values is None or spec.control(key).enabled(values)}
        if all(v is not None for v in chosen.values()):
            return chosen
    return {}


def describe_failure(exc: BaseException) -> str:
    """Why a run (or a study of several runs) could not be made, in words for the page.

    Parameters
    ----------
    exc : exception
        As raised by ``runner.run_with_timeout`` or ``runner.call_with_timeout``.
    """
    if isinstance(exc, RunTimeout):
        return (f"This run took longer than {exc.seconds:g} s and was stopped. Try a shorter horizon, "
                "fewer tokens, or the exact flow instead of gradient descent.")
    if isinstance(exc, (ConfigError, DegenerateStateError)):
        return f"The engine cannot run this: {exc}"
    if isinstance(exc, WorkerCrashed):
        return f"The run failed: {exc}. Try smaller settings."
    if isinstance(exc, ServerBusy):
        return "The server is too busy to queue this run just now. Try again in a minute."
    return f"The engine failed on this run ({type(exc).__name__}: {exc})."


def failure_view(exc: BaseException) -> View:
    """The view of a failed run: ``describe_failure``'s words, ``passing`` for a busy server or a crash."""
    return View(error=describe_failure(exc), passing=isinstance(exc, (ServerBusy, WorkerCrashed)))


def queue_notice(place: int) -> str:
    """What a session waiting for a worker is told (``place`` 1: next to start)."""
    return (f"The server is busy: your run is queued (position {place}). It starts as soon as a worker "
            "is free; the time limit counts from then.")


def config_reason(exc: ConfigError) -> str:
    """A ``ConfigError``'s message without its leading ``field:``."""
    text, prefix = str(exc), f"{exc.field}: "
    return text[len(prefix):] if text.startswith(prefix) else text
