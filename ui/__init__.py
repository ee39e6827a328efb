"""The one Streamlit renderer: draws any page spec (``polarize.web.page.PageSpec``).

``render(spec)`` gives the page's controls their values (from a shared link on
a first visit, else as the user left them), draws them in the sidebar, writes
them into the address, and shows the ``View`` the spec makes of them. Everything
a page knows lives in ``polarize.web``; only this package imports Streamlit.
Beside it: ``present`` (presentation mode, presenting a deck), ``deckbar`` (the
sidebar's "Present or add to a deck"), ``viewport`` (the window's size).
"""

from __future__ import annotations

import contextvars
import gc
from collections.abc import Callable
from typing import Any

import streamlit as st

from polarize.config import Experiment
from polarize.runner import prestart, queue_notices
from polarize.web import links
from polarize.web.controls import Control
from polarize.web.echo import echo
from polarize.web.page import (
    Action,
    Caption,
    Columns,
    Header,
    Link,
    Maths,
    Metric,
    PageSpec,
    Plot,
    Problem,
    Screen,
    Table,
    Text,
    View,
    queue_notice,
    selected_values,
)
from polarize.web.pages import PAGES, by_name
from polarize.web.progress import progress_notices
from ui import charts, deckbar, present, starts, transport
from ui.viewport import viewport

# Start the simulation workers now, so that the first run does not wait for their imports.
prestart()
# What is imported by now lives as long as the server: out of the garbage collector's sight, the
# full collection Streamlit makes after every rerun (runner.postScriptGC) scans only what the
# sessions made since (it took about 0.1 CPU-s of each Explorer load).
gc.freeze()

PLOT_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["select2d", "lasso2d"]}


def run_app() -> None:
    """The app (``app.py``): the page set-up, then ``st.navigation`` over ``polarize.web.pages``."""
    st.set_page_config(page_title="polarize", page_icon=":material/scatter_plot:", layout="wide",
                       initial_sidebar_state=present.sidebar_state())
    # Less blank space above the title, so that the dashboard fits a projector's 1080 lines.
    st.html("<style>[data-testid='stMainBlockContainer'] {padding-top: 2.2rem;}</style>")
    st.navigation([st.Page(f"pages/{p.name}.py", title=p.nav_title, icon=p.icon, url_path=p.url_path,
                           default=p.default) for p in PAGES]).run()


