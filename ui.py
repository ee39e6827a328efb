"""Streamlit glue shared by the pages: the cached engine calls and the Explorer's link state.

Everything numerical lives in ``polarize`` (``polarize.explorer`` above all);
this module only caches its calls and moves control values between the URL,
``st.session_state`` and the widgets.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from polarize import comparisons as cmp
from polarize import explorer as ex
from polarize import export
from polarize.config import Experiment
from polarize.presets import PRESETS
from polarize.runner import prestart

# Start the simulation workers now, so that the first run does not wait for their imports.
prestart()


def through_app() -> None:
    """Make sure this page runs inside ``app.py``'s navigation; call it first on every page.

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

_SAVED = "_explorer_saved"
"""Session key: the Explorer's control values, kept while another page is shown."""
_LINK = "_explorer_link"
"""Session key: (values read from the opening link, what the link had that was ignored)."""


@st.cache_resource(show_spinner=False, max_entries=32, hash_funcs={Experiment: Experiment.to_json})
def explore(experiment: Experiment) -> ex.Exploration:
    """``polarize.explorer.explore``, cached on the experiment (keyed by its exact JSON, arrays included).

    A resource cache rather than ``st.cache_data``: the result is immutable and
    shared as is, and its figure stays a built ``go.Figure``. ``cache_data`` would
    unpickle it on every rerun, and ``st.plotly_chart`` re-validates any figure
    given as a dict: together a quarter of a second per rerun, a third of the
    budget for a changed control.
    """
    return ex.explore(experiment)


@st.cache_data(show_spinner=False)
def maths_figures() -> dict[str, dict[str, Any]]:
    """``polarize.explorer.maths_figures``, computed once per server."""
    return ex.maths_figures()


def init_controls() -> dict[str, str]:
    """Give every Explorer control a value in ``st.session_state`` before its widget is drawn.

    On the first visit of a session the values come from the URL (a shared
    link); afterwards from what the user last set (also after a visit to
    another page, which drops the widgets' own state).

    Returns
    -------
    dict
        What the opening link had that was ignored (key -> reason), for as long
        as the controls still hold the link's values; empty otherwise.
    """
    state = st.session_state
    if not all(key in state for key in ex.CONTROLS):
        saved = state.get(_SAVED)
        if saved is None:
            parsed = ex.parse_query(st.query_params.to_dict())
            saved = {"preset": parsed.preset, **parsed.values}
            state[_LINK] = (dict(saved), parsed.ignored)
        for key, value in saved.items():
            if key not in state:
                state[key] = value
    link = state.get(_LINK)
    if link is None:
        return {}
    loaded, ignored = link
    if current_values(with_preset=True) != loaded:
        state[_LINK] = None  # the user has moved on from the link: stop reporting it
        return {}
    return ignored


def current_values(*, with_preset: bool = False) -> dict[str, Any]:
    """The controls' values now (``FIELD_KEYS``, and ``preset`` if asked)."""
    keys = ex.CONTROLS if with_preset else ex.FIELD_KEYS
    return {key: st.session_state[key] for key in keys if key in st.session_state}


def apply_preset() -> None:
    """Widget callback: load the chosen preset's values into every control."""
    for key, value in ex.preset_values(st.session_state["preset"]).items():
        st.session_state[key] = value


def save_and_share(preset: str, values: dict[str, Any]) -> None:
    """Remember the controls for this session and write them into the URL (a shareable link)."""
    st.session_state[_SAVED] = {"preset": preset, **values}
    query = ex.to_query(preset, values)
    if st.query_params.to_dict() != query:
        st.query_params.from_dict(query)


def preset_description(name: str) -> str:
    """The preset's one-line description."""
    return PRESETS[name].description


# ---- the comparison pages ------------------------------------------------------------------------


@st.cache_resource(show_spinner=False, max_entries=16)
def compare(page: str, settings: tuple[tuple[str, Any], ...]) -> cmp.Comparison:
    """``polarize.comparisons.compare``, cached on the page and its control values (see ``explore``)."""
    return cmp.compare(page, dict(settings))


def _widget_key(page: str, key: str) -> str:
    return f"{page}_{key}"


def _init_page(spec: cmp.PageSpec) -> dict[str, str]:
    """Give the page's widgets their values (from the link on a first visit, else as last left).

    Returns
    -------
    dict
        What the opening link had that was ignored, while the controls still hold the link's values.
    """
    state, saved_key, link_key = st.session_state, f"_{spec.name}_saved", f"_{spec.name}_link"
    keys = [_widget_key(spec.name, k) for k in spec.controls]
    if not all(k in state for k in keys):
        saved = state.get(saved_key)
        if saved is None and _arrived_from_another_page(spec.name):
            saved = cmp.preset_defaults(spec)  # the address holds another page's settings, not a link here
        elif saved is None:
            saved, ignored = cmp.parse_page_query(spec, st.query_params.to_dict())
            state[link_key] = (dict(saved), ignored)
        for key, value in saved.items():
            widget = _widget_key(spec.name, key)
            if widget not in state:
                state[widget] = list(value) if isinstance(value, tuple) else value
    link = state.get(link_key)
    if link is None:
        return {}
    loaded, ignored = link
    if _page_values(spec) != loaded:
        state[link_key] = None  # the user has moved on from the link
        return {}
    return ignored


