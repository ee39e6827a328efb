"""Sweep kinds: ``KINDS``, each kind one module of this package carrying all its facts.

``runs`` (one ``simulate`` per cell), ``ensemble`` (random starts per cell, stacked) and ``sinks``
(one tiny-transformer training per cell). A new kind is a module here defining ``KIND``, a
``SweepKind`` (``polarize.sweeps.kinds.base``), listed in ``_MODULES``; or, at run time,
``KINDS.register(kind)``. The spec, the tasks, the rows, the summaries and the Sweeps page ask the
kind, never its name.
"""

from __future__ import annotations

from importlib import import_module

from polarize.registry import Registry
from polarize.sweeps.kinds.base import NoSettings, SweepKind, setting

__all__ = ["KINDS", "NoSettings", "SweepKind", "setting"]

_MODULES = ("runs", "ensemble", "sinks")

KINDS: Registry[SweepKind] = Registry(
    {kind.name: kind for kind in (import_module(f"{__name__}.{m}").KIND for m in _MODULES)})
"""Every sweep kind by the name a sweep file's ``kind`` gives, in the order errors and menus list them."""