def through_app() -> None:
    """Make sure this page runs inside ``app.py``'s navigation; ``render`` calls it first.

    Until ``st.navigation`` has run once, a fresh server treats a ``pages/`` folder as
    Streamlit's legacy multipage app: a shared link to a page opened first (``/rates``)
    would run that file alone, without the app's layout or menu. Leaving that mode and
    rerunning sends the same request through ``app.py``, which then routes it to this
    page. (Streamlit keeps the mode as a flag on its ``PagesManager``.)
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


@st.cache_resource(show_spinner=False, max_entries=32, hash_funcs={Experiment: Experiment.to_json})
def _view(name: str, job: Any, screen: Screen) -> View:
    """The page's view of a job, shared by every session (keyed by an experiment's exact JSON).

    A resource cache rather than ``st.cache_data``: a view is immutable and shared
    as is. ``cache_data`` would unpickle its figures on every rerun; ``ui.charts``
    hands them to Streamlit without building or validating them again.
    """
    return by_name(name).show(job, screen)


def render(spec: PageSpec) -> None:
    """Draw a page: its controls in the sidebar and the address, then its view."""
    through_app()
    window = viewport(measure_height=present.on())  # once a run, for every use of the window's size
    deckbar.bind_store()
    present.look()
    ignored = _init_state(spec)
    values = _sidebar(spec)
    _share(spec, values)
    deckbar.deck_box(spec, values)
    st.title(spec.heading(values))
    present.show_bar()
    caption = spec.caption(values)
    if caption and not present.on():
        st.caption(caption)
    if ignored:
        st.warning("This link had values this page could not use; it used the defaults instead:\n\n"
                   + "\n".join(f"- {line}" for line in ignored.values()), icon=":material/link_off:")
    job = spec.make_job(values)
    if isinstance(job, Problem):
        st.error(job.message, icon=":material/error:")
        st.stop()
    notice, running = st.empty(), spec.running(values)
    with (st.spinner(running, show_time=True),
          queue_notices(lambda place: _notify(lambda: notice.info(queue_notice(place),
                                                                  icon=":material/hourglass_top:"))),
          progress_notices(lambda fraction, text: _notify(lambda: notice.progress(fraction, text=text)))):
        view = _view(spec.name, job, screen := Screen(narrow=window.narrow))  # a phone: panels stacked
    notice.empty()
    if view.passing:
        _view.clear(spec.name, job, screen)  # a busy server or a crash: the next rerun tries again
    view = present.fitted(spec.name, (job, screen), view, window.height, narrow=screen.narrow)
    if view.sidebar:
        st.sidebar.caption(view.sidebar)
    if view.error:
        st.error(view.error, icon=":material/error:")
        st.stop()
    for warning in view.warnings:
        st.warning(warning, icon=":material/warning:")
    for block in view.blocks:
        _block(block, spec.name)
    _downloads(view, spec.name)
    transport.controls(view)


def _notify(draw: Callable[[], Any]) -> None:
    """Draw a notice from inside ``_view``'s run: the place in the run queue, or a progress bar.

    Streamlit records what a cached function draws and replays it on every cache hit; this
    notice belongs to this rerun only (replayed, it would show other sessions a queue they
    are not in, in a placeholder they do not have). So it is drawn in a copy of the context
    with Streamlit's "inside a cached function" flag off.
    """
    from streamlit.runtime.scriptrunner_utils.script_run_context import in_cached_function

    def show() -> None:
        in_cached_function.set(False)
        draw()

    contextvars.copy_context().run(show)


# ---- the controls' state -------------------------------------------------------------------------


def _key(spec: PageSpec, key: str) -> str:
    return f"{spec.name}_{key}"


def _init_state(spec: PageSpec) -> dict[str, str]:
    """Give the page's widgets their values: from the link on a first visit, else as last left.

    Returns
    -------
    dict
        What the opening link had that was ignored (key -> a line of markdown), for as long as the
        controls still hold the link's values; empty otherwise.
    """
    state, saved_key, link_key = st.session_state, f"_{spec.name}_saved", f"_{spec.name}_link"
    following = _following(spec)
    if not all(_key(spec, key) in state for key in spec.keys):
        saved = state.get(saved_key)
        if saved is None and not following and _arrived_from_another_page(spec):
            saved = spec.defaults(None)  # the address holds another page's settings, not a link here
        elif saved is None:
            query = st.query_params.to_dict()
            saved, ignored = links.read_link(spec, query)
            saved = _settle(spec, saved)
            state[link_key] = (saved, {key: f"{echo(f'{key}={query[key]}')}: {reason}"
                                       for key, reason in ignored.items()})
        for key, value in saved.items():
            state.setdefault(_key(spec, key), list(value) if isinstance(value, tuple) else value)
    link = state.get(link_key)
    if link is None:
        return {}
    loaded, ignored = link
    if _values(spec) != loaded:
        state[link_key] = None  # the user has moved on from the link: stop reporting it
        return {}
    return ignored


def _following(spec: PageSpec) -> bool:
    """Whether a deck's slide opens this page now: then its values are forgotten, to read the link."""
    if st.session_state.get(present.FOLLOW) != spec.name:
        return False
    del st.session_state[present.FOLLOW]
    for key in (*(_key(spec, key) for key in spec.keys), f"_{spec.name}_saved", f"_{spec.name}_link"):
        st.session_state.pop(key, None)
    return True


def _arrived_from_another_page(spec: PageSpec) -> bool:
    """Whether another page has run in this session (its settings may still be in the address)."""
    return any(f"_{other.name}_saved" in st.session_state for other in PAGES if other.name != spec.name)


def _values(spec: PageSpec) -> dict[str, Any]:
    """The page's control values now (lists as sorted tuples)."""
    out = {}
    for key in spec.keys:
        value = st.session_state.get(_key(spec, key))
        out[key] = tuple(sorted(value)) if isinstance(value, list) else value
    return out


def _settle(spec: PageSpec, values: dict[str, Any]) -> dict[str, Any]:
    """The values with every derived control set (e.g. the tied model's d = n)."""
    values = dict(values)
    for control in spec.controls:
        derived = control.derive(values) if control.derive else None
        if derived is not None:
            values[control.key] = derived
    return values


def _share(spec: PageSpec, values: dict[str, Any]) -> None:
    """Remember the values for this session and write them into the URL (a shareable link)."""
    st.session_state[f"_{spec.name}_saved"] = values
    query = links.to_query(spec, values, present=links.presenting(st.query_params.to_dict()) is True)
    if st.query_params.to_dict() != query:
        st.query_params.from_dict(query)


def _load_preset(spec: PageSpec) -> None:
    """Widget callback: load the chosen preset's values into every control."""
    for key, value in spec.defaults(st.session_state[_key(spec, "preset")]).items():
        st.session_state[_key(spec, key)] = list(value) if isinstance(value, tuple) else value


# ---- the sidebar --------------------------------------------------------------------------------


