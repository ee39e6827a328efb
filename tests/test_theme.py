"""Dark mode: figures for a dark page in the dark palette, light ones untouched, the report read with care."""

from __future__ import annotations

import pytest

from polarize.config import ConfigError
from polarize.plots import style
from polarize.web.page import Screen
from polarize.web.pages import by_name
from ui.viewport import Viewport


def _backgrounds(view) -> set[str]:
    return {plot.figure["layout"]["paper_bgcolor"] if isinstance(plot.figure, dict)
            else plot.figure.layout.paper_bgcolor for plot in view.plots()}


@pytest.mark.parametrize("name", ["explorer", "descent", "maths"])
def test_a_dark_screen_draws_every_figure_dark_and_leaves_the_light_palette_alone(name):
    spec = by_name(name)
    job = spec.make_job(spec.defaults(None))
    assert _backgrounds(spec.show(job, Screen(dark=True))) == {style.DARK.background}
    assert _backgrounds(spec.show(job, Screen())) == {style.palette().background} != {style.DARK.background}
    assert style.PALETTE is style.palette() and style.PALETTE is not style.DARK  # restored after the view


def test_dark_tokens_stay_apart_from_the_dark_background():
    # The light palette's last token is black: on the dark page it would vanish.
    assert style.DARK.background not in style.DARK.tokens and "#000000" not in style.DARK.tokens


def test_screen_and_viewport_read_dark_with_care():
    with pytest.raises(ConfigError, match="dark"):
        Screen(dark="yes")
    assert Viewport.from_browser({"narrow": False, "height": None, "dark": True}).dark
    assert not Viewport.from_browser({"dark": "true"}).dark and not Viewport.from_browser(None).dark


def test_presentation_mode_draws_dark_figures_only_when_dark_was_chosen_in_the_menu(monkeypatch):
    from ui import present_mode, theme

    chosen = Viewport.from_browser({"dark": True, "dark_chosen": True})
    assert chosen.dark and chosen.dark_chosen
    assert not Viewport.from_browser({"dark": False, "dark_chosen": True}).dark_chosen  # a light page
    assert not Viewport.from_browser({"dark": True, "dark_chosen": "true"}).dark_chosen
    monkeypatch.setattr(present_mode, "on", lambda: True)
    assert not theme.dark(True) and theme.dark(True, chosen=True) and not theme.dark(False, chosen=True)
    monkeypatch.setattr(present_mode, "on", lambda: False)
    assert theme.dark(True) and not theme.dark(False)
