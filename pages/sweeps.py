"""Sweeps: the page spec named "sweeps", drawn by ``ui.render``."""

import ui

ui.render("sweeps")
