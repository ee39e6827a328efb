"""Massive activations: the tied model's winning column of U grows, the others stay near 1."""

import ui

ui.comparison_page("tied")
