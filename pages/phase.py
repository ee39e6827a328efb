"""Phase portrait: the page spec named "phase", drawn by ``ui.render``."""

import ui

ui.render("phase")
