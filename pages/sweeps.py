"""Sweeps: grids of runs, ensembles and sink trainings read back from their Parquet results."""

import ui
from polarize.web import pages

ui.render(pages.SWEEPS)
