"""Sweeps: grids of runs, ensembles and sink trainings on Dask, results in Parquet (issue 23).

Each kind of sweep (``runs``, ``ensemble``, ``sinks``) is an entry of ``polarize.sweeps.kinds.KINDS``
carrying its settings, cells, rows and figures. ``read_sweep`` validates a TOML sweep, ``run_sweep``
runs it (``polarize sweep run``),
``load`` reads the results as pandas and ``query`` runs SQL over them with DuckDB
(``polarize sweep query``). Dask and DuckDB (the ``sweep`` extra) are imported
only when a sweep runs or a query is made.
"""

from polarize.sweeps.query import load, load_series, query
from polarize.sweeps.spec import Sweep, parse_sweep, read_sweep

__all__ = ["Sweep", "load", "load_series", "parse_sweep", "query", "read_sweep", "run_sweep"]


def run_sweep(*args, **kwargs):
    """``polarize.sweeps.run.run_sweep`` (imported on first use)."""
    from polarize.sweeps.run import run_sweep as run

    return run(*args, **kwargs)
