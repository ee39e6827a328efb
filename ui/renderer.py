"""The one Streamlit renderer: draws any page spec (``polarize.web.page.PageSpec``).

``render(spec)`` gives the page's controls their values (``ui.state``), draws them in
the sidebar (``ui.sidebar``), writes them into the address, computes the ``View`` the
spec makes of them (once per distinct job for the whole server: ``VIEWS``) and draws
its blocks (``ui.blocks``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Plotly imports pandas on first use, unlocked: a session importing it while another session's
# plotly checks ``pd.Series`` met a half-initialized module (an AttributeError page). Imported here,
# with the renderer, under ``ui.load``'s lock, before any page draws.
import pandas  # noqa: F401
import streamlit as st

from polarize.plots.display import Display
from polarize.serve.admission import queue_notices
from polarize.serve.cache import SharedCache
from polarize.web.deck_store import DeckError
from polarize.web.failures import queue_notice
from polarize.web.fit import fit, main_block
from polarize.web.page import PageSpec, Problem
from polarize.web.pages import by_name
from polarize.web.pages.deck import shown_error
from polarize.web.progress import draft_notices, progress_notices
from polarize.web.view import View
from ui import charts, deck_show, deckbar, mode, starts, theme, transport, viewport
from ui.blocks import APP_RERUN, draw_block, draw_downloads, draw_draft, hold_main_figure, unshown_answers
from ui.sidebar import sidebar
from ui.state import init_state, mended_note, share

__all__ = ["FITTED", "VIEWS", "render", "shared_view"]

VIEWS = SharedCache(32)
"""Every page's views, keyed by (page, job, phone) and shared by every session: a view is
immutable, and ``ui.charts`` hands its figures to Streamlit without building them again."""
FITTED = SharedCache(16)
"""The views fitted to a display (``polarize.web.fit``), keyed by (page, job, display), shared likewise."""


def render(spec: PageSpec) -> None:
    """Draw a page: its controls in the sidebar and the address, then its view."""
    theme.new_run()
    presenting = mode.presenting()  # read from the address once a run
    theme.present_style(presenting)
    ignored = init_state(spec)
    values = sidebar(spec, presenting=presenting)
    share(spec, values)
    deckbar.deck_box(spec, values, presenting=presenting)
    with st.container(key=theme.PAGE):  # the page's main column, less blank space above (``ui.theme``)
        view = _page(spec, values, ignored, presenting)
    if view is not None:  # the sidebar's part of the view: drawn by the script's run, not the fragment's
        if view.sidebar:
            theme.caption(view.sidebar, st.sidebar)
        transport.controls(view)


def _page(spec: PageSpec, values: dict[str, Any], ignored: dict[str, tuple[str, str]],
          presenting: bool) -> View | None:
    """The page's main column: its head, then its view (``_body``); the view (None: an error shown)."""
    with st.container(key=theme.HEAD):
        _head(spec, values, ignored, mended_note(spec, values), presenting)
    try:
        job = spec.make_job(values, decks=deckbar.visitor_store() if spec.decks else None)
    except DeckError as exc:  # the server's deck file cannot be used: said on the page, in one line
        job = Problem((exc.field,), shown_error(exc))
    if isinstance(job, Problem):
        viewport.measure(viewport.last(presenting=presenting, deck=deck_show.showing(presenting)))
        st.error(job.message, icon=":material/error:")
        return None
    return _body(spec, values, job, presenting)


@st.fragment
def _body(spec: PageSpec, values: dict[str, Any], job: Any, presenting: bool) -> View:
    """The page's view fitted to the display the page posted, and the element measuring it: a
    fragment (``st.fragment``), so that a measure posted reruns this alone, not the page's script.

    A visit is one run of the script, its main figure drawn fitted to the display the server assumes
    (a browser seen before: as its cookie, ``viewport.COOKIE``, remembers), which the chart element
    fits again to the room it finds below the figure's top. Only a window the server assumed wrong
    in what changes the figures' content (a phone, a dark theme, another column's width) posts a
    measure, and this fragment runs again (the chart element draws no first figure made for another
    window's width: the one made for its own comes in this run). Its arguments are those of the
    script's last run (the controls' values, the job): only the display changes between its own
    reruns. The view, for the sidebar's part the script draws.
    """
    if st.session_state.pop(APP_RERUN, False):  # a click on a figure set controls: the page runs again
        st.rerun()
    display = viewport.last(presenting=presenting, deck=deck_show.showing(presenting))
    view = _view(spec, job, display, spec.running(values))
    theme.dark_style(display.dark)
    # A passing view (e.g. a run cut at its time limit) is not kept: the next rerun may finish it.
    fitted = fit(view, display) if view.passing else FITTED.get((spec.name, job, display),
                                                                lambda: fit(view, display))
    viewport.measure(display)
    _show(fitted, spec.name, lambda: _below_figure(spec, values, presenting))
    if fitted.error is None and not fitted.passing:  # else the server is busy or the settings fail
        making = starts.ahead(spec, values, lambda upcoming: _made(spec, upcoming, display))
        _hold_next(spec, values, fitted, display, making)
    return fitted


def _made(spec: PageSpec, job: Any, display: Display) -> None:
    """The view of ``job`` made and kept as this page's next script run would find it: computed
    (``VIEWS``), fitted to ``display`` (``FITTED``) and each figure's JSON encoded (``ui.charts``).
    Made ahead of a press (``starts.ahead``), in a thread that is no session's."""
    view = shared_view(spec, job, display)
    if not view.passing:
        for plot in FITTED.get((spec.name, job, display), lambda: fit(view, display)).plots():
            charts.payload(plot.figure)