def _arrived_from_another_page(name: str) -> bool:
    """Whether another page has run in this session (its settings may still be in the address)."""
    others = [f"_{other}_saved" for other in cmp.PAGES if other != name] + [_SAVED]
    return any(key in st.session_state for key in others)


def _page_values(spec: cmp.PageSpec) -> dict[str, Any]:
    """The page's control values now (lists as sorted tuples)."""
    out = {}
    for key in spec.controls:
        value = st.session_state.get(_widget_key(spec.name, key))
        out[key] = tuple(sorted(value)) if isinstance(value, list) else value
    return out


def _load_page_preset(spec: cmp.PageSpec) -> None:
    preset = st.session_state[_widget_key(spec.name, "preset")]
    for key, value in cmp.preset_defaults(spec, preset).items():
        st.session_state[_widget_key(spec.name, key)] = list(value) if isinstance(value, tuple) else value


def _control_widget(spec: cmp.PageSpec, key: str, control: ex.Control) -> None:
    """Draw one control in the sidebar, its widget chosen by the control's kind."""
    widget = _widget_key(spec.name, key)

    def name(option: Any) -> str:
        return ex.option_name(key, option) if key in ex.CONTROLS else f"{option:g}"

    if control.kind == "list":
        st.multiselect(control.label, control.options, key=widget, format_func=name, help=control.help,
                       max_selections=getattr(control, "most", None))
    elif control.kind == "choice":
        on_change = (lambda: _load_page_preset(spec)) if key == "preset" else None
        st.selectbox(control.label, control.options, key=widget, format_func=name, help=control.help,
                     on_change=on_change)
    elif control.options:
        st.select_slider(control.label, control.options, key=widget, format_func=name, help=control.help)
    elif control.kind == "int":
        st.number_input(control.label, int(control.low), int(control.high), step=1, key=widget,
                        help=control.help)
    else:
        st.number_input(control.label, control.low, control.high, step=0.1, key=widget, format="%g",
                        help=control.help)


def comparison_page(name: str) -> None:
    """Draw a comparison page: controls in the sidebar (and the URL), figures, captions, table, downloads."""
    through_app()
    spec = cmp.PAGES[name]
    ignored = _init_page(spec)
    with st.sidebar:
        for key, control in spec.controls.items():
            _control_widget(spec, key, control)
            if key == "preset":
                st.caption(preset_description(st.session_state[_widget_key(name, key)]))
    values = _page_values(spec)
    st.session_state[f"_{name}_saved"] = values
    query = cmp.to_page_query(spec, values)
    if st.query_params.to_dict() != query:
        st.query_params.from_dict(query)

    st.title(spec.title)
    st.caption(spec.intro + " Every setting is in the page's address: copy it to share this view.")
    if ignored:
        lines = "\n".join(f"- `{key}`: {reason}" for key, reason in ignored.items())
        st.warning(f"This link had values this page could not use; it used the defaults instead:\n\n{lines}",
                   icon=":material/link_off:")
    problem = spec.check(values)
    if problem:
        st.error(problem, icon=":material/error:")
        st.stop()
    with st.spinner("Running the comparison...", show_time=True):
        view = compare(name, tuple(values.items()))
    if view.error:
        st.error(view.error, icon=":material/error:")
        st.stop()
    for note in view.notes:
        st.warning(note, icon=":material/warning:")
    if view.metrics:
        for column, (label, text, help_text) in zip(st.columns(4), view.metrics, strict=False):
            column.metric(label, text, help=help_text)
    for shown in view.figures:
        st.plotly_chart(shown.figure, key=f"{name}_{shown.key}", theme=None,
                        config={"displaylogo": False, "modeBarButtonsToRemove": ["select2d", "lasso2d"]})
        st.caption(shown.caption)
    if view.table:
        st.dataframe(view.table, key=f"{name}_table", hide_index=True)

    st.subheader("Downloads")
    stem = view.stem
    buttons = st.columns(2 + len(view.figures))
    buttons[0].download_button("Table (CSV)", view.table_csv, f"{stem}.csv", mime="text/csv",
                               on_click="ignore", icon=":material/table:", key=f"{name}_download_csv")
    buttons[1].download_button("Every run (JSON)", view.data_json, f"{stem}.json", mime="application/json",
                               on_click="ignore", icon=":material/data_object:", key=f"{name}_download_json",
                               help="The settings and each run's whole trajectory and configuration.")
    for column, shown in zip(buttons[2:], view.figures, strict=True):
        label = "Figure (HTML)" if len(view.figures) == 1 else f"Figure: {shown.key} (HTML)"
        column.download_button(label,
                               lambda figure=shown.figure: export.dashboard_html(figure, title=stem),
                               f"{stem}-{shown.key}.html", mime="text/html", on_click="ignore",
                               icon=":material/movie:", key=f"{name}_download_{shown.key}",
                               help="The figure as one file that plays offline (plotly.js embedded).")
