"""Normalizers side by side: one start under every normalizer, small multiples that play together."""

import ui
from polarize.web import pages

ui.render(pages.NORMALIZERS)
