"""Every figure has a text alternative: a summary in words for screen readers, read from the figure."""

from __future__ import annotations

import numpy as np
import pytest
from support.app import figures, page

from polarize.plots.alt_text import describe
from polarize.plots.lines import Line, Panel
from polarize.plots.multiples import animated_grid
from polarize.web.pages import PAGES


def test_a_summary_names_the_panels_axes_curves_and_frames():
    t = np.geomspace(0.1, 100, 40)
    panels = [Panel(title=f"panel {k}", x_title="time t", y_title="score s<sub>i</sub>", log_x=True,
                    lines=(Line(x=t, y=np.exp(-t / (k + 1)), name=f"curve {k}", legend=True),))
              for k in range(3)]
    figure = animated_grid(panels, cols=3, legend=True, frames=12)
    words = describe(figure)
    for k in range(3):
        assert f"panel {k}" in words and f"curve {k}" in words
    assert "score s i" in words and "<" not in words  # the tags' words, not the tags
    assert f"Animated in {len(figure['frames'])} frames" in words and "t = 100" in words
    still = describe(animated_grid(panels, cols=3, animated=False))
    assert "Animated" not in still and "panel 2" in still


@pytest.mark.parametrize("spec", [p for p in PAGES if p.name != "deck"], ids=lambda p: p.name)
def test_every_figure_on_every_page_comes_with_its_summary(spec):
    at = page(spec.name).run()
    assert not at.exception
    charts = figures(at)
    # As HTML, escaped (never Markdown, which would turn a URL in a title into a link).
    summaries = [h.value for h in at.get("html") if "polarize-sr" in h.value and "<style>" not in h.value]
    assert not any("polarize-sr" in m.value for m in at.markdown)
    assert charts and len(summaries) == len(charts)
    assert all("Figure" in s for s in summaries)
