"""Massive activations: the tied model's winning column of U grows, the others stay near 1."""

import ui
from polarize.web import pages

ui.render(pages.TIED)
