"""Loss and conditioning: the page spec named "losses", drawn by ``ui.render``."""

import ui

ui.render("losses")
