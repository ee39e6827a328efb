"""The controls' state in a session: from a shared link on a first visit, else as the user left them.

Each control keeps its value under ``widget_key(spec, key)`` (``ui.controls`` shows it and writes
a change there); the page's last
values are kept as ``_NAME_saved`` (so a page left and opened again keeps its settings)
and written into the address bar (``share``), which is what makes every view a link.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from polarize.web import links
from polarize.web.echo import echo
from polarize.web.page import PageSpec
from polarize.web.pages import PAGES
from ui import deck_show

__all__ = ["changed", "current_values", "init_state", "load_preset", "mended_note", "settle", "share",
           "widget_key"]


def widget_key(spec: PageSpec, key: str) -> str:
    """The session-state key of ``spec``'s control ``key``."""
    return f"{spec.name}_{key}"


def init_state(spec: PageSpec) -> dict[str, tuple[str, str]]:
    """Give the page's widgets their values: from the link on a first visit, else as last left.

    Returns
    -------
    dict
        What the opening link had that was ignored (key -> its ``key=value`` as a markdown code span,
        and why in words), for as long as the
        controls still hold the link's values; empty otherwise.
    """
    state, saved_key, link_key = st.session_state, f"_{spec.name}_saved", f"_{spec.name}_link"
    following = _following(spec)
    if not all(widget_key(spec, key) in state for key in spec.keys):
        saved = state.get(saved_key)
        if saved is None and not following and _arrived_from_another_page(spec):
            saved = spec.defaults(None)  # the address holds another page's settings, not a link here
        elif saved is None:
            query = st.query_params.to_dict()
            saved, ignored, note = links.open_link(spec, query)
            saved = settle(spec, saved)
            state[link_key] = (saved, {key: (echo(f"{key}={query[key]}"), reason)
                                       for key, reason in ignored.items()})
            if note:  # the link was moved off a dead end, as the menu moves: said the same way
                state[f"_{spec.name}_mended"] = (saved, note)
        for key, value in saved.items():
            state.setdefault(widget_key(spec, key), list(value) if isinstance(value, tuple) else value)
    link = state.get(link_key)
    if link is None:
        return {}
    loaded, ignored = link
    if current_values(spec) != loaded:
        state[link_key] = None  # the user has moved on from the link: stop reporting it
        return {}
    return ignored


def _following(spec: PageSpec) -> bool:
    """Whether a deck's slide opens this page now: then its values are forgotten, to read the link."""
    if st.session_state.get(deck_show.FOLLOW) != spec.name:
        return False
    del st.session_state[deck_show.FOLLOW]
    for key in (*(widget_key(spec, key) for key in spec.keys), f"_{spec.name}_saved", f"_{spec.name}_link"):
        st.session_state.pop(key, None)
    return True


def _arrived_from_another_page(spec: PageSpec) -> bool:
    """Whether another page has run in this session (its settings may still be in the address)."""
    return any(f"_{other.name}_saved" in st.session_state for other in PAGES if other.name != spec.name)


def current_values(spec: PageSpec) -> dict[str, Any]:
    """The page's control values now (lists as sorted tuples)."""
    out = {}
    for key in spec.keys:
        value = st.session_state.get(widget_key(spec, key))
        out[key] = tuple(sorted(value)) if isinstance(value, list) else value
    return out


def settle(spec: PageSpec, values: dict[str, Any]) -> dict[str, Any]:
    """The values with every derived control set (``PageSpec.settle``)."""
    return spec.settle(values)


def share(spec: PageSpec, values: dict[str, Any]) -> None:
    """Remember the values for this session and write them into the URL (a shareable link)."""
    st.session_state[f"_{spec.name}_saved"] = values
    query = links.to_query(spec, values, present=links.presenting(st.query_params.to_dict()) is True)
    if st.query_params.to_dict() != query:
        st.query_params.from_dict(query)


def changed(spec: PageSpec, key: str) -> None:
    """Callback of every control's change (``ui.controls``): a preset loads its values; then the page may
    move off a dead end.

    The page's ``mend`` sees the values with this change; its changes are written into the widgets
    here (a callback runs before the rerun draws them) and its note kept for as long as the controls
    hold what it chose (``mended_note``). The address follows on the rerun (``share``).
    """
    if key == "preset":
        load_preset(spec)
    values, mend = links.mend(spec, current_values(spec), key)  # the one path, as a link's
    if mend is None:
        st.session_state.pop(f"_{spec.name}_mended", None)
        return
    for name in mend.changes:
        st.session_state[widget_key(spec, name)] = values[name]
    st.session_state[f"_{spec.name}_mended"] = (settle(spec, current_values(spec)), mend.note)


def mended_note(spec: PageSpec, values: dict[str, Any]) -> str:
    """The note of the page's last move off a dead end, while ``values`` are still where it moved; else ""."""
    mended = st.session_state.get(f"_{spec.name}_mended")
    if mended is None:
        return ""
    if mended[0] != values:
        del st.session_state[f"_{spec.name}_mended"]  # the user has moved on
        return ""
    return mended[1]


def load_preset(spec: PageSpec) -> None:
    """Load the chosen preset's values into every control (in a callback, before the rerun)."""
    for key, value in spec.defaults(st.session_state[widget_key(spec, "preset")]).items():
        st.session_state[widget_key(spec, key)] = list(value) if isinstance(value, tuple) else value
