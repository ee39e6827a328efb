"""Checked types: mypy over the engine and the experiment modules, and a fully annotated public API."""

from __future__ import annotations

import inspect
import pathlib
import subprocess
import sys

import pytest

import polarize

pytest.importorskip("mypy")

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHECKED = ("__init__", "config", "model", "normalizers", "losses", "fields", "systems", "integrate",
           "switching", "ensemble", "diagnostics", "draws", "serialize", "presets", "budget",
           "notebook")
"""The engine (the polarize root modules the flow runs on) and the experiment around it."""


def test_mypy_is_clean_over_the_engine(tmp_path):
    files = [str(ROOT / "polarize" / f"{name}.py") for name in CHECKED]
    run = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                          "--cache-dir", str(tmp_path / "cache"), *files],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-4000:]


def _callables(value: object) -> list[tuple[str, object]]:
    """A public function, or a public class's own methods and properties (``__init__`` aside)."""
    if not inspect.isclass(value):
        return [("", value)] if callable(value) else []
    found = []
    for name, member in vars(value).items():
        if name.startswith("_") and name != "__post_init__":
            continue
        member = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
        if inspect.isfunction(member):
            found.append((f".{name}", member))
    return found


def test_the_public_api_is_fully_annotated():
    missing = []
    for public in polarize.__all__:
        for suffix, fn in _callables(getattr(polarize, public)):
            signature = inspect.signature(fn)  # type: ignore[arg-type]
            bare = [p.name for p in signature.parameters.values()
                    if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
            if bare or signature.return_annotation is inspect.Signature.empty:
                missing.append(f"{public}{suffix}: {bare or 'return'}")
    assert not missing
