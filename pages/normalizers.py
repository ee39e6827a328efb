"""Normalizers side by side: the page spec named "normalizers", drawn by ``ui.render``."""

import ui

ui.render("normalizers")
