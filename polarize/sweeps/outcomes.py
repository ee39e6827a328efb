"""What one cell measures, as rows with a fixed schema per kind (pyarrow tables).

``runs``: one row per run (winner, ``1 - max s``, entropy, loss, ``t_end``, status,
switches, the naive prediction); ``ensemble``: one row per chunk of starts with
counts, or one per start; ``sinks``: one row per training (accuracy, the sink
score of every head, how many are sinks).
"""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np

from polarize.config import Experiment
from polarize.ensemble import simulate_many
from polarize.integrate import simulate
from polarize.science.flow_field import naive_winner
from polarize.status import Status

__all__ = ["SCHEMAS", "error_rows", "in_words", "run_cell", "sinks_row", "table", "trajectories"]

_COMMON = {"hash": "string", "cell": "int64", "task": "string", "worker": "string", "seconds": "double",
           "config": "string", "status": "string", "message": "string"}
SCHEMAS = {
    "runs": {"winner": "int64", "one_minus_max": "double", "entropy_end": "double", "loss_end": "double",
             "t_end": "double", "polarized": "bool", "naive_winner": "int64", "naive_holds": "bool",
             "switches": "int64", "n_evaluations": "int64", "note": "string"},
    "ensemble": {"start": "int64", "n_starts": "int64", "n_finished": "int64", "n_polarized": "int64",
                 "n_naive": "int64", "winner": "int64", "one_minus_max": "double",
                 "mean_one_minus_max": "double", "polarized": "bool",
                 "naive_holds": "bool", "naive_winner": "int64", "alone": "int64", "wins": "list<int64>"},
    "sinks": {"variant": "string", "size": "string", "accuracy": "double", "sinks": "int64",
              "layer1_sinks": "int64", "top_sink": "double", "sink_scores": "list<double>", "layers": "int64",
              "heads": "int64", "run": "string"},
}
"""Column types of each kind's outcome (the grid's own columns come after, typed by their values)."""


