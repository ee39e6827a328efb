"""The one way a user-supplied value reaches the page: as text, never as Markdown or HTML.

Streamlit renders every message (``st.warning``, ``st.error``, captions) as
Markdown with HTML disabled but links, images, ``:red[...]`` colour directives,
``$...$`` maths and bare URLs enabled. A value copied from a shared link
(``/rates?a_init=[Session expired: log in](https://evil.example)``) shown that way
would put the attacker's link inside the app's own warning box. ``echo`` makes
any value a Markdown code span, which CommonMark shows literally: its fence is
one backtick longer than the longest run of backticks inside, so no text can
close it early, and line breaks are folded so that no text can leave its line.

What counts as user-supplied: the raw text of a link (``st.query_params``) and
what a file brings in (a deck's names, titles and notes). The controls' parsed
values are ours (numbers in range, options from fixed lists), so the pages format
those directly. ``literal`` is the other form, every punctuation character escaped,
for text of our own that may hold Markdown's characters: not for a user's text,
because Streamlit's Markdown (GFM) still turns a bare URL or a ``www.`` name in
escaped text into a link, and only a code span keeps it from doing so.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["echo", "literal"]

_TICKS = re.compile(r"`+")


def echo(value: Any, most: int = 60) -> str:
    """``value`` as a Markdown code span that shows it literally, shortened to ``most`` characters.

    Parameters
    ----------
    value : any
        Shown as ``str(value)``; runs of white space (line breaks included) become one space.
    most : int
        Longest text kept; a longer one ends in an ellipsis.

    Returns
    -------
    str
        E.g. ``"`a=1`"``, or ``"`` a `b` ``"`` when the text holds backticks.
    """
    text = " ".join(str(value).split())
    if len(text) > most:
        text = text[:most - 1] + "\u2026"
    if not text:
        return "` `"
    longest = max((len(run) for run in _TICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    # CommonMark strips one space on each side of a span's text; the spaces let it start or end in a backtick.
    return f"{fence} {text} {fence}" if longest else f"`{text}`"


def literal(value: Any) -> str:
    """``value`` escaped for Markdown, so that it shows as typed: no markup, Markdown links, maths or HTML.

    CommonMark allows a backslash before every ASCII punctuation character, and
    each is escaped; line breaks become spaces, so no text can leave its line.
    A bare URL or ``www.`` name still becomes a link under GFM's autolinking:
    show a user's text with ``echo``.
    """
    return "".join(f"\\{c}" if c in _PUNCTUATION else " " if c in "\r\n" else c for c in str(value))


_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
