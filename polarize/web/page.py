"""A page as data: its controls, presets, check, and a function from values to a ``View``.

``ui.render(name)`` draws any ``PageSpec``: the sidebar from its controls, the
link from and into the address (``polarize.web.links``), and the ``View`` its
``view`` returns. A view is a sequence of blocks (text, maths, figures with
captions, metrics, a table, side-by-side columns) plus warnings and downloads;
nothing here imports Streamlit.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from polarize.plots.display import DEFAULT, Display
from polarize.web.controls import Control
from polarize.web.view import Plot, View

if TYPE_CHECKING:
    from polarize.web.deck_store import DeckStore

__all__ = ["Mend", "PageSpec", "Problem", "selected_values"]

Values = Mapping[str, Any]


@dataclass(frozen=True)
class Problem:
    """Why a page will not run these values, naming the fields at fault (most likely first)."""

    fields: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class Mend:
    """Where a page moves after a choice that leaves it nowhere to go, and one line saying so.

    Attributes
    ----------
    changes : mapping
        Control key -> its new value (the other controls keep theirs).
    note : str
        Markdown shown under the title while the page holds these values.
    """

    changes: Mapping[str, Any]
    note: str


def _no_problem(values: Values) -> Problem | None:
    return None


def _no_mend(values: Values, key: str) -> Mend | None:
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
        ``view(job, narrow)``: the ``View`` (never raises), its figures built for a phone when
        ``narrow``; cached by the renderer on both.
    job : callable
        ``job(values)``: what ``view`` needs, hashable (the cache key), or a ``Problem``. Runs every rerun:
        keep it cheap. By default the values themselves after ``check``. ``job(values, decks)`` when
        the page ``decks``.
    check : callable
        ``check(values)``: a ``Problem`` naming the fields at fault, or None. The link reader drops
        those fields of a link until the values pass.
    mend : callable
        ``mend(values, key)``, after the user set control ``key``: a ``Mend`` when these values
        would be a dead end that other values of the controls avoid (the renderer moves there and
        shows its note), else None.
    caption : callable
        ``caption(values)``: markdown under the title.
    titled : callable, optional
        ``titled(values)``: the title at the top of the page when it depends on the settings (``heading``).
    spinner : str or callable
        Shown while ``view`` runs (after half a second): text, or ``spinner(values)`` saying what runs.
    slide : bool
        Whether a view of this page can be added to a lecture deck (not the deck page itself).
    decks : bool
        Whether the page shows and changes the visitor's lecture decks: its job is then made with the
        visitor's ``DeckStore``, handed over by whoever draws the page (``make_job``), never found in
        ambient state that a fragment's rerun or a callback would not carry.
    lead : str
        What the page is, in two sentences for a newcomer (``polarize.web.leads``; markdown, our own
        text), shown under the title, not on a slide.
    lead_of : callable, optional
        ``lead_of(values)``: the lead for the chosen settings, when the words depend on them
        (``leading``); ``lead`` is the one for the page's defaults.
    tour : tuple of str
        The steps of the page's guided first visit (markdown, our own text), or none.
    presented : tuple of (str, value) pairs
        Control values a presented link (``?present=true``) opens with unless it sets them itself:
        the Explorer keeps its verdict for after Play, a lecturer's reveal.
    ahead : bool
        Whether the view a press of "New random start" would show is made before the press, while
        the workers are idle (``ui.starts.ahead``): for a page whose view is one short run. A
        comparison's runs would hold every worker, and a changed control would wait for them.
    """

    name: str
    nav_title: str
    title: str
    icon: str
    url_path: str
    view: Callable[[Any, bool], View]
    controls: tuple[Control, ...] = ()
    defaults: Callable[[str | None], dict[str, Any]] = field(default=lambda preset: {})
    job: Callable[[Values], Hashable | Problem] | None = None
    check: Callable[[Values], Problem | None] = _no_problem
    mend: Callable[[Values, str], Mend | None] = _no_mend
    caption: Callable[[Values], str] = field(default=lambda values: "")
    titled: Callable[[Values], str] | None = None
    spinner: str | Callable[[Values], str] = "Running..."
    default: bool = False
    slide: bool = True
    decks: bool = False
    lead: str = ""
    lead_of: Callable[[Values], str] | None = None
    tour: tuple[str, ...] = ()
    presented: tuple[tuple[str, Any], ...] = ()
    ahead: bool = False

    def show(self, job: Any, display: Display = DEFAULT) -> View:
        """``view(job)``, its figures built for ``display`` (panels stacked on a phone); not fitted
        to it yet (``polarize.web.fit``)."""
        return self.view(job, display.phone)

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

    def leading(self, values: Values) -> str:
        """The lead under the title for ``values``."""
        return self.lead if self.lead_of is None else self.lead_of(values)

    def running(self, values: Values) -> str:
        """What the spinner says while ``view`` runs for ``values``."""
        return self.spinner(values) if callable(self.spinner) else self.spinner

    def settle(self, values: Values) -> dict[str, Any]:
        """The values with every derived control set (e.g. the tied model's d = n)."""
        out = dict(values)
        for control in self.controls:
            derived = control.derive(out) if control.derive else None
            if derived is not None:
                out[control.key] = derived
        return out

    def make_job(self, values: Values, decks: DeckStore | None = None) -> Hashable | Problem:
        """``job(values)``, or by default the values (as a sorted tuple) when ``check`` passes.

        ``decks``, the visitor's deck store, is required by a page that ``decks`` (a ``TypeError``
        without it) and passed to its ``job``.
        """
        if self.decks:
            if decks is None:
                raise TypeError(f"the {self.name} page needs the visitor's deck store (decks=...)")
            return self.job(values, decks)  # type: ignore[misc,call-arg]
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
