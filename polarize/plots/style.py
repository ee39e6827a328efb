"""The one style of every figure: palette, fonts, sizes, margins, axes and tick formats.

Colours live in one ``Palette``; ``PALETTE`` is the one in use. Swapping it
(``set_palette``) recolours every builder that runs afterwards, because the
builders read colours through ``token_colors`` and ``PALETTE`` at call time. Figures are
built light; a dark page's are the same figures repainted in ``DARK`` (``in_dark``), once, by the
fit (``polarize.web.fit``): the display reaches the figures one way.

Kinds of curves are told apart by more than colour, so that a figure still reads
in grey or to a colour-blind eye: tokens are solid lines in the token colours;
runs of different losses are dark lines told apart by their dash (``loss_stroke``);
references (``log n``, floors, theory) are thin grey dashed or dotted lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

__all__ = [
    "shown_length",
    "FONT_FAMILY",
    "FONT_SIZE",
    "TRANSPARENT",
    "DARK",
    "PRESENT_LEAST",
    "PRESENT_SCALE",
    "Palette",
    "axis_style",
    "base_layout",
    "decade_ticks",
    "font",
    "layout_update",
    "loss_color",
    "loss_stroke",
    "plotly_template",
    "in_dark",
    "palette",
    "least_fonts",
    "scale_fonts",
    "set_palette",
    "token_colors",
    "top_tokens",
    "wrap",
]

FONT_SIZE = 17
"""Base font size: big enough to read from the back of a lecture hall."""
PRESENT_SCALE = 1.25
"""Figures' type (and the margins and gaps around it) in presentation mode, times the usual. Less than
the page's 1.5 (``ui.theme.PRESENT_TYPE``): five panels, their controls and the title fit 720 lines at
1.25."""
PRESENT_LEAST = 20
"""The least type of a presented figure's data, in px, after ``PRESENT_SCALE`` (ticks, axis and
panel titles, notes, a heatmap's labels, legends): what the back of a hall reads at 1280 x 720 (issue 45:
ticks were 17.5 px, the Sinks heatmaps' labels 16, the Phase portrait's colour bar 15). The fit
(``present_figure.presented``) raises every font to it and widens the gaps between rows with it."""
FONT_FAMILY = "Source Sans Pro, Arial, sans-serif"
TRANSPARENT = "rgba(0,0,0,0)"
"""For open markers and hidden slider ticks."""


@dataclass(frozen=True)
class Palette:
    """Every colour a figure uses.

    Attributes
    ----------
    tokens : tuple of str
        Qualitative colours for the tokens; with more tokens than colours,
        ``token_colors`` gives them to the leading tokens and ``rest`` to the others.
    rest : str
        The tokens beyond the palette's size.
    runs : dict of str to str
        One colour per loss (runs, not tokens: never a token colour).
    run_dashes : dict of str to str
        One dash per loss, so that runs are told apart without colour.
    cycle : tuple of str
        Colours for labelled runs without a colour of their own.
    ink, grey, light, muted, alert : str
        Text and emphasis; static guides; faint paths; secondary text; warnings.
    background, veil : str
        The figure's background (also the outline that sets markers off it), and
        the translucent background of labels drawn over curves.
    grid, axis_line, button, slider, slider_active : str
        Gridlines, axis lines, and the animation controls.
    """

    # Okabe & Ito, "Color Universal Design" (2002; Wong, Nature Methods 8:441, 2011): the eight colours
    # chosen to stay apart under protanopia, deuteranopia and tritanopia. Reordered so that the first
    # tokens get the darker, saturated ones; yellow (faint on white) and black (near the ink) come last.
    tokens: tuple[str, ...] = (
        "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
    )
    rest: str = "#C2C7CC"
    runs: dict[str, str] = field(default_factory=lambda: {
        "logistic": "#222831", "square": "#5F6368", "kl": "#222831"})
    run_dashes: dict[str, str] = field(default_factory=lambda: {
        "logistic": "solid", "square": "dash", "kl": "dot"})
    cycle: tuple[str, ...] = ("#4E79A7", "#E15759", "#59A14F", "#B07AA1", "#F28E2B", "#76B7B2")
    ink: str = "#222831"
    grey: str = "#9AA0A6"
    light: str = "#D5D8DC"
    muted: str = "#5F6368"
    alert: str = "#B00020"
    background: str = "white"
    veil: str = "rgba(255,255,255,0.85)"
    grid: str = "#ECEFF1"
    axis_line: str = "#B0B7BF"
    button: str = "#F1F3F4"
    slider: str = "#E8EAED"
    slider_active: str = "#5F6368"


_LIGHT = [Palette()]
"""The palette in use: Okabe-Ito for the tokens (colour-blind safe; ``tests/test_palette.py``
checks the CIE distances under simulated colour blindness), dark dashed lines for runs. Read as
``PALETTE`` (module ``__getattr__``)."""

DARK = Palette(
    # The same Okabe-Ito hues; black, the last, would vanish on the dark page: white instead.
    tokens=("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#F5F5F5"),
    rest="#5F6368", runs={"logistic": "#E8EAED", "square": "#BDC1C6", "kl": "#E8EAED"},
    ink="#E8EAED", grey="#80868B", light="#3C4043", muted="#BDC1C6", alert="#FF7B8A",
    background="#0E1117", veil="rgba(14,17,23,0.85)", grid="#262A31", axis_line="#5F6368",
    button="#262A31", slider="#3C4043", slider_active="#BDC1C6")
"""The palette of figures on a dark page (Streamlit's dark background, light ink)."""



def palette() -> Palette:
    """The palette the figures built now use (the one set by ``set_palette``)."""
    return _LIGHT[0]


def __getattr__(name: str) -> Any:
    # PALETTE and LOSS_COLORS follow set_palette.
    if name == "PALETTE":
        return palette()
    if name == "LOSS_COLORS":
        return palette().runs
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def set_palette(chosen: Palette) -> None:
    """Use ``chosen`` for every (light) figure built from now on."""
    _LIGHT[0] = chosen


def _rgb(color: str) -> tuple[int, int, int] | None:
    """The red, green and blue of a ``#rrggbb``, ``white`` or ``rgb(a)(...)`` colour (None: another form)."""
    text = color.strip().lower().replace(" ", "")
    if text == "white":
        return (255, 255, 255)
    if re.fullmatch(r"#[0-9a-f]{6}", text):
        return (int(text[1:3], 16), int(text[3:5], 16), int(text[5:7], 16))
    match = re.fullmatch(r"rgba?\((\d+),(\d+),(\d+)(,[\d.]+)?\)", text)
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def _painting(light: Palette, dark: Palette) -> dict[tuple[int, int, int], tuple[int, int, int]]:
    """Each colour of ``light`` -> the colour of the same role in ``dark`` (one role per colour)."""
    pairs: list[tuple[str, str]] = list(zip(light.tokens, dark.tokens, strict=False))
    pairs += [(light.runs[k], dark.runs[k]) for k in light.runs if k in dark.runs]
    pairs += [(getattr(light, name), getattr(dark, name)) for name in (
        "rest", "ink", "grey", "light", "muted", "alert", "background", "veil", "grid", "axis_line",
        "button", "slider", "slider_active")]
    out = {}
    for old, new in pairs:
        old_rgb, new_rgb = _rgb(old), _rgb(new)
        if old_rgb is not None and new_rgb is not None:
            out.setdefault(old_rgb, new_rgb)
    return out


def in_dark(figure: dict[str, Any]) -> dict[str, Any]:
    """A figure dict (layout, traces, frames) repainted for a dark page, in place; returns it.

    Every colour of the light palette becomes the colour of the same role in ``DARK`` (the ink, the
    background, a token's colour, a run's line); a translucent one keeps its opacity. Colours of
    no role (a heatmap's scale) are left as they are.
    """
    painting = _painting(palette(), DARK)

    def paint(value: str) -> str:
        rgb = _rgb(value)
        if rgb is None or rgb not in painting:
            return value
        r, g, b = painting[rgb]
        alpha = re.search(r",([\d.]+)\)$", value.replace(" ", ""))
        return f"rgba({r},{g},{b},{alpha[1]})" if alpha and value.strip().startswith("rgba") \
            else f"#{r:02X}{g:02X}{b:02X}"

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            for key, value in node.items():
                if key != "template":  # plotly's own, shared by every figure (``plotly_template``)
                    node[key] = walk(value)
        elif isinstance(node, list) and node and isinstance(node[0], dict | list | str):
            node[:] = [walk(item) for item in node]
        elif isinstance(node, str) and (node.startswith(("#", "rgb")) or node == "white"):
            return paint(node)
        return node

    return walk(figure)


def top_tokens(final: Any) -> list[int]:
    """Tokens by decreasing final size ``|final_i|`` (ties by index): the order ``token_colors`` colours.

    Parameters
    ----------
    final : array_like, shape (n,)
        E.g. the final scores ``s(T)``.

    Returns
    -------
    list of int, length n
    """
    final = np.asarray(final, dtype=float)
    size = np.where(np.isfinite(final), np.abs(final), -1.0)  # a diverged token ranks last
    return [int(i) for i in np.argsort(-size, kind="stable")]


def token_colors(n: int, top: Sequence[int] | None = None) -> list[str]:
    """One colour per token, the same in every panel and figure.

    Parameters
    ----------
    n : int
        Number of tokens.
    top : sequence of int, optional
        Tokens in order of importance (``top_tokens``); used only when there are
        more tokens than colours. The first tokens by default.

    Returns
    -------
    list of str, length n
        Token ``i`` in ``palette().tokens[i]`` when ``n <= len(palette().tokens)``.
        Beyond the palette's size, distinct hues cannot stay apart: the leading
        tokens of ``top`` get the palette's colours, in that order, and the others
        ``palette().rest``, a light grey.
    """
    size = len(palette().tokens)
    if n <= size:
        return list(palette().tokens[:n])
    out = [palette().rest] * n
    for color, i in zip(palette().tokens, list(top if top is not None else range(n))[:size], strict=False):
        out[i] = color
    return out


def loss_color(loss: str) -> str:
    """The colour of a run with loss ``loss`` (ink for an unknown one)."""
    return palette().runs.get(loss, palette().ink)


def loss_stroke(loss: str) -> dict[str, str]:
    """``color`` and ``dash`` of a run with loss ``loss``: dark, told apart by the dash."""
    return {"color": loss_color(loss), "dash": palette().run_dashes.get(loss, "solid")}


def font(delta: int = 0, color: str | None = None) -> dict[str, Any]:
    """A font ``delta`` points from the base size, in ``color`` if given."""
    return {"size": FONT_SIZE + delta} | ({"color": color} if color else {})


def axis_style(*, tick_delta: int = -3) -> dict[str, Any]:
    """The look shared by every data axis: light grid, a thin axis line, power exponents.

    The margins grow to fit the tick labels and titles (``automargin``): with the margins fixed, a
    long label is cut off by the figure's edge or pushed into its axis title.
    """
    return dict(showgrid=True, gridcolor=palette().grid, zeroline=False, showline=True,
                linecolor=palette().axis_line, tickfont=font(tick_delta), exponentformat="power",
                automargin=True)


def decade_ticks(span: Sequence[float] | None, most: int = 4) -> dict[str, Any]:
    """Tick spacing of a log axis over ``span`` (log10 of its ends).

    Whole decades with about ``most`` labels at most; empty (plotly's own
    ticks) below three decades, where whole decades would leave too few labels.
    """
    if not span or span[1] - span[0] < 3:
        return {}
    return {"tick0": 0, "dtick": max(1, round((span[1] - span[0]) / most))}


def base_layout(*, height: int, delta: int = 0, margin: dict[str, int] | None = None) -> dict[str, Any]:
    """Layout entries every figure shares: size, font, white background, hover.

    Parameters
    ----------
    height : int
        Pixels.
    delta : int
        Base font size offset (smaller figures use a smaller font).
    margin : dict, optional
        Plotly margins; 20 px on the sides, 50 on top and 40 below by default.

    Returns
    -------
    dict
        To pass to ``layout.update``. No named template: plotly.js cannot resolve
        template names, and figures built without validation keep them as names.
    """
    return dict(height=height, font=font(delta, palette().ink) | {"family": FONT_FAMILY},
                colorway=list(palette().cycle),  # for curves that callers add without a colour
                paper_bgcolor=palette().background, plot_bgcolor=palette().background, hovermode="closest",
                hoverlabel=dict(font=font(-1)), margin=margin or dict(l=20, r=20, t=50, b=40))


def layout_update(layout: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """``layout`` (a figure dict's) with ``changes`` merged in, in place, as ``go.Figure.update_layout``
    merges them: a dict into the dict there, anything else in its place."""
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(layout.get(key), dict):
            layout_update(layout[key], **value)
        else:
            layout[key] = value
    return layout


@cache
def plotly_template() -> dict[str, Any]:
    """Plotly's default template as a dict: what ``go.Figure`` puts in a layout, for figures built as dicts.

    The same for every figure and shared between them: read it, never change it.
    """
    import plotly.io as pio

    return pio.templates[pio.templates.default].to_plotly_json()


def scale_fonts(figure: dict[str, Any], scale: float = PRESENT_SCALE) -> dict[str, Any]:
    """Every font of a figure (as a dict: layout, traces, frames) ``scale`` times its size, in place.

    Fonts without a size of their own follow ``layout.font``, which is scaled too. A font dict that
    several entries share (plotly gives a figure's first x and y axes one tick font) is scaled once.
    Returns ``figure``.
    """
    for font in _sized_fonts(figure):
        font["size"] = round(font["size"] * scale, 1)
    return figure


def least_fonts(figure: dict[str, Any], least: float) -> dict[str, Any]:
    """Every font of a figure's data (as a dict: layout, traces, frames) at least ``least`` px, in place.

    Ticks, axis and panel titles, notes, a heatmap's labels, a colour bar's, legends' (a legend above
    the plot gets the rows it takes at that size: ``present_figure.described`` counts them after this);
    ``layout.font`` too, which the fonts without a size of their own follow. Not a hover label's; a font
    of 2 px or less is a label kept hidden (the slider's steps'). Returns ``figure``.
    """
    for font in _sized_fonts(figure, skip=("hoverlabel",)):
        if 2 < font["size"] < least:
            font["size"] = least
    return figure


def _sized_fonts(figure: dict[str, Any], skip: tuple[str, ...] = ()) -> Iterator[dict[str, Any]]:
    """Each font of a figure's data with a size of its own, once (a font dict several entries share
    comes once), not looking under the keys that start with one of ``skip``."""
    seen: set[int] = set()
    stack: list[Any] = [figure]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if skip and key.startswith(skip):
                    continue
                if key.endswith("font") and isinstance(value, dict) \
                        and isinstance(value.get("size"), int | float) and id(value) not in seen:
                    seen.add(id(value))
                    yield value
                stack.append(value)
        elif isinstance(node, list | tuple) and node and isinstance(node[0], dict):
            stack.extend(node)


def least_growth(layout: dict[str, Any], scale: float, least: float) -> float:
    """How many times larger a figure's axis type grows, ``scale`` times larger and raised to ``least`` px
    (``least_fonts``): its smallest tick labels' growth, at least ``scale``.

    The room kept around the type (margins, the gaps between rows, the transport's distance from
    the plot) grows as much, or the larger labels run into the next row's titles and the Play row.
    """
    base = float(layout.get("font", {}).get("size") or 12)
    sizes = [float((value.get("tickfont") or {}).get("size") or base) for key, value in layout.items()
             if key[1:5] == "axis" and key[0] in "xy" and isinstance(value, dict)]
    smallest = min(sizes, default=base)
    return max(scale, least / smallest) if least and smallest > 2 else scale


_TAG = re.compile(r"<[^>]*>")


def shown_length(text: str) -> int:
    """How many characters of plotly text show: its tags (``<sub>``, ``<b>``) take no room."""
    return len(_TAG.sub("", text))


def wrap(text: str, width: int) -> str:
    """``text`` broken at spaces into lines of at most ``width`` shown characters (plotly does not wrap).

    Nothing is cut off: a long text takes as many lines as it needs (the caller counts the
    ``<br>`` to make room). Tags count for nothing and are never split; a word longer than a line
    has a line of its own.
    """
    rows: list[str] = []
    for word in text.split():
        if rows and shown_length(rows[-1]) + 1 + shown_length(word) <= width:
            rows[-1] += " " + word
        else:
            rows.append(word)
    return "<br>".join(rows)
