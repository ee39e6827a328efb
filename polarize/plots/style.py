"""The one style of every figure: palette, fonts, sizes, margins, axes and tick formats.

Colours live in one ``Palette``; ``PALETTE`` is the one in use. Swapping it
(``set_palette``) recolours every builder that runs afterwards, because the
builders read colours through ``token_colors`` and ``PALETTE`` at call time.
"""

from __future__ import annotations

import colorsys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "FONT_FAMILY",
    "FONT_SIZE",
    "TRANSPARENT",
    "LOSS_COLORS",
    "PALETTE",
    "Palette",
    "axis_style",
    "base_layout",
    "decade_ticks",
    "font",
    "loss_color",
    "set_palette",
    "token_colors",
]

FONT_SIZE = 17
"""Base font size: big enough to read from the back of a lecture hall."""
FONT_FAMILY = "Source Sans Pro, Arial, sans-serif"
TRANSPARENT = "rgba(0,0,0,0)"
"""For open markers and hidden slider ticks."""


@dataclass(frozen=True)
class Palette:
    """Every colour a figure uses.

    Attributes
    ----------
    tokens : tuple of str
        Qualitative colours for the first tokens; beyond them ``token_colors``
        spaces hues evenly around the colour wheel.
    runs : dict of str to str
        One colour per loss (runs, not tokens).
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

    tokens: tuple[str, ...] = (
        "#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD",
        "#8C564B", "#E377C2", "#17BECF", "#BCBD22", "#393B79",
    )
    runs: dict[str, str] = field(default_factory=lambda: {
        "logistic": "#1F77B4", "square": "#FF7F0E", "kl": "#2CA02C"})
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


PALETTE = Palette()
"""The palette in use. The default tokens are matplotlib's tab10 with its grey swapped for indigo:
saturated, distinct on a washed-out projector and apart from the grey of the static guides."""

LOSS_COLORS = PALETTE.runs
"""One colour per loss (they are runs, not tokens). A name bound at import: builders call
``loss_color``, which follows ``set_palette``."""


def set_palette(palette: Palette) -> None:
    """Use ``palette`` for every figure built from now on."""
    global PALETTE, LOSS_COLORS
    PALETTE = palette
    LOSS_COLORS = palette.runs


def token_colors(n: int) -> list[str]:
    """One colour per token, the same in every panel and figure.

    Parameters
    ----------
    n : int
        Number of tokens.

    Returns
    -------
    list of str, length n
        The palette's token colours for ``n <= len(PALETTE.tokens)``; otherwise
        ``n`` hues spaced evenly around the colour wheel (as ``#rrggbb``).
    """
    if n <= len(PALETTE.tokens):
        return list(PALETTE.tokens[:n])
    out = []
    for i in range(n):
        r, g, b = colorsys.hls_to_rgb(i / n, 0.45, 0.75)
        out.append(f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}")
    return out


def loss_color(loss: str) -> str:
    """The colour of a run with loss ``loss`` (ink for an unknown one)."""
    return PALETTE.runs.get(loss, PALETTE.ink)


def font(delta: int = 0, color: str | None = None) -> dict[str, Any]:
    """A font ``delta`` points from the base size, in ``color`` if given."""
    return {"size": FONT_SIZE + delta} | ({"color": color} if color else {})


def axis_style(*, tick_delta: int = -3) -> dict[str, Any]:
    """The look shared by every data axis: light grid, a thin axis line, power exponents."""
    return dict(showgrid=True, gridcolor=PALETTE.grid, zeroline=False, showline=True,
                linecolor=PALETTE.axis_line, tickfont=font(tick_delta), exponentformat="power")


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
    return dict(height=height, font=font(delta, PALETTE.ink) | {"family": FONT_FAMILY},
                colorway=list(PALETTE.cycle),  # for curves that callers add without a colour
                paper_bgcolor=PALETTE.background, plot_bgcolor=PALETTE.background, hovermode="closest",
                hoverlabel=dict(font=font(-1)), margin=margin or dict(l=20, r=20, t=50, b=40))
