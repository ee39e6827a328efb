"""Loss and conditioning: three losses from one start, and the regression against kappa."""

import ui
from polarize.web import pages

ui.render(pages.LOSSES)
