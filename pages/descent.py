"""Flow vs descent: the exact flow against gradient descent at several learning rates."""

import ui

ui.comparison_page("descent")
