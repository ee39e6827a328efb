"""Flow vs descent: the exact flow against gradient descent at several learning rates."""

import ui
from polarize.web import pages

ui.render(pages.DESCENT)
