"""Lecture decks: their slides in order, reordered, imported and exported."""

import ui
from polarize.web import pages

ui.render(pages.DECK)
