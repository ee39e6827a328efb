"""Lazy, thread-limited import of JAX (the optional ``sinks`` extra).

``import polarize`` and the app never import JAX; training code calls ``jax()``.
Before the first import it caps XLA at one compute thread (the machines this
runs on are small and shared), unless the caller set ``XLA_FLAGS`` already.
"""

from __future__ import annotations

import importlib.util
import os
from types import ModuleType

__all__ = ["MISSING_MESSAGE", "available", "jax"]

MISSING_MESSAGE = "training needs the optional extra: pip install 'polarize[sinks]' (JAX and optax)"

_SINGLE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def available() -> bool:
    """True when JAX and optax can be imported (without importing them)."""
    return all(importlib.util.find_spec(name) is not None for name in ("jax", "optax"))


def jax() -> ModuleType:
    """Import and return ``jax`` with the thread cap; ``ImportError`` names the extra."""
    os.environ.setdefault("XLA_FLAGS", _SINGLE_THREAD)
    try:
        import jax as module
    except ImportError as exc:
        raise ImportError(MISSING_MESSAGE) from exc
    return module
