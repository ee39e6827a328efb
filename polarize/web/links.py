"""Links: one lenient reader and one writer of a page's values, for every page.

Why not Streamlit's ``bind="query-params"``: a bound widget drops a value it
cannot use without saying so, checks each widget alone (not the values
together: gradient descent's step count, a normalizer undefined at the start),
takes the widget key as the URL key (the pages' widgets need distinct keys, their
links the short ones), and forbids writing the address directly. The page must
report exactly which fields of a link it ignored and why, so it keeps this
reader of its own: ``read_link`` on the first visit, ``to_query`` on every rerun.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from polarize.web.page import PageSpec, Problem

__all__ = ["read_link", "to_query"]

Values = Mapping[str, Any]


def read_link(spec: PageSpec, query: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """A page's values from a URL query; never raises.

    Keys that no control of the page owns (``utm_source``, ``fbclid``, another
    page's settings) are ignored silently. Each owned key is parsed alone; then
    the page's ``check`` judges the values together, and the link field it names
    is dropped (the one whose removal clears the problem, if any), until they pass.

    Parameters
    ----------
    spec : PageSpec
    query : mapping of str to str (or to a list of str)
        E.g. ``st.query_params.to_dict()``.

    Returns
    -------
    values : dict
        Every control: the link's usable values over the defaults (of the link's preset, if any).
    ignored : dict
        Link key -> why it was ignored, in words (empty for a clean link).
    """
    owned = {c.key: c for c in spec.controls}
    ignored: dict[str, str] = {}
    preset = None
    if "preset" in owned and "preset" in query:
        try:
            preset = owned["preset"].parse(query["preset"])
        except ValueError as exc:
            ignored["preset"] = str(exc)
    base = spec.defaults(preset)
    candidate: dict[str, Any] = {}
    for key, control in owned.items():
        if key in query and key != "preset":
            try:
                candidate[key] = control.parse(query[key])
            except ValueError as exc:
                ignored[key] = str(exc)
    while candidate:
        problem = spec.check({**base, **candidate})
        if problem is None:
            break
        culprit = _culprit(spec, base, candidate, problem)
        ignored[culprit] = problem.message
        del candidate[culprit]
    return {**base, **candidate}, ignored


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


def to_query(spec: PageSpec, values: Values) -> dict[str, str]:
    """The query string of a link to these values: every control, as text, in sidebar order."""
    return {c.key: c.to_text(values[c.key]) for c in spec.controls if c.key in values}
