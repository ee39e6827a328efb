"""Lecture decks: the page spec named "deck", drawn by ``ui.render``."""

import ui

ui.render("deck")
