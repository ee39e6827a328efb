"""Rates: how slowly 1 - max s shrinks under the logistic loss, against the theory."""

import ui

ui.comparison_page("rates")
