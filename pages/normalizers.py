"""Normalizers side by side: one start under every normalizer, small multiples that play together."""

import ui

ui.comparison_page("normalizers")
