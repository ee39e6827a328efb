"""Dark mode: figures for a dark page in the dark palette, light ones untouched, the report read with care."""

from __future__ import annotations

import pytest

from polarize.config import ConfigError
from polarize.plots import style
from polarize.plots.display import Display
from polarize.web.fit import fit
from polarize.web.pages import by_name
from ui.viewport import read


def _backgrounds(view) -> set[str]:
    return {plot.figure["layout"]["paper_bgcolor"] if isinstance(plot.figure, dict)
            else plot.figure.layout.paper_bgcolor for plot in view.plots()}


@pytest.mark.parametrize("name", ["explorer", "descent", "maths"])
def test_a_dark_display_draws_every_figure_dark_and_leaves_the_light_palette_alone(name):
    spec = by_name(name)
    job = spec.make_job(spec.defaults(None))
    view = spec.show(job)
    dark = fit(view, Display(dark_page=True))
    assert _backgrounds(dark) == {style.DARK.background}
    assert _backgrounds(fit(view, Display())) == {style.palette().background} != {style.DARK.background}
    assert _backgrounds(view) == {style.palette().background}  # the shared view is left alone
    figure = dark.plots()[0].figure
    layout = figure["layout"] if isinstance(figure, dict) else figure.layout.to_plotly_json()
    assert layout["font"]["color"] == style.DARK.ink


def test_repainting_maps_each_light_colour_to_its_role_in_the_dark_palette():
    light = style.palette()
    figure = {"layout": {"paper_bgcolor": light.background, "font": {"color": light.ink}},
              "data": [{"line": {"color": light.tokens[-1]}, "fillcolor": "rgba(0,0,0,0.18)",
                        "marker": {"color": [light.tokens[0], light.muted, "#123456"]}}]}
    painted = style.in_dark(figure)
    assert painted["layout"] == {"paper_bgcolor": style.DARK.background, "font": {"color": style.DARK.ink}}
    trace = painted["data"][0]
    assert trace["line"]["color"] == style.DARK.tokens[-1]  # black, which would vanish: white
    assert trace["fillcolor"] == "rgba(245,245,245,0.18)"  # its opacity kept
    assert trace["marker"]["color"] == [style.DARK.tokens[0], style.DARK.muted, "#123456"]  # no role: kept


def test_dark_tokens_stay_apart_from_the_dark_background():
    # The light palette's last token is black: on the dark page it would vanish.
    assert style.DARK.background not in style.DARK.tokens and "#000000" not in style.DARK.tokens


def test_the_display_reads_dark_with_care():
    with pytest.raises(ConfigError, match="dark"):
        Display(dark_page="yes")
    assert read({"dark": True}).dark_page and read({"dark": True}).dark
    assert not read({"dark": "true"}).dark_page and not read(None).dark_page


def test_presentation_mode_draws_dark_figures_on_a_dark_page():
    assert not read({"dark": False}, presenting=True).dark  # a light page
    assert not read({"dark": "true"}, presenting=True).dark
    assert read({"dark": True}, presenting=True).dark  # no white card on a black page (issue 45)
    assert read({"dark": True}).dark and not read({"dark": False}).dark


def test_no_rule_restyles_every_classed_element_under_one_found_by_its_class_attribute(monkeypatch):
    """``ui.theme``'s style sheets: a selector that finds an ancestor by its class attribute
    (``[class*=...]``, the keyed containers' numbered classes) ends in an element's name or class, never in
    ``*`` or ``[class]``. The browser ties such a rule to every change of any element's class, and with a
    broad last part it restyled the whole subtree of each (the captions' ``[class]``: 21 ms for a change
    at the page's root), which Streamlit and plotly make all through a visit."""
    import re

    from ui import theme

    sheets = []
    monkeypatch.setattr(theme.st, "html", sheets.append)
    theme.style()
    theme.present_style(True)
    theme.dark_style(True)
    selectors = [selector.strip() for sheet in sheets
                 for rule in re.findall(r"([^{}]+)\{", sheet.replace("<style>", ""))
                 if not rule.strip().startswith("@") for selector in rule.split(",")]
    assert any("[class*=" in selector for selector in selectors)  # the check reads the captions' rules
    for selector in selectors:
        *above, last = re.split(r"\s*[\s>+~]\s*", selector)
        if any("[class" in part for part in above):
            assert last not in ("*", "[class]"), selector
