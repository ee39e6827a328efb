"""Attention sinks: the page spec named "sinks", drawn by ``ui.render``."""

import ui

ui.render("sinks")
