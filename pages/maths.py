"""About the maths: the model, the replicator form, and what to look for in the Explorer."""

import ui
from polarize.web import pages

ui.render(pages.MATHS)
