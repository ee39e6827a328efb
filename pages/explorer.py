"""The Explorer: one animated dashboard of a run, every setting in the sidebar and in the URL."""

import ui
from polarize.web import pages

ui.render(pages.EXPLORER)
