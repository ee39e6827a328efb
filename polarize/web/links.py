"""Links: one lenient reader and one writer of a page's values, for every page.

Why not Streamlit's ``bind="query-params"``: a bound widget drops a value it
cannot use without saying so, checks each widget alone (not the values
together: gradient descent's step count, a normalizer undefined at the start),
takes the widget key as the URL key (the pages' widgets need distinct keys, their
links the short ones), and forbids writing the address directly. The page must
report exactly which fields of a link it ignored and why, so it keeps this
reader of its own: ``read_link`` on the first visit, ``to_query`` on every rerun.

Besides the controls, every page knows one key of its own: ``present`` (``true`` or
``false``), presentation mode (``presenting``). ``link`` is the address of a view,
relative to the app, as a deck stores it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple
from urllib.parse import parse_qs, urlencode, urlsplit

from polarize.web.page import Mend, PageSpec, Problem

__all__ = ["PRESENT", "Opened", "link", "mend", "open_link", "presenting", "read_link", "resolve", "to_query"]

PRESENT = "present"
"""The query key of presentation mode, known to every page."""
_TRUTH = {"true": True, "1": True, "false": False, "0": False}

Values = Mapping[str, Any]


class Opened(NamedTuple):
    """A link, read: the page's values, what it ignored (key -> why), and the page's note when its
    values were moved off a dead end (``mend``), else ""."""

    values: dict[str, Any]
    ignored: dict[str, str]
    note: str = ""


def mend(spec: PageSpec, values: Values, key: str) -> tuple[dict[str, Any], Mend | None]:
    """The values after control ``key`` was set, from the menu or in a link: the one path for both.

    Returns
    -------
    values : dict
        Settled (``PageSpec.settle``), and moved by the page's ``mend`` when it has somewhere to go.
    mend : Mend or None
        What moved them (its note says so), or None.
    """
    settled = spec.settle(values)
    moved = spec.mend(settled, key)
    if moved is None:
        return settled, None
    return spec.settle({**settled, **moved.changes}), moved


def read_link(spec: PageSpec, query: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """A page's values from a URL query, and what it ignored (``open_link`` without the note)."""
    opened = open_link(spec, query)
    return opened.values, opened.ignored


def open_link(spec: PageSpec, query: Mapping[str, Any]) -> Opened:
    """A page's values from a URL query; never raises.

    Keys that no control of the page owns (``utm_source``, ``fbclid``, another
    page's settings) are ignored silently; ``present`` is read by ``presenting``, and
    reported here only when its value is neither true nor false. Each owned key is parsed alone;
    then each is set as from the menu (``mend``: ``/?normalizer=l2`` moves the start where l2 is
    defined, as choosing L2 does), unless the move would undo a value the link set; then the
    page's ``check`` judges the values together, and the link field it names is dropped (the one
    whose removal clears the problem, if any), until they pass.

    Parameters
    ----------
    spec : PageSpec
    query : mapping of str to str (or to a list of str)
        E.g. ``st.query_params.to_dict()``.

    Returns
    -------
    Opened
        ``values``: every control, the link's usable values over the defaults (of the link's
        preset, if any, moved by a mend); ``ignored``: link key -> why it was ignored, in words
        (empty for a clean link); ``note``: the mend's note, or "".
    """
    owned = {c.key: c for c in spec.controls}
    ignored: dict[str, str] = {}
    preset = None
    if "preset" in owned and "preset" in query:
        try:
            preset = owned["preset"].parse(query["preset"])
        except ValueError as exc:
            ignored["preset"] = str(exc)
    if PRESENT in query and PRESENT not in owned and presenting(query) is None:
        ignored[PRESENT] = "presentation mode is true or false"
    base = spec.defaults(preset) | (dict(spec.presented) if presenting(query) else {})
    candidate: dict[str, Any] = {}
    for key, control in owned.items():
        if key in query and key != "preset":
            try:
                candidate[key] = control.parse(query[key])
            except ValueError as exc:
                ignored[key] = str(exc)
    moved_by, unmended = None, base
    for key in (key for key in spec.keys if key in candidate):
        _, moved = mend(spec, {**base, **candidate}, key)
        if moved is not None and all(candidate.get(k, v) == v for k, v in moved.changes.items()):
            moved_by, base = (key, moved), {**base, **moved.changes}
            break
    while candidate:
        problem = spec.check({**base, **candidate})
        if problem is None:
            break
        culprit = _culprit(spec, base, candidate, problem)
        ignored[culprit] = problem.message
        del candidate[culprit]
    if moved_by is not None and moved_by[0] not in candidate:  # what it moved for is gone: so is the move
        base, moved_by = unmended, None
    return Opened({**base, **candidate}, ignored, moved_by[1].note if moved_by else "")


def _culprit(spec: PageSpec, base: Values, candidate: dict[str, Any], problem: Problem) -> str:
    """The link field to drop for ``problem``: the first whose removal alone makes the values pass
    (so that a link loses as little as it must), trying the fields the problem names first.

    Falls back to the first named field the link set, then to the link's latest value.
    """
    named = [key for key in problem.fields if key in candidate]
    others = [key for key in reversed(candidate) if key not in named]
    for key in named + others:
        rest = {k: v for k, v in candidate.items() if k != key}
        if spec.check({**base, **rest}) is None:
            return key
    return named[0] if named else next(reversed(candidate))


def to_query(spec: PageSpec, values: Values, *, present: bool = False) -> dict[str, str]:
    """The query string of a link to these values: every control, as text, the preset first (the
    others read over it), then in sidebar order (then ``present=true`` in presentation mode)."""
    ordered = sorted(spec.controls, key=lambda c: c.key != "preset")  # stable: the sidebar's order after
    query = {c.key: c.to_text(values[c.key]) for c in ordered if c.key in values}
    return query | ({PRESENT: "true"} if present else {})


def presenting(query: Mapping[str, Any]) -> bool | None:
    """Whether a URL query asks for presentation mode: ``present=true`` (or ``1``).

    Returns
    -------
    bool or None
        False when the key is absent; None when its value is none of true, false, 1 and 0.
    """
    value = query.get(PRESENT, "false")
    value = value[-1] if isinstance(value, list) and value else value
    return _TRUTH.get(str(value).strip().lower())


def link(spec: PageSpec, values: Values, *, present: bool = False) -> str:
    """The address of a page with these values, relative to the app (``/rates?n=8&...``).

    The default page's address is the app's root (``/?n=8&...``), as its menu entry's (its
    ``url_path`` opens it too: ``ui.navigation.st_pages``).
    """
    query = to_query(spec, values, present=present)
    return f"/{'' if spec.default else spec.url_path}" + (f"?{urlencode(query)}" if query else "")


def resolve(address: str, pages: Sequence[PageSpec]) -> tuple[PageSpec, dict[str, str]] | None:
    """The page and query a relative address (``link``'s, e.g. a deck's slide) leads to.

    Returns
    -------
    (PageSpec, dict) or None
        None when the address leaves the app or names no page of ``pages``; the query's
        last value of each key.
    """
    parts = urlsplit(address)
    if parts.scheme or parts.netloc or not address.startswith("/") or address.startswith("//"):
        return None
    path = parts.path.strip("/")
    for spec in pages:
        if spec.url_path == path or (spec.default and not path):  # the root, or an older deck's name
            return spec, {key: values[-1] for key, values in parse_qs(parts.query).items()}
    return None
