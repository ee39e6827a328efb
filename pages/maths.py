"""About the maths: the page spec named "maths", drawn by ``ui.render``."""

import ui

ui.render("maths")
