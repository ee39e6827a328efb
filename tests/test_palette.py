"""The token colours stay apart for colour-blind eyes; beyond the palette, the leading tokens keep colours.

Colour blindness is simulated with Machado, Oliveira & Fernandes (2009) at full
severity (protanopia, deuteranopia, tritanopia) through ``colorspacious``, and
distances are CIE 1976 Delta E in CIELAB (the measure the issue reported:
matplotlib's tab10 had tokens 1 and 2 at 4.6 under protanopia).
"""

from __future__ import annotations

import itertools

import numpy as np
import plotly.graph_objects as go
import pytest
from support.figures import dashboard_figure
from support.figures import trace as find_trace

from polarize import Experiment, simulate
from polarize.plots import comparisons, style, token_colors, token_lines
from polarize.science import compare_normalizers

colorspacious = pytest.importorskip("colorspacious")

FLOOR = 12.0
"""Least CIE76 distance between any two of the first 8 token colours under each simulated deficiency.

A just-noticeable difference is about 2.3 (Mahy, Van Eycken & Oosterlinck 1994) for patches side
by side; thin lines apart in a panel, on a washed-out projector, need several times that. 12 is
about five JNDs: tab10 fails it (4.6 and 7.3), the Okabe-Ito set clears it (16.1 at worst)."""

DEFICIENCIES = ("protanomaly", "deuteranomaly", "tritanomaly")


def _rgb(color: str) -> np.ndarray:
    color = color.lstrip("#")
    return np.array([int(color[i:i + 2], 16) for i in (0, 2, 4)]) / 255.0


def _lab(color: str, deficiency: str | None) -> np.ndarray:
    seen = _rgb(color)
    if deficiency:
        space = {"name": "sRGB1+CVD", "cvd_type": deficiency, "severity": 100}
        seen = np.clip(colorspacious.cspace_convert(seen, space, "sRGB1"), 0.0, 1.0)
    return colorspacious.cspace_convert(seen, "sRGB1", "CIELab")


def least_distance(colors: list[str], deficiency: str | None) -> float:
    labs = [_lab(c, deficiency) for c in colors]
    return min(float(np.linalg.norm(a - b)) for a, b in itertools.combinations(labs, 2))


@pytest.mark.parametrize("deficiency", DEFICIENCIES)
def test_first_eight_tokens_stay_apart_under_colour_blindness(deficiency):
    assert least_distance(token_colors(8), deficiency) >= FLOOR


def test_the_measure_catches_the_old_palette():
    tab10 = ["#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD", "#8C564B", "#E377C2", "#17BECF"]
    assert least_distance(tab10, "protanomaly") < FLOOR  # the complaint, reproduced
    assert least_distance(tab10, None) >= FLOOR  # and only under colour blindness


def test_greyed_tokens_stand_apart_from_the_coloured_ones():
    for deficiency in (*DEFICIENCIES, None):
        labs = [_lab(c, deficiency) for c in token_colors(8)]
        rest = _lab(style.PALETTE.rest, deficiency)
        assert min(float(np.linalg.norm(rest - lab)) for lab in labs) >= FLOOR / 2


def test_beyond_the_palette_the_leading_tokens_keep_colours_and_the_rest_are_grey():
    n, size = 20, len(style.PALETTE.tokens)
    top = [19, 3, 7, 0, 1, 2, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]
    colors = token_colors(n, top)
    assert colors[19] == style.PALETTE.tokens[0] and colors[3] == style.PALETTE.tokens[1]
    assert {colors[i] for i in top[:size]} == set(style.PALETTE.tokens)
    assert all(colors[i] == style.PALETTE.rest for i in top[size:])
    # Within the palette, token i keeps colour i whatever the order.
    assert token_colors(5, top=[4, 3, 2, 1, 0]) == list(style.PALETTE.tokens[:5])


