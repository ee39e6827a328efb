"""The app's look on every page: our own CSS (no user text), written once per run by the renderer.

Only through hooks Streamlit documents: a container's key (``st.container(key=...)`` gives it the
class ``st-key-<key>``) and plain element selectors inside it; never its ``data-testid``s, which
change with its releases.

- long formulas wrap at their relations and operators (KaTeX sets each piece between two
  break points as its own box; a display formula is kept on one line only by ``nowrap``), so
  no formula is cut off or needs a scroll bar at any width;
- captions (``caption``) in the text colour, a little faded, at the 4.5:1 contrast WCAG AA asks of
  small type (Streamlit's own caption grey is about 4:1);
- a figure's summary in words (``polarize.plots.alt_text``) kept for screen readers only
  (``screen_reader``);
- a plain table (``polarize.web.tables.html``) looks as Streamlit's own: its type, padding and rules in
  the text colour, faint; its long words (a link) break anywhere, so the table keeps its width;
- less blank space above the title (``HEAD``), and a smaller title, so that the page's main figure
  and its transport fit below the title and the lead (``polarize.web.fit``) on a projector's 720 lines;
- in presentation mode (``present_style``) larger type, and less room above the title.
"""

from __future__ import annotations

import html
from typing import Any

import streamlit as st

from polarize.plots.display import NARROW_BELOW, PRESENT_TYPE
from polarize.web.tables import CLASS as TABLE

__all__ = ["CAPTION_OPACITY", "HEAD", "HELD", "LOADER", "PAGE", "SCREEN_READER", "TABLES", "TRANSPORT",
           "VIEWPORT", "caption", "dark_style", "new_run", "present_style", "screen_reader", "style"]

CAPTION_OPACITY = 0.8
"""Captions' text colour is the page's, this opaque: about 7:1 on white (and on the dark theme's black)."""

SCREEN_READER = "polarize-sr"
"""The class of text for screen readers only (a figure's summary): in the page, out of sight."""
PAGE, HEAD, VIEWPORT, LOADER = "page", "head", "viewport", "plotly_loader"
"""Keys of the containers of the page's main column, of its head (its title, lead and notes), of
the measuring component and of the chart element that loads plotly.js early (``ui.charts.preload``)."""
HELD = "held_figure"
"""The key of the out-of-sight container of the element holding a chart's next figure (``ui.charts.hold``)."""
TRANSPORT = "transport_script"
"""The key of the out-of-sight container of the element installing the transport script
(``ui.charts.transport``)."""
TABLES = "tables"
"""The prefix of the key of a view's plain tables' container (``ui.blocks``: ``tables_<page>``)."""
_CAPTIONS = "_captions"
"""Session key: captions drawn so far in this run (each in a container keyed by its number)."""

_HIDDEN = ("position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); "
           "white-space: nowrap; margin: -1px; padding: 0; border: 0;")
# Streamlit keeps 6rem above the page's first element: the page takes 3.8 of them back.
# A caption's own colour is undone on its divs and paragraphs, not on every element with a class: a
# selector ending in [class] under one that reads the class attribute had the browser restyle the whole
# subtree of every element whose class changed (21 ms for the page's root, 8 for the sidebar, against 3
# and 1 with div), which Streamlit and plotly do all through a visit: the Explorer's first visit spent
# twice as long restyling and laying out (0.41 s and 0.46 s against 0.19 and 0.20, at load 10-15).
_CSS = f"""<style>
.st-key-{PAGE} {{margin-top: -3.8rem;}}
.st-key-{HEAD} h1 {{font-size: 2.2rem; padding-bottom: 0.5rem;}}
.st-key-{VIEWPORT}, .st-key-{LOADER}, .st-key-{HELD}, .st-key-{TRANSPORT} {{display: none;}}
.katex-display > .katex {{white-space: normal;}}
.katex-display .base {{margin: 0.15em 0;}}
[class*='st-key-caption_'] {{opacity: {CAPTION_OPACITY};}}
[class*='st-key-caption_'] div, [class*='st-key-caption_'] p {{color: inherit; opacity: 1;}}
[class*='st-key-sr_'], .{SCREEN_READER} {{{_HIDDEN}}}
.{TABLE} {{border-collapse: collapse; width: 100%; font-size: 0.875rem; line-height: 1.5;}}
.{TABLE} th, .{TABLE} td {{padding: 0.25rem 0.375rem 0.25rem 0.5rem; text-align: left; vertical-align: top;
  font-weight: 400; white-space: pre-line; overflow-wrap: break-word;
  border-bottom: 1px solid color-mix(in srgb, currentColor 12%, transparent);}}
.{TABLE} thead th {{color: color-mix(in srgb, currentColor 75%, transparent);}}
.{TABLE} .long {{overflow-wrap: anywhere;}}
</style>"""

