"""Refusals for the input-contract tests: the field a ``ConfigError`` names, and JSON read strictly."""

from __future__ import annotations

import json

import pytest

from polarize.config import ConfigError

__all__ = ["field_of", "strict_loads"]


def field_of(call) -> str:
    """The field the ``ConfigError`` that ``call()`` raises names (its message one line)."""
    with pytest.raises(ConfigError) as caught:
        call()
    assert "\n" not in str(caught.value)
    return caught.value.field


def strict_loads(text: str):
    """``json.loads`` that refuses ``NaN``, ``Infinity`` and ``-Infinity`` (Python's extensions)."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)