def _sidebar(spec: PageSpec) -> dict[str, Any]:
    """Draw the page's controls (derived values set, rules applied); their values."""
    values = _settle(spec, _values(spec))
    state, group, row = st.session_state, "", []
    starts.buttons(spec, _load_preset, _key)
    with st.sidebar:
        for control in spec.controls:
            key = _key(spec, control.key)
            if state.get(key) != values[control.key] and control.derive:
                state[key] = values[control.key]
            if control.group and control.group != group:
                st.subheader(control.group)
                group = control.group
            if control.half:
                row = row or list(st.columns(2))
                where = row.pop(0)
            else:
                row, where = [], st.sidebar
            _widget(spec, control, where, values)
    return values


def _widget(spec: PageSpec, control: Control, where: Any, values: dict[str, Any]) -> None:
    """Draw one control, its widget chosen by its kind."""
    key = _key(spec, control.key)
    enabled = control.enabled(values)
    help_text = control.help + ("" if enabled else control.off_help)
    common = {"key": key, "disabled": not enabled, "help": None if present.on() else help_text}
    c = control
    if c.kind in ("slider", "number"):
        number = where.slider if c.kind == "slider" else where.number_input
        if c.integer:
            number(c.label, int(c.low), int(c.high), step=int(c.step or 1), **common)
        else:
            number(c.label, float(c.low), float(c.high), step=c.step, format="%g", **common)
    else:
        draw: dict[str, Callable[..., Any]] = {
            "select": lambda: where.selectbox(c.label, c.options, format_func=c.name, **common,
                                              on_change=_load_preset if c.key == "preset" else None,
                                              args=(spec,)),
            "radio": lambda: where.radio(c.label, c.options, format_func=c.name, horizontal=True, **common),
            "select_slider": lambda: where.select_slider(c.label, c.options, format_func=c.name, **common),
            "multiselect": lambda: where.multiselect(c.label, c.options, format_func=c.name,
                                                     max_selections=c.most, **common),
        }
        draw[c.kind]()
    if c.caption and not present.on():
        where.caption(c.caption(st.session_state[key]))


# ---- the view -----------------------------------------------------------------------------------


def _columns(block: Columns, page: str) -> None:
    for column, blocks in zip(st.columns(block.widths or len(block.columns), gap=block.gap), block.columns,
                              strict=True):
        with column:
            for inner in blocks:
                _block(inner, page)


def _plot(block: Plot, page: str) -> None:
    key = f"{page}_{block.key}"
    clicks = {"on_select": lambda: _clicked(block, page), "selection_mode": "points"} if block.selects else {}
    charts.chart(block.figure, key=key, theme=None,
                 config=PLOT_CONFIG if block.modebar else {"displaylogo": False}, **clicks)
    if block.caption:
        st.caption(block.caption)


def _clicked(block: Plot, page: str) -> None:
    """Chart callback (before the rerun): set the controls a clicked point names (``Plot.selects``).

    The widgets are not drawn yet, so their state may change; the rerun then runs the page
    with these values and writes them into the link.
    """
    spec = by_name(page)
    points = st.session_state[f"{page}_{block.key}"]["selection"]["points"]
    for key, value in selected_values(block, points, spec, _settle(spec, _values(spec))).items():
        st.session_state[_key(spec, key)] = value


def _action(block: Action, page: str) -> None:
    """A button (or file upload) that changes stored data; what it said shows under it after the rerun."""
    key, said = f"{page}_{block.key}", f"_{page}_{block.key}_said"
    if block.upload:
        file = st.file_uploader(block.label, type=list(block.upload), key=key, help=block.help or None)
        if file is not None and st.session_state.get(f"{said}_file") != file.file_id:
            st.session_state[f"{said}_file"] = file.file_id
            st.session_state[said] = block.run(file.getvalue())
            st.rerun()
    elif st.button(block.label, key=key, help=block.help or None):
        st.session_state[said] = block.run()
        st.rerun()
    if said in st.session_state:
        ok, message = st.session_state.pop(said)
        (st.success if ok else st.error)(message)


_DRAW: dict[type, Callable[[Any, str], None]] = {
    Text: lambda b, page: st.markdown(b.text),
    Caption: lambda b, page: st.caption(b.text),
    Header: lambda b, page: st.header(b.text),
    Maths: lambda b, page: st.latex(b.latex),
    Metric: lambda b, page: st.metric(b.label, b.value, help=b.help or None),
    Table: lambda b, page: st.dataframe(list(b.rows), key=f"{page}_table", hide_index=True),
    Plot: _plot,
    Columns: _columns,
    Action: _action,
    Link: present.draw_link,
}


def _block(block: Any, page: str) -> None:
    _DRAW[type(block)](block, page)


def _downloads(view: View, page: str) -> None:
    if not view.downloads:
        return
    st.subheader("Downloads")
    for column, d in zip(st.columns(len(view.downloads)), view.downloads, strict=True):
        column.download_button(d.label, d.data, d.filename, mime=d.mime, on_click="ignore", icon=d.icon,
                               key=f"{page}_download_{d.key}", help=d.help)
