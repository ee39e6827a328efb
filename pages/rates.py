"""Rates: how slowly 1 - max s shrinks under the logistic loss, against the theory."""

import ui
from polarize.web import pages

ui.render(pages.RATES)
