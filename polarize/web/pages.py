"""Every page of the app, in navigation order (the Explorer first: the app's root)."""

from polarize.web.comparisons import descent, losses, normalizers, rates, tied
from polarize.web.deck import DECK
from polarize.web.explorer import EXPLORER
from polarize.web.maths import MATHS
from polarize.web.phase import PAGE as PHASE
from polarize.web.sinks import PAGE as SINKS
from polarize.web.sweeps import PAGE as SWEEPS

NORMALIZERS = normalizers.PAGE
LOSSES = losses.PAGE
TIED = tied.PAGE
DESCENT = descent.PAGE
RATES = rates.PAGE

PAGES = (EXPLORER, NORMALIZERS, LOSSES, TIED, DESCENT, RATES, PHASE, SINKS, SWEEPS, MATHS, DECK)
"""Every page, in navigation order."""

__all__ = ["DECK", "DESCENT", "EXPLORER", "LOSSES", "MATHS", "NORMALIZERS", "PAGES", "PHASE", "RATES",
           "SINKS", "SWEEPS", "TIED", "by_name"]


def by_name(name: str):
    """The page called ``name`` (``PageSpec.name``)."""
    (page,) = [p for p in PAGES if p.name == name]
    return page
