"""Flow vs descent: the page spec named "descent", drawn by ``ui.render``."""

import ui

ui.render("descent")
