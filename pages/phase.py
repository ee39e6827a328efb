"""Phase portrait: the field on the simplex, its rest points, and which start ends where."""

import ui
from polarize.web import pages

ui.render(pages.PHASE)
