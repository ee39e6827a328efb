"""Explorer: the page spec named "explorer", drawn by ``ui.render``."""

import ui

ui.render("explorer")
