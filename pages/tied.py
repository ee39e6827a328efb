"""Massive activations: the page spec named "tied", drawn by ``ui.render``."""

import ui

ui.render("tied")