def test_token_lines_rank_by_the_final_values_and_key_the_grey_ones_as_other_tokens():
    t = np.geomspace(1.0, 10.0, 5)
    series = np.tile(np.arange(12.0), (5, 1))  # token 11 ends largest
    lines = token_lines(t, series, legend=True)
    assert lines[11].color == style.PALETTE.tokens[0] and lines[4].color == style.PALETTE.tokens[7]
    grey = [line for line in lines if line.color == style.PALETTE.rest]
    assert len(grey) == 4 and {line.key for line in grey} == {"other tokens"}
    assert not any(line.key for line in lines if line.color != style.PALETTE.rest)
    assert all(line.width < lines[11].width for line in grey)


def test_a_figure_of_more_tokens_than_colours_keys_its_grey_lines_once():
    """Normalizers at n = 10: the legend named 8 of the 10 tokens and left the grey lines unexplained."""
    rows = compare_normalizers(Experiment(n=10, d=10, horizon=100.0, seed=2, a_init="gaussian"))
    figure = comparisons.normalizers_figure(rows, frames=5)
    keyed = [t for t in figure["data"] if t.get("showlegend")]
    names = [t["name"] for t in keyed]
    assert len(names) == len(set(names)) == 9 and names.count("other tokens") == 1, names
    grey = [t for t in figure["data"] if t.get("line", {}).get("color") == style.PALETTE.rest]
    assert len(grey) == 2 * len(rows)  # two grey tokens in each panel, one entry for all
    assert {t["legendgroup"] for t in grey} == {"other tokens"}
    assert {t["line"]["color"] for t in keyed if t["name"] == "other tokens"} == {style.PALETTE.rest}
    ranks = [t.get("legendrank", 1000) for t in keyed]  # plotly's default 1000: the shared entry last
    assert max(ranks) == ranks[names.index("other tokens")] > 1000 == min(ranks)


def test_the_dashboard_keys_its_tokens_by_the_simplex_s_corners_led_by_the_winner():
    """No legend (its rows took the panels' room at 1280 x 720): corner i is numbered i in the colour
    of token i's lines, the winner in the first colour, the tokens beyond the palette grey."""
    result = simulate(Experiment(n=12, d=12, horizon=1e4, seed=3))
    fig = dashboard_figure(result, frames=10)
    winner = int(np.argmax(result.s[-1]))
    assert not [t for t in fig.data if t.showlegend and (t.legend or "legend") == "legend"]
    corners = find_trace(fig, "simplex-labels")
    lines = [find_trace(fig, f"scores-token{i}").line.color for i in range(12)]
    assert list(corners.text) == [str(i) for i in range(12)] and list(corners.textfont.color) == lines
    assert lines[winner] == style.PALETTE.tokens[0]
    assert lines.count(style.PALETTE.rest) == 12 - len(style.PALETTE.tokens)


def test_losses_are_not_drawn_in_token_colours_and_differ_by_dash():
    runs = {loss: simulate(Experiment(n=4, d=4, loss=loss, horizon=100.0, seed=1, a_init="gaussian"))
            for loss in ("logistic", "square", "kl")}
    fig = go.Figure(comparisons.losses_figure(runs, frames=5))
    names = {"logistic", "square", "cross-entropy (KL)"}
    per_loss = [t for t in fig.data if t.name in names]
    assert per_loss and not {t.line.color for t in per_loss} & set(style.PALETTE.tokens)
    dashes = {t.name: t.line.dash for t in per_loss}
    assert len(set(dashes.values())) == 3


def test_one_token_order_across_the_panels_of_a_figure():
    rows = compare_normalizers(Experiment(n=10, d=10, horizon=100.0, seed=2, a_init="gaussian"))
    fig = go.Figure(comparisons.normalizers_figure(rows, frames=5))
    colors_by_name: dict[str, set[str]] = {}
    for trace in fig.data:
        if trace.name and trace.name.startswith("token "):
            colors_by_name.setdefault(trace.name, set()).add(trace.line.color)
    assert all(len(colors) == 1 for colors in colors_by_name.values())
