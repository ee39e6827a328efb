"""The sweeps shipped with the package (one of each kind it ships) and the user's results folders.

The runs and ensemble examples were made by ``polarize sweep run`` from the
``sweep.toml`` in their folders; the sinks example is built from the trainings
shipped in ``polarize/sinks/data`` (``build_sinks_example``), as a sinks sweep
over the variants and seeds there would have written them.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from polarize.sweeps import store
from polarize.sweeps.kinds import KINDS

__all__ = ["EXAMPLES", "build_sinks_example", "example", "user_sweeps"]

_ROOT = resources.files("polarize.sweeps") / "examples"
EXAMPLES = tuple(name for name in KINDS if (_ROOT / name / store.MANIFEST).is_file())
"""The shipped examples' folder names: a kind's name, in ``KINDS``'s order, where one is shipped."""


def example(name: str) -> Path:
    """The folder of a shipped example (``EXAMPLES``)."""
    if name not in EXAMPLES:
        raise KeyError(name)
    return Path(str(_ROOT / name))


def user_sweeps() -> dict[str, Path]:
    """Results folders under ``POLARIZE_DATA_DIR/sweeps`` (those with a manifest), by folder name.

    None unless the operator shares the server's disk (``polarize.env.shares_disk``): its folders
    are not the visitors'.
    """
    from polarize.env import data_dir, shares_disk

    if not shares_disk():
        return {}
    root = data_dir() / "sweeps"
    if not root.is_dir():
        return {}
    return {p.name: p for p in sorted(root.iterdir()) if p.is_dir() and (p / store.MANIFEST).is_file()}


def build_sinks_example(folder: Path, size: str = "paper") -> int:
    """Write the shipped trainings of ``size`` as a sinks sweep's results; returns the rows written."""
    from polarize.sinks.runs import read_run, shipped_runs
    from polarize.sweeps import parse_sweep
    from polarize.sweeps.kinds.sinks import sinks_row
    from polarize.sweeps.rows import table
    from polarize.sweeps.tasks import make_cells

    records = [read_run(p) for name, p in shipped_runs().items() if name.startswith(f"{size}-")]
    variants = sorted({r["config"].variant for r in records})
    seeds = sorted({r["config"].seed for r in records})
    sweep = parse_sweep({"kind": "sinks", "name": f"sinks-{size}-shipped", "base": {"size": size},
                         "grid": {"variant": variants, "seed": seeds}})
    store.write_manifest(folder, sweep, note="built from the trainings in polarize/sinks/data")
    cells = {(c.params["variant"], c.params["seed"]): c for c in make_cells(sweep)}
    for record in records:
        cell = cells[(record["config"].variant, record["config"].seed)]
        row = {**sinks_row(record), "hash": cell.hash, "cell": cell.index, "task": cell.hash,
               "worker": "shipped", "seconds": float(record.get("timing", {}).get("seconds", 0.0)),
               "config": json.dumps(record["config"].to_dict()), **cell.params}
        store.write_task(folder, cell.hash, table(sweep.entry.schema, [row]))
    return len(records)
