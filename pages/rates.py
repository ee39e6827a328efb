"""Rates: the page spec named "rates", drawn by ``ui.render``."""

import ui

ui.render("rates")
