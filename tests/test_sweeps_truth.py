"""The Sweeps page's numbers against direct computations on the stored rows (pyarrow, scipy), issue 34.

- sinks: raw attention's signed scores are not counted as sinks (the Attention sinks page's rule);
- ensembles: the band accounts for seeds (starts within a seed share V0): a t interval on the seeds' shares;
- worker time: a chunk's seconds once, however many rows it wrote.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from scipy.stats import t as student

from polarize.sweeps.examples import example
from polarize.sweeps.summary import fraction_table
from polarize.web.pages import sweeps as page


def raw_rows(name: str) -> pd.DataFrame:
    return pd.concat([pq.read_table(p).to_pandas() for p in sorted(example(name).glob("task-*.parquet"))])


def test_raw_attention_is_never_counted_as_a_sink():
    rows = raw_rows("sinks")
    raw = rows[rows["variant"].str.startswith("raw")]
    assert len(raw) and raw["layer1_sinks"].isna().all() and raw["sinks"].isna().all()
    table = fraction_table(rows, "sinks", "sink_found", ["variant"])
    assert not any(v.startswith("raw") for v in table["variant"])
    softmax = rows[rows["variant"] == "softmax"]
    (share,) = table.loc[table["variant"] == "softmax", "share"]
    assert share == np.mean(softmax["layer1_sinks"] > 0)
    # an old folder whose raw rows still carry a count: the count is ignored all the same
    old = rows.assign(layer1_sinks=rows["layer1_sinks"].fillna(2.0))
    shown = fraction_table(old, "sinks", "sink_found", ["variant"])["variant"]
    assert not any(v.startswith("raw") for v in shown)


def test_the_ensemble_band_is_the_spread_between_seeds():
    """Issue 34 item 3: at scale 0.1 the three seeds' own shares are about 0.80, 0.59 and 0.70; a band that
    pools the 12,000 starts as one binomial sample ([0.688, 0.705]) holds none of the first two."""
    rows = raw_rows("ensemble")
    table = fraction_table(rows, "ensemble", "naive_holds", ["scale"])
    for scale, part in rows.groupby("scale"):
        per_seed = part.groupby("seed")[["n_naive", "n_starts"]].sum()
        shares = (per_seed["n_naive"] / per_seed["n_starts"]).to_numpy()
        k = len(shares)
        mean = shares.mean()
        half = student.ppf(0.975, k - 1) * shares.std(ddof=1) / np.sqrt(k)
        (row,) = table[table["scale"] == scale].to_dict("records")
        assert row["band"] == "seeds" and row["seeds"] == k
        assert abs(row["share"] - mean) < 1e-12
        assert abs(row["low"] - max(0.0, mean - half)) < 1e-12
        assert abs(row["high"] - min(1.0, mean + half)) < 1e-12
    (low,) = table.loc[table["scale"] == 0.1, "low"]
    (high,) = table.loc[table["scale"] == 0.1, "high"]
    assert low < 0.59 and high > 0.80
    words = page._band_words(table)
    assert "between seeds" in words and "Wilson" not in words


def test_runs_sweeps_keep_wilson_each_run_its_own_trial():
    rows = raw_rows("runs")
    table = fraction_table(rows, "runs", "polarized", [])
    k, n = float(rows["polarized"].sum()), float(rows["polarized"].notna().sum())
    centre = (k / n + 1.959964**2 / (2 * n)) / (1 + 1.959964**2 / n)
    assert set(table["band"]) == {"wilson"} and abs(table["low"].iloc[0] - table["high"].iloc[0]) > 0
    assert table["low"].iloc[0] < centre < table["high"].iloc[0]


def test_worker_time_counts_each_chunk_once():
    """Per-start rows repeat their chunk's seconds: 359 s shown for 1.8 s of work before."""
    chunks = pd.DataFrame({"hash": ["a", "b"], "seconds": [0.7, 1.1]})
    per_start = chunks.loc[chunks.index.repeat(100)].reset_index(drop=True)
    assert abs(page.worker_seconds(per_start) - 1.8) < 1e-12
    rows = raw_rows("ensemble")
    assert abs(page.worker_seconds(rows) - rows["seconds"].sum()) < 1e-9  # one row per chunk there
    view = page.view(page.PAGE.make_job({**page.PAGE.defaults(None), "sweep": "example-ensemble"}))
    shown = [m for block in view.blocks for column in getattr(block, "columns", ()) for m in column
             if getattr(m, "label", "") == "Worker time"]
    assert shown and shown[0].value == f"{rows.drop_duplicates('hash')['seconds'].sum():.0f} s"
