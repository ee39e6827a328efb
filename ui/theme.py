"""The app's look on every page: our own CSS (no user text), written once per run by ``ui.run_app``.

- long formulas wrap at their relations and operators (KaTeX sets each piece between two
  break points as its own box; a display formula is kept on one line only by ``nowrap``), so
  no formula is cut off or needs a scroll bar at any width;
- captions in the text colour, a little faded, at the 4.5:1 contrast WCAG AA asks of small
  type (Streamlit's own caption grey is about 4:1);
- a figure's summary in words (``polarize.plots.alt_text``) kept for screen readers only;
- less blank space above the title, and a smaller title, so that the page's main figure and its
  transport fit below the title and the lead (``polarize.web.fit``) on a projector's 720 lines.
"""

from __future__ import annotations

import streamlit as st

__all__ = ["CAPTION_OPACITY", "SCREEN_READER", "dark_style", "style"]

CAPTION_OPACITY = 0.8
"""Captions' text colour is the page's, this opaque: about 7:1 on white (and on the dark theme's black)."""

SCREEN_READER = "polarize-sr"
"""The class of text for screen readers only (a figure's summary): in the page, out of sight."""

_CSS = f"""<style>
[data-testid='stMainBlockContainer'] {{padding-top: 2.2rem;}}
[data-testid='stMainBlockContainer'] h1 {{font-size: 2.2rem; padding-bottom: 0.5rem;}}
[data-testid='stElementContainer']:has(iframe[title*='viewport']) {{display: none;}}
.katex-display > .katex {{white-space: normal;}}
.katex-display .base {{margin: 0.15em 0;}}
[data-testid='stCaptionContainer'] {{color: inherit; opacity: {CAPTION_OPACITY};}}
[data-testid='stElementContainer']:has(.{SCREEN_READER}), .{SCREEN_READER} {{
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
  white-space: nowrap; margin: -1px; padding: 0; border: 0;}}
</style>"""


# The dark theme's primary blue is light (slider values in it are text on the dark sidebar), so
# the white text Streamlit puts on it (a multiselect's chosen items) is dark there instead.
_DARK_PAGE_CSS = """<style>
[data-testid='stMultiSelectTagsContainer'] [data-tag], [data-testid='stMultiSelectTagsContainer'] [data-tag] *
  {color: #0E1117;}
</style>"""
# Plotly paints a figure's chosen and hovered button near-white (#F4FAFF, not a setting), under the
# dark figures' light button text: the chosen speed could not be read. (A light figure on a dark
# page, as a slide is, keeps Plotly's: its button text is dark.)
_DARK_FIGURES_CSS = """<style>
.js-plotly-plot .updatemenu-button rect[style*='rgb(244, 250, 255)'] {fill: #3B4A5C !important;}
</style>"""


def dark_style(page: bool, figures: bool) -> None:
    """What the dark theme needs besides Streamlit's: on a dark page (``page``, ``ui.viewport``),
    and for dark figures (``figures``: ``Display.dark``)."""
    if page:
        st.html(_DARK_PAGE_CSS)
    if figures:
        st.html(_DARK_FIGURES_CSS)


def style() -> None:
    """Write the app's CSS into the page (``st.html`` of a style sheet takes no room)."""
    st.html(_CSS)
