"""The one way a user-supplied value reaches the page: as text, never as Markdown or HTML.

Streamlit renders every message (``st.warning``, ``st.error``, captions) as
Markdown with HTML disabled but links, images, ``:red[...]`` colour directives,
``$...$`` maths and bare URLs enabled. A value copied from a shared link
(``/rates?a_init=[Session expired: log in](https://evil.example)``) shown that way
would put the attacker's link inside the app's own warning box. ``echo`` makes
any value a Markdown code span, which CommonMark shows literally: its fence is
one backtick longer than the longest run of backticks inside, so no text can
close it early, and line breaks are folded so that no text can leave its line.

What counts as user-supplied: the raw text of a link (``st.query_params``). The
controls' parsed values are ours (numbers in range, options from fixed lists),
so the pages format those directly.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["echo"]

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
