"""A figure in words, for screen readers: what its panels, axes and curves are, and whether it plays.

``describe`` reads only what every figure of the toolkit states anyway (its title, the panels'
titles, the axes' titles, the legend's entries, the frames' times), so that each figure of the app
gets a text alternative without a word written for it; a page may still write a better one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from polarize.plots.numbers import round_significant

__all__ = ["describe"]

_TAG = re.compile(r"<[^>]+>")
_MOST = 8
"""Names listed at most per kind (more are counted)."""


def _plain(text: Any) -> str:
    text = text.get("text", "") if isinstance(text, Mapping) else text
    return " ".join(_TAG.sub(" ", str(text or "")).split())


def _listed(names: list[str], kind: str) -> str:
    names = list(dict.fromkeys(n for n in names if n))
    if not names:
        return ""
    more = f" and {len(names) - _MOST} more" if len(names) > _MOST else ""
    return f"{kind}: {'; '.join(names[:_MOST])}{more}."


def describe(figure: Any) -> str:
    """One paragraph saying what ``figure`` (a figure dict) shows.

    Returns
    -------
    str
        Plain text (no markup): title, panels, axes, named curves, and the animation's time span.
    """
    layout, data, frames = figure.get("layout", {}), figure.get("data", []), figure.get("frames") or ()
    title = _plain(layout.get("title"))
    panels = [_plain(a.get("text")) for a in layout.get("annotations", ())
              if a.get("xref", "paper") == "paper" and a.get("yref", "paper") == "paper"
              and not a.get("showarrow", False)]
    axes = [f"{key[0]} axis {_plain(value.get('title'))}" for key, value in sorted(layout.items())
            if re.fullmatch(r"[xy]axis\d*", key) and isinstance(value, Mapping)
            and _plain(value.get("title"))]
    curves = [_plain(t.get("name")) for t in data if t.get("showlegend", True) is not False and t.get("name")]
    panels_kind = f"{len(panels)} panels" if len(panels) > 1 else "Panel"
    parts = [f"Figure{': ' + title if title else ''}.", _listed(panels, panels_kind),
             _listed(axes, "Axes"), _listed(curves, "Curves")]
    times = (layout.get("meta") or {}).get("frame_times") if isinstance(layout.get("meta"), Mapping) else None
    if frames:
        span = (f" from t = {round_significant(times[0], 3):g} to t = {round_significant(times[-1], 3):g}"
                if times else "")
        parts.append(f"Animated in {len(frames)} frames{span}: Play, the slider, or space and the arrow "
                     "keys on the figure step through them.")
    return " ".join(p for p in parts if p)
