"""What the kinds whose cells are ``Experiment`` s share (``runs`` and ``ensemble``): the base and the
grid are the Experiment's fields (a preset among them), their rows count polarized runs and the naive
prediction."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from polarize.config import Experiment
from polarize.fields import ConfigError
from polarize.presets import get_preset
from polarize.science.flow_field import naive_winner
from polarize.sweeps.kinds.base import SweepKind

__all__ = ["ExperimentKind", "FIELDS", "POLARIZED_BELOW", "naive"]

FIELDS = frozenset(f.name for f in dataclasses.fields(Experiment))
_ARRAYS = frozenset({"a0", "V0", "target", "X", "y"})
POLARIZED_BELOW = 0.01
"""A run is polarized when ``1 - max s`` ends below this (``options.polarized_below``)."""
_POLARIZED = ("polarized", "1 - max s ends below the sweep's threshold for polarized")
_NAIVE = ("naive guess wins", "the naive prediction holds: the token of largest fitness u\u1d62 at a(0) = 0 "
          "and V\u2080 wins (under logistic loss, the largest p\u1d62(0))")


class ExperimentKind(SweepKind):
    """A kind whose cells are experiments: a preset and Experiment fields in ``[base]``, fields on the
    grid."""

    axes: ClassVar[frozenset[str]] = FIELDS - _ARRAYS
    fractions: ClassVar[Mapping[str, tuple[str, str]]] = MappingProxyType(
        {"polarized": _POLARIZED, "naive_holds": _NAIVE})
    drops: ClassVar[frozenset[str]] = frozenset()
    """Grid keys that are no Experiment field (an ensemble's ``scale``)."""

    def check_base(self, key: str, value: Any) -> None:
        if key in _ARRAYS:
            raise ConfigError(f"base.{key}", "explicit arrays are not sweep settings; use a preset or seeds")
        if key not in FIELDS | {"preset"}:
            super().check_base(key, value)

    def config(self, base: Mapping[str, Any], cell: Mapping[str, Any]) -> Experiment:
        fields = {**{k: v for k, v in base.items() if k != "preset"},
                  **{k: v for k, v in cell.items() if k not in self.drops}}
        return get_preset(base.get("preset", "default")).with_changes(**fields)

    def fraction_words(self, what: str, settings: Any) -> tuple[str, str]:
        short, words = self.fractions[what]
        if what == "polarized":
            words = f"{words} ({settings.polarized_below:g})"
        return short, words


def naive(e: Experiment) -> int:
    """The naive prediction's winner, or -1 where it is not defined (a loss or model without one)."""
    try:
        return naive_winner(e)
    except Exception:  # a loss or model where the prediction is not defined: no prediction
        return -1