# Larger type (Streamlit sizes everything in rem), a lower header, less blank space above the title and
# (not on a phone) at the sides: the main column keeps 2.4rem on the left (the sidebar's arrow), 1.2 on
# the right, of Streamlit's 5. On a phone the title stays under the header's row (the sidebar's arrow).
_PRESENT_CSS = f"""<style>
html {{font-size: {PRESENT_TYPE * 100:.0f}%;}}
header {{background: transparent !important; height: 2.2rem !important; min-height: 0 !important;}}
.st-key-{PAGE} {{margin-top: -5.6rem;}}
@media (min-width: {NARROW_BELOW}px) {{
  .st-key-{PAGE} {{margin-left: -2.6rem; width: calc(100% + 6.4rem); max-width: none;}}
}}
@media (max-width: {NARROW_BELOW - 1}px) {{
  .st-key-{PAGE} {{margin-top: -3.6rem;}}
}}
.st-key-{HEAD} h1 {{font-size: 1.6rem; padding: 0 0 0.3rem;}}
.st-key-show_bar button {{min-height: 0; padding: 0.05rem 0.6rem;}}
.st-key-show_bar p {{font-size: 0.75rem;}}
</style>"""


def present_style(presenting: bool) -> None:
    """The page's look in presentation mode (nothing otherwise)."""
    if presenting:
        st.html(_PRESENT_CSS)


def caption(text: str, where: Any = st, *, help: str | None = None, key: str | None = None) -> None:
    """``text`` as a caption in ``where`` (the page, the sidebar, a column), at the contrast WCAG AA
    asks of small type: in a container of its own, keyed ``caption_<key>`` (by default ``key`` is
    this run's count of captions); ``help`` in its tooltip."""
    count = st.session_state.get(_CAPTIONS, 0) + 1
    st.session_state[_CAPTIONS] = count
    with where.container(key=f"caption_{count if key is None else key}"):
        st.caption(text, help=help)


def new_run() -> None:
    """At the start of a run: no caption drawn yet."""
    st.session_state[_CAPTIONS] = 0


def screen_reader(text: str, key: str) -> None:
    """``text`` (escaped, never Markdown) for screen readers only, in a container keyed ``sr_<key>``."""
    with st.container(key=f"sr_{key}"):
        st.html(f"<p class='{SCREEN_READER}'>{html.escape(text)}</p>")


# Plotly paints a figure's chosen and hovered button near-white (#F4FAFF, not a setting), under the
# dark figures' light button text: the chosen speed could not be read. (A light figure on a dark
# page, as a slide is, keeps Plotly's: its button text is dark.)
_DARK_FIGURES_CSS = """<style>
.js-plotly-plot .updatemenu-button rect[style*='rgb(244, 250, 255)'] {fill: #3B4A5C !important;}
</style>"""


def dark_style(figures: bool) -> None:
    """What dark figures (``figures``: ``Display.dark``) need besides Streamlit's theme."""
    if figures:
        st.html(_DARK_FIGURES_CSS)


def style() -> None:
    """Write the app's CSS into the page (``st.html`` of a style sheet takes no room)."""
    st.html(_CSS)