def _hold_next(spec: PageSpec, values: dict[str, Any], shown: View, display: Display,
               making: Any) -> None:
    """Hand the browser the main figure of the page's next "New random start" (``starts.upcoming``),
    fitted to ``display`` as the press's run will fit it, once it is made (``starts.made``): the browser
    draws it at the press (``ui.blocks.hold_main_figure``). Nothing is held on the page's first run in the
    session (nothing is made ahead then: ``starts.ahead``), nor when the view is not made (the workers were
    busy: the press runs it, as any change), or is passing."""
    job = starts.upcoming(spec, values)
    if job is None:
        return
    starts.made(making)
    view = VIEWS.peek((spec.name, job, display.phone))  # made by anyone: this page's, another's
    if view is None or view.passing:
        return
    fitted = FITTED.get((spec.name, job, display), lambda: fit(view, display))
    if fitted.error is None:
        hold_main_figure(shown, fitted, spec.name, starts.RESEED.format(page=spec.name))


def _head(spec: PageSpec, values: dict[str, Any], ignored: dict[str, tuple[str, str]], note: str,
          presenting: bool) -> None:
    """The title, the presentation bar, the lead, and what the link changed (``_link_note``).

    Short, so that the main figure and its transport fit the window below it (``polarize.web.fit``).
    """
    title, lead = spec.heading(values), spec.leading(values) if not presenting else None
    st.title(title)
    deck_show.show_bar(presenting)
    if lead:
        st.markdown(lead)
    _link_note(ignored, note)


def _link_note(ignored: dict[str, tuple[str, str]], note: str) -> None:
    """What the link (or a choice) changed, just above the main figure where it shows, in a line each:
    the link's values this page could not use (why, in the line's help) and a move off a dead end
    (``state.mended_note``). A warning box of the reasons pushed the Explorer's Play button to 870 px
    of a 1280 x 720 window, and the move's note under the figure sat at 1140 px, out of view."""
    if ignored:
        shown = ", ".join(value for value, _ in ignored.values())
        theme.caption(f":material/link_off: This link's {shown} could not be used here: "
                      f"{'the default' if len(ignored) == 1 else 'the defaults'} instead.",
                      help="\n".join(f"- {value}: {why}" for value, why in ignored.values()),
                      key="link_ignored")
    if note:
        theme.caption(f":material/swap_horiz: {note}", key="link_mended")


def _below_figure(spec: PageSpec, values: dict[str, Any], presenting: bool) -> None:
    """Under the main figure: the page's caption, not on a slide (the guided first visit is at the top
    of the sidebar's controls, ``ui.sidebar``)."""
    if presenting:
        return
    caption = spec.caption(values)
    if caption:
        theme.caption(caption)


def _view(spec: PageSpec, job: Any, display: Display, running: str) -> View:
    """The page's view of ``job``, from ``VIEWS`` or computed here with the session's notices.

    While it computes, this session sees its place in the run queue or a progress bar, and the
    view's drafts (a comparison's panels as their runs come back: ``progress.draft``), each fitted to
    the display and drawn in place of the last, until the whole view takes their place; a
    passing view (a busy server, a run cut at its time limit) is not kept, so the next
    rerun tries again.
    """
    notice, drafted, drafts = st.empty(), st.empty(), [0]

    def draft(view: View, text: str) -> None:
        drafts[0] += 1
        draw_draft(fit(view, display), text, spec.name, drafted, drafts[0])

    with (st.spinner(running, show_time=True),
          queue_notices(lambda place: notice.info(queue_notice(place), icon=":material/hourglass_top:")),
          progress_notices(lambda fraction, text: notice.progress(fraction, text=text)),
          draft_notices(draft)):
        view = shared_view(spec, job, display)
    notice.empty()
    drafted.empty()
    return view


def shared_view(spec: PageSpec, job: Any, display: Display) -> View:
    """The page's view of ``job`` from ``VIEWS``, else computed; kept for every session unless it is
    ``passing`` (cut short, failed or timed out: the next visitor computes it again)."""
    return VIEWS.get((spec.name, job, display.phone), lambda: by_name(spec.name).show(job, display),
                     keep=lambda view: not view.passing)


def _show(view: View, page: str, below_figure: Callable[[], None]) -> None:
    """Draw a view: its notes, its blocks and its downloads (or its error).

    The main figure (``polarize.web.fit.main_block``) is drawn in a container of its own
    (``viewport.FIGURE``), whose width the page measures (the main column's). The warnings and
    ``below_figure`` come right under the main figure: above it they pushed it and its Play button
    out of the window.
    """
    if view.error:
        st.error(view.error, icon=":material/error:")
        return
    main = main_block(view.blocks)
    if main is None:
        _notes(view, below_figure)
    for i, block in enumerate(view.blocks):
        if i != main:
            draw_block(block, page)
            continue
        with st.container(key=viewport.FIGURE):
            draw_block(block, page)
        _notes(view, below_figure)
    draw_downloads(view, page)
    unshown_answers(page, view)


def _notes(view: View, below_figure: Callable[[], None]) -> None:
    for warning in view.warnings:
        st.warning(warning, icon=":material/warning:")
    below_figure()
