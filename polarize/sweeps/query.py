"""Reading results back: ``load`` (pandas, through pyarrow) and ``query`` (SQL, through DuckDB).

Only readable files are read (``store.result_files``), so a truncated file left
by a stopped sweep is invisible here too. In SQL the rows are the table
``runs`` and the saved series, when there are any, the table ``series``.

``query`` is read-only and reaches no file: the rows are read here and handed to DuckDB as
tables, DuckDB's external access is off with no directory allowed and its configuration locked,
and only statements DuckDB parses as ``SELECT`` run. A folder allowed to DuckDB would be
writable too (``COPY ... TO '<folder>/task-x.parquet'`` adds rows to every later ``load``,
``COPY ... TO '<folder>/sweep.json'`` replaces the manifest), so nothing built on ``query`` (a
page, a notebook service) inherits the disk or the folder. The command line, on the user's own
machine, asks for ``anywhere=True``.
"""

from __future__ import annotations

from pathlib import Path

from polarize.fields import ConfigError
from polarize.sweeps import store

__all__ = ["load", "load_series", "query"]

MISSING_DUCKDB = "sweep query needs the optional extra: pip install 'polarize[sweep]' (duckdb)"


def _files(folder: Path, series: bool = False) -> list[Path]:
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError("results", f"{folder} is not a folder")
    return store.result_files(folder, series=series)


def _read(files: list[Path]):
    import pyarrow as pa
    import pyarrow.parquet as pq

    read = []
    for path in files:
        try:
            read.append((path, pq.read_table(path)))
        except (OSError, pa.ArrowException):  # a footer that reads but data that does not: not there
            continue
    if not read:
        return pa.table({})
    files, tables = [path for path, _ in read], [table for _, table in read]
    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        pass
    for path, table in zip(files[1:], tables[1:], strict=True):  # the first file that does not fit
        try:
            pa.concat_tables([tables[0], table], promote_options="permissive")
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
            reason = " ".join(str(exc).split())[:200]
            raise ConfigError("results", f"{path.name} in {path.parent} does not hold the rows of this "
                              f"sweep ({reason}); move it out of the folder") from None
    raise ConfigError("results", f"the files in {files[0].parent} do not fit together as one table")


def load(folder: Path):
    """Every row of a results folder as a pandas DataFrame (one row per cell, chunk or start).

    Parameters
    ----------
    folder : path
        A folder written by ``polarize sweep run``.

    Returns
    -------
    pandas.DataFrame
        The grid's columns, the outcome's columns (each kind's ``schema``, ``polarize.sweeps.kinds``), and
        ``hash``, ``config`` (JSON), ``status``, ``message``; sorted by cell. Empty when nothing is done.
    """
    import pandas as pd

    files = _files(folder)
    if not files:
        return pd.DataFrame()
    frame = _read(files).to_pandas()
    order = [c for c in ("cell", "start") if c in frame]
    return frame.sort_values(order, kind="stable").reset_index(drop=True)


def load_series(folder: Path):
    """The saved series of a runs sweep with ``trajectories = true`` (empty DataFrame without)."""
    import pandas as pd

    files = _files(folder, series=True)
    return _read(files).to_pandas() if files else pd.DataFrame()


def _connect(anywhere: bool):
    """A DuckDB in memory that reaches no file, unless ``anywhere``."""
    import duckdb

    con = duckdb.connect(":memory:")
    if not anywhere:
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    return con


def _statements(con, sql: str, anywhere: bool) -> None:
    """Refuse SQL without a statement and, unless ``anywhere``, any statement that is not a SELECT."""
    import duckdb

    statements = con.extract_statements(sql)
    if not statements:
        raise ConfigError("query", "holds no SQL statement (only blanks or comments)")
    if anywhere:
        return
    for number, statement in enumerate(statements, 1):
        if statement.type != duckdb.StatementType.SELECT:
            kind = statement.type.name.replace("_", " ")
            raise ConfigError("query", f"is read-only: statement {number} is a {kind} statement, only SELECT "
                                       "(WITH, FROM, VALUES, DESCRIBE) statements run")


def query(folder: Path, sql: str, *, anywhere: bool = False):
    """Run ``sql`` with DuckDB over the folder's rows (table ``runs``) and series (``series``).

    Parameters
    ----------
    folder : path
        A results folder.
    sql : str
        One or more SELECT statements; the last one's rows are returned.
    anywhere : bool
        Let the SQL run any statement and read and write any file this user can (``read_csv``,
        ``COPY ... TO``, ``ATTACH``): for one's own command line only. By default it is read-only
        and reaches no file (the tables ``runs`` and ``series`` hold the folder's rows).

    Returns
    -------
    pandas.DataFrame
        Empty when the last statement returns no rows.

    Raises
    ------
    ConfigError
        Naming ``query`` when the SQL holds no statement, a statement other than a SELECT (unless
        ``anywhere``), or DuckDB refuses it; ``results`` when the folder holds no results or files
        that do not fit together.
    """
    try:
        import duckdb
    except ImportError:
        raise ConfigError("query", MISSING_DUCKDB) from None
    files = _files(folder)
    if not files:
        raise ConfigError("results", f"{folder} holds no finished results yet")
    con = _connect(anywhere)
    try:
        con.register("runs", _read(files))
        series = _files(folder, series=True)
        if series:
            con.register("series", _read(series))
        try:
            _statements(con, sql, anywhere)
            return con.execute(sql).df()
        except duckdb.Error as exc:
            raise ConfigError("query", str(exc).splitlines()[0]) from None
    finally:
        con.close()
