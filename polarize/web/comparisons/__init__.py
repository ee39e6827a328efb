"""The comparison pages, one module each: normalizers, losses, tied, descent, rates."""

from polarize.web.comparisons import descent, losses, normalizers, rates, tied

PAGES = (normalizers.PAGE, losses.PAGE, tied.PAGE, descent.PAGE, rates.PAGE)
"""Every comparison page, in navigation order."""

__all__ = ["PAGES", "descent", "losses", "normalizers", "rates", "tied"]
