"""Every page of the app, in navigation order (the Explorer first: the app's root)."""

from polarize.web.pages import descent, losses, normalizers, rates, tied
from polarize.web.pages.deck import DECK
from polarize.web.pages.explorer import EXPLORER
from polarize.web.pages.maths import MATHS
from polarize.web.pages.phase import PAGE as PHASE
from polarize.web.pages.sinks import PAGE as SINKS
from polarize.web.pages.sweeps import PAGE as SWEEPS

NORMALIZERS = normalizers.PAGE
LOSSES = losses.PAGE
TIED = tied.PAGE
DESCENT = descent.PAGE
RATES = rates.PAGE

COMPARISONS = (NORMALIZERS, LOSSES, TIED, DESCENT, RATES)
"""The comparison pages: several runs side by side, drawn as one animated grid (``web.study``)."""

PAGES = (EXPLORER, MATHS, *COMPARISONS, PHASE, SINKS, SWEEPS, DECK)
"""Every page, in navigation order: About the maths second, where a newcomer looks for what the
Explorer shows."""

__all__ = ["COMPARISONS", "DECK", "DESCENT", "EXPLORER", "LOSSES", "MATHS", "NORMALIZERS", "PAGES", "PHASE",
           "RATES", "SINKS", "SWEEPS", "TIED", "by_name"]


def by_name(name: str):
    """The page called ``name`` (``PageSpec.name``)."""
    (page,) = [p for p in PAGES if p.name == name]
    return page
