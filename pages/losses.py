"""Loss and conditioning: three losses from one start, and the regression against kappa."""

import ui

ui.comparison_page("losses")