def in_words(exc: BaseException) -> str:
    """An exception as one line: its message, and its type when that says more."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text if type(exc).__name__ == "ConfigError" else f"{type(exc).__name__}: {text}".rstrip(": ")


def error_rows(kind: str, cell, message: str) -> list[dict]:
    """The one row of a cell that failed: its status and why, no numbers."""
    return [{"status": "error", "message": message}]


def run_cell(kind: str, cell, settings: dict) -> tuple[list[dict], dict | None]:
    """Run one cell; returns its rows and, for runs with ``trajectories``, its saved series."""
    if kind == "runs":
        return _run(cell, settings)
    if kind == "ensemble":
        return _ensemble(cell, settings), None
    return _sinks(cell, settings), None


def _naive(e: Experiment) -> int:
    try:
        return naive_winner(e)
    except Exception:  # a loss or model where the prediction is not defined: no prediction
        return -1


def _run(cell, settings: dict) -> tuple[list[dict], dict | None]:
    e = Experiment.from_json(cell.config)
    with warnings.catch_warnings():  # a stepper's complaints end in the result's message, in words
        warnings.simplefilter("ignore")
        r = simulate(e)
    naive = _naive(r.experiment)
    row = {"status": r.status.value, "message": r.message, "note": r.note,
           "winner": None if r.dead else r.winner,
           "one_minus_max": float(r.one_minus_max[-1]), "entropy_end": float(r.entropy[-1]),
           "loss_end": float(r.loss[-1]), "t_end": float(r.t[-1]),
           "polarized": bool(r.one_minus_max[-1] < settings["polarized_below"]),
           "naive_winner": naive, "naive_holds": None if naive < 0 or r.dead else naive == r.winner,
           "switches": r.switches, "n_evaluations": r.n_evaluations}
    path = None
    if settings.get("trajectories"):
        path = {"hash": cell.hash, "t": r.t, "s": r.s, "one_minus_max": r.one_minus_max,
                "entropy": r.entropy, "loss": r.loss}
    return [row], path


def ensemble_starts(n: int, lo: int, hi: int, scale: float, draw_seed: int) -> np.ndarray:
    """Starts ``lo .. hi - 1`` of every ensemble cell: ``scale * randn(n)``, the same noise in every cell."""
    return scale * np.random.default_rng([draw_seed, lo]).standard_normal((hi - lo, n))


def _ensemble(cell, settings: dict) -> list[dict]:
    e = Experiment.from_json(cell.config).resolved()
    lo, hi = cell.chunk
    starts = ensemble_starts(e.n, lo, hi, cell.params["scale"], settings["draw_seed"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = simulate_many(dataclasses.replace(e, a0=None), starts)
    naive = _naive(e)
    polarized = out.one_minus_max < settings["polarized_below"]
    status = Status.FINISHED if out.finished.all() else Status.STOPPED
    message = "" if status.ok else f"{int((~out.finished).sum())} starts stopped early"
    if settings["rows"] == "starts":
        return [{"status": (Status.FINISHED if ok else Status.STOPPED).value, "message": "", "start": lo + k,
                 "winner": int(w), "one_minus_max": float(m), "polarized": bool(p), "naive_winner": naive,
                 "naive_holds": bool(w == naive)}
                for k, (w, m, p, ok) in enumerate(zip(out.winner, out.one_minus_max, polarized,
                                                      out.finished, strict=True))]
    return [{"status": status.value, "message": message, "start": lo, "n_starts": hi - lo,
             "n_finished": int(out.finished.sum()), "n_polarized": int(polarized.sum()),
             "n_naive": int((out.winner == naive).sum()), "naive_winner": naive, "alone": out.alone,
             "mean_one_minus_max": float(out.one_minus_max.mean()),  # over the chunk's starts
             "wins": np.bincount(out.winner, minlength=e.n).tolist()}]


def sinks_row(record: dict) -> dict:
    """The row of one training record (``polarize.sinks.train.train`` or a shipped run)."""
    from polarize.sinks.metrics import counts_sinks, sink_heads

    scores = np.asarray(record["sink_scores"], dtype=float)
    config = record["config"]
    config = config if isinstance(config, dict) else config.to_dict()
    heads = sink_heads(scores, record["accuracy"])
    from polarize.sinks.config import SinksConfig

    variant = SinksConfig.from_dict(config).variant
    counted = counts_sinks(variant)  # the Attention sinks page's rule: raw attention's scores mark no sink
    row = {"status": Status.FINISHED.value, "message": "", "accuracy": float(record["accuracy"]),
           "variant": variant, "size": str(record.get("size", "custom")),
           "seed": int(config["seed"]),
           "sinks": int(heads.sum()) if counted else None,
           "layer1_sinks": int(heads[min(1, len(heads) - 1)].sum()) if counted else None,
           "top_sink": float(scores.max()), "sink_scores": scores.ravel().tolist(),
           "layers": scores.shape[0], "heads": scores.shape[1],
           "run": json.dumps({k: v for k, v in record.items() if k != "maps"} | {"config": config},
                             separators=(",", ":"))}
    layer = scores[min(1, len(scores) - 1)]
    row.update({f"sink_l1_h{h}": float(v) for h, v in enumerate(layer)})
    return row


def _sinks(cell, settings: dict) -> list[dict]:
    from polarize.sinks.backend import MISSING_MESSAGE, available
    from polarize.sinks.config import SinksConfig

    if not available():
        raise RuntimeError(MISSING_MESSAGE)
    from polarize.sinks.train import train

    config = SinksConfig.from_dict(json.loads(cell.config))
    size = cell.params.get("size", settings["base"].get("size", "classroom"))
    return [sinks_row({**train(config), "size": size})]


def table(kind: str, rows: list[dict]):
    """Rows as a pyarrow table: the kind's columns in their types, then any others (the grid's)."""
    import pyarrow as pa

    types = {**_COMMON, **SCHEMAS[kind]}
    names = list(types) + [k for row in rows for k in row if k not in types]
    names = list(dict.fromkeys(names))
    columns = {}
    for name in names:
        values = [row.get(name) for row in rows]
        columns[name] = pa.array(values, type=_type(types[name])) if name in types else pa.array(values)
    return pa.table(columns)


def _type(name: str):
    import pyarrow as pa

    if name.startswith("list<"):
        return pa.list_(_type(name[5:-1]))
    return {"string": pa.string(), "int64": pa.int64(), "double": pa.float64(), "bool": pa.bool_()}[name]


def trajectories(paths: list[dict]):
    """Saved series of runs, long format (one row per run and saved time), or None."""
    if not paths:
        return None
    import pyarrow as pa

    return pa.table({
        "hash": [p["hash"] for p in paths for _ in p["t"]],
        "t": np.concatenate([p["t"] for p in paths]),
        "one_minus_max": np.concatenate([p["one_minus_max"] for p in paths]),
        "entropy": np.concatenate([p["entropy"] for p in paths]),
        "loss": np.concatenate([p["loss"] for p in paths]),
        "s": pa.array([row.tolist() for p in paths for row in p["s"]], type=pa.list_(pa.float64())),
    })
