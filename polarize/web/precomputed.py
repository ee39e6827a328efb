"""The paper's settings that take longer than a page may: computed ahead by the same code, shipped.

The paper compares the normalizers under gradient descent, 10^5 steps of 0.5 for each
(``/normalizers?preset=paper-compare-logistic&method=gd``): about 20 CPU-seconds on the
development machine, more under load, past the 20 s a page may take, so that page could never
draw the paper's own setting. Its comparison is computed ahead with ``compare_normalizers``
(``python -m polarize.web.precomputed`` writes ``data/``) and stored with the exact
experiment it ran. The page uses it only for that experiment, the same to the last bit of its
resolved JSON (any other value runs as usual), and says so; a test recomputes it and compares.

Stored as numpy's ``.npz`` (no pickle) packed with xz, which halves zip's size on these floats:
every array of each run's ``Result``, and the rest (settings, status, counts) as JSON, under the
name of its normalizer: the file records which normalizers it holds. A normalizer registered after
it was computed is not in it; the page then says so in words (``note``) and shows the others, until
``python -m polarize.web.precomputed`` computes the comparison again.
"""

from __future__ import annotations

import dataclasses
import io
import json
import lzma
from functools import cache
from pathlib import Path

import numpy as np

from polarize.config import Experiment
from polarize.diagnostics import Result
from polarize.normalizers import NORMALIZERS
from polarize.science.studies import NormalizerRow, compare_normalizers, normalizer_row
from polarize.serialize import strict_dumps
from polarize.web.experiment_controls import build_experiment

__all__ = ["DATA", "NOTE", "STORED", "note", "stored_rows", "write"]

DATA = Path(__file__).parent / "data"
"""Where the comparisons computed ahead are kept (package data)."""

STORED: dict[str, dict[str, str]] = {
    "normalizers-paper-compare-logistic-gd": {"preset": "paper-compare-logistic", "method": "gd"},
}
"""File stem -> the Explorer values of the experiment whose normalizer comparison is stored."""

NOTE = ("The paper's own setting, which takes longer than a page may: its comparison was computed ahead "
        "by the same code and ships with the app (any other value runs live).")
"""What the page says when it shows a comparison computed ahead."""


def note(rows: list[NormalizerRow]) -> str:
    """What the page says over a stored comparison ``rows``: ``NOTE``, and the registered normalizers
    it does not hold (registered after it was computed), by name."""
    held = {row.normalizer for row in rows}
    missing = [name for name in NORMALIZERS if name not in held]
    if not missing:
        return NOTE
    return (f"{NOTE} Not precomputed: {', '.join(missing)} (registered after this comparison was computed; "
            "python -m polarize.web.precomputed computes it again).")


def stored_rows(experiment: Experiment) -> list[NormalizerRow] | None:
    """The stored comparison of ``experiment`` (``compare_normalizers``), or None if none is stored.

    Matched on the resolved experiment's exact JSON: the drawn arrays, the step and every other
    field must be the ones the stored comparison ran.
    """
    key = experiment.resolved().to_json()
    for stem in STORED:
        stored = _load(stem)
        if stored is not None and stored[0] == key:
            return stored[1]
    return None


@cache
def _load(stem: str) -> tuple[str, list[NormalizerRow]] | None:
    path = DATA / f"{stem}.npz.xz"
    if not path.exists():
        return None
    with np.load(io.BytesIO(lzma.decompress(path.read_bytes())), allow_pickle=False) as data:
        meta = json.loads(str(data["meta"]))
        rows = []
        for name, run in meta["runs"].items():
            arrays = {f.name: data[f"{name}.{f.name}"] if f"{name}.{f.name}" in data else None
                      for f in dataclasses.fields(Result) if f.name not in run}
            rows.append(normalizer_row(Result(**arrays, **run | {"experiment": Experiment.from_dict(
                run["experiment"])})))
    return meta["experiment"], rows


def _experiment(stem: str) -> Experiment:
    return build_experiment(STORED[stem])


def write(folder: Path = DATA) -> list[Path]:
    """Compute every stored comparison afresh (no time limit) and write it to ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for stem in STORED:
        experiment = _experiment(stem).resolved()
        arrays, runs = {}, {}
        for row in compare_normalizers(experiment):
            r, name = row.result, row.normalizer
            runs[name] = {"experiment": r.experiment.to_dict()}
            for f in dataclasses.fields(Result):
                value = getattr(r, f.name)
                if isinstance(value, np.ndarray):
                    arrays[f"{name}.{f.name}"] = value
                elif f.name != "experiment" and value is not None:
                    runs[name][f.name] = value
        meta = strict_dumps({"experiment": experiment.to_json(), "runs": runs})
        packed = io.BytesIO()
        np.savez(packed, meta=np.array(meta), **arrays)
        paths.append(folder / f"{stem}.npz.xz")
        paths[-1].write_bytes(lzma.compress(packed.getvalue()))
        _load.cache_clear()
    return paths


if __name__ == "__main__":
    for path in write():
        print(f"wrote {path} ({path.stat().st_size / 1e3:.0f} kB)")
