"""The ``sinks`` sweep kind: one tiny-transformer training per cell (paper section 7), one row each.

Its row: the accuracy, every head's sink score, how many are sinks (none counted for raw attention,
whose signed scores say nothing about sinks), and the whole training record as JSON. A cell's
``[base]`` and grid are a size, a variant, a seed and ``SinksConfig`` fields.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from polarize.fields import ConfigError, shown
from polarize.sinks.config import SIZES, VARIANTS, SinksConfig, variant_config
from polarize.status import Status
from polarize.sweeps.cell import Cell
from polarize.sweeps.kinds.base import SweepKind

__all__ = ["KIND", "Sinks", "sinks_row"]

_FIELDS = frozenset(f.name for f in dataclasses.fields(SinksConfig)) - {"attention", "normalized"}
_CHOSEN = frozenset({"variant", "size"})
"""Keys that choose a config together (``variant_config(size, variant)``): a fault in one blames either."""


def sinks_row(record: dict) -> dict:
    """The row of one training record (``polarize.sinks.train.train`` or a shipped run)."""
    from polarize.sinks.metrics import counts_sinks, sink_heads

    scores = np.asarray(record["sink_scores"], dtype=float)
    config = record["config"]
    config = config if isinstance(config, dict) else config.to_dict()
    heads = sink_heads(scores, record["accuracy"])
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


class Sinks(SweepKind):
    name = "sinks"
    label = "attention-sink trainings"
    axes = _FIELDS | _CHOSEN
    fraction_x = "variant"
    samples = False  # a training is too long to sample: ``estimate`` reads the shipped runs' times
    schema: ClassVar[Mapping[str, str]] = MappingProxyType({
        "variant": "string", "size": "string", "accuracy": "double", "sinks": "int64",
        "layer1_sinks": "int64", "top_sink": "double", "sink_scores": "list<double>", "layers": "int64",
        "heads": "int64", "run": "string"})
    fractions: ClassVar[Mapping[str, tuple[str, str]]] = MappingProxyType(
        {"sink_found": ("layer-1 sink", "a layer-1 head is a sink (score > 0.9, accuracy > 0.95)")})

    def check_base(self, key: str, value: Any) -> None:
        if key not in _FIELDS | _CHOSEN:
            super().check_base(key, value)

    def config(self, base: Mapping[str, Any], cell: Mapping[str, Any]) -> SinksConfig:
        merged = {**base, **cell}
        size = merged.pop("size", "classroom")
        variant = merged.pop("variant", "softmax")
        seed = merged.pop("seed", 0)
        if variant not in VARIANTS:
            raise ConfigError("variant", f"must be one of {', '.join(VARIANTS)}; got {shown(variant)}")
        if size not in SIZES:
            raise ConfigError("size", f"must be one of {', '.join(SIZES)}; got {shown(size)}")
        config = variant_config(size, variant, seed=seed)
        return dataclasses.replace(config, **merged) if merged else config

    def config_json(self, config: SinksConfig) -> str:
        return json.dumps(config.to_dict())

    def blamed(self, key: str) -> frozenset[str]:
        return _CHOSEN if key in _CHOSEN else frozenset((key,))

    def preflight(self, *, here: bool) -> None:
        """Trainings on this machine need JAX here; a cluster's workers say so in their rows if not."""
        from polarize.sinks.backend import MISSING_MESSAGE, available

        if here and not available():
            raise ConfigError("kind", f"sinks sweeps: {MISSING_MESSAGE}")

    def estimate(self, sweep, cells: list[Cell]) -> tuple[float | None, str]:
        """From the shipped runs' CPU time at each size (if the base changes steps or width, scale it)."""
        import statistics

        from polarize.sinks.runs import read_run, shipped_runs

        sizes = [c.params.get("size", sweep.base.get("size", "classroom")) for c in cells]
        cpu = {}
        for size in set(sizes):
            times = [read_run(p).get("timing", {}).get("cpu_seconds") for n, p in shipped_runs().items()
                     if n.startswith(f"{size}-")]
            times = [t for t in times if isinstance(t, (int, float))]
            cpu[size] = statistics.median(times) if times else None
        if not cells or not all(cpu.values()):
            return None, ""
        total = sum(cpu[s] for s in sizes)
        return total, (f"estimate from the shipped trainings of the same sizes: {total / 3600:.3g} CPU-hours "
                       "in all (if the base changes steps or width, scale it)")

    def run_cell(self, cell: Cell, settings: Any, base: Mapping[str, Any]):
        from polarize.sinks.backend import MISSING_MESSAGE, available

        if not available():
            raise RuntimeError(MISSING_MESSAGE)
        from polarize.sinks.train import train

        config = SinksConfig.from_dict(json.loads(cell.config))
        size = cell.params.get("size", base.get("size", "classroom"))
        return [sinks_row({**train(config), "size": size})], None

    def counts(self, ok, what: str):
        from polarize.sinks.metrics import counts_sinks

        # Raw attention's signed scores say nothing about sinks (the Attention sinks page's rule): not
        # trials, also in folders written before their rows left the count empty.
        ok = ok[ok["layer1_sinks"].notna() & ok["variant"].map(counts_sinks)]
        return ok, (ok["layer1_sinks"] > 0).astype(float), np.ones(len(ok))

    def figures(self, frame, sweep, choices, words, *, narrow=False):
        from polarize.plots.sweeps import sink_heads_figure

        return (("sweeps-heads", sink_heads_figure(frame, narrow=narrow),
                 "Every layer-1 head of every run: its sink score (attention on BOS, paper section 7), one "
                 "dot per head, colour by seed; dashed: 0.9, a sink. Raw attention's heads are drawn but "
                 "never counted as sinks, here or in the share above: its signed, unnormalized scores say "
                 "nothing about sinks (as on the Attention sinks page)."),)


KIND = Sinks()
