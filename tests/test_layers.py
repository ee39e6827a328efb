"""The tree is the architecture: each folder is a layer, and imports run one way only.

    app.py -> ui/ -> polarize.web -> polarize.serve, polarize.clips, polarize.sweeps -> polarize.plots
           -> polarize.science -> the engine (the package root and polarize.sinks)

with ``polarize.cli`` (the command line) beside ``ui`` at the top. Read from the source
(every import statement, at any depth), not from what happens to be imported at run time.
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

RANKS = {"engine": 0, "science": 1, "plots": 2, "serve": 3, "clips": 3, "sweeps": 3, "web": 4, "cli": 5,
         "ui": 5, "app": 6}
"""A module may import its own layer and those ranked below it; serve, clips and sweeps not each other."""

_FIGURE = "Jupyter's view of a result is the app's own figure: imported on call, from the layer above"
_ROOT = ("the public API names the functions that judge and draw; imported on first use (the module's "
         "__getattr__), here for the type checker only")
LATE = {
    # Jupyter's view of a result is the app's own figure: imported on call, from the layer above.
    ("polarize.summary", "polarize.plots.dashboard"): _FIGURE,
    ("polarize.summary", "polarize.plots.paper"): _FIGURE,
    ("polarize.summary", "polarize.plots.grid"): _FIGURE,
    ("polarize.summary", "polarize.plots.portrait"): _FIGURE,
    ("polarize.summary", "polarize.plots.words"): _FIGURE,
    ("polarize.summary", "polarize.science.studies"): "the rate figure draws polarization_rate's numbers",
    ("polarize.science.basins", "polarize.plots.portrait"): _FIGURE,
    ("polarize", "polarize.plots.dashboard"): _ROOT,
    ("polarize", "polarize.plots.portrait"): _ROOT,
    ("polarize", "polarize.science.basins"): _ROOT,
    ("polarize", "polarize.science.studies"): _ROOT,
    ("polarize", "polarize.science.verdict"): _ROOT,
}
"""(module, imported module) pairs allowed upward, each inside a function, with the reason."""


def layer(module: str) -> str:
    """The layer of a dotted module name of the project."""
    parts = module.split(".")
    if parts[0] == "ui":
        return "ui"
    if parts[0] == "app":
        return "app"
    if module == "polarize.__main__":
        return "cli"  # ``python -m polarize``: the command line
    if len(parts) > 1 and parts[1] in ("science", "plots", "serve", "clips", "sweeps", "web", "cli"):
        return parts[1]
    return "engine"  # the package root and polarize.sinks (the transformer's engine)


def modules() -> dict[str, Path]:
    found = {"app": ROOT / "app.py"}
    for top in ("polarize", "ui"):
        for path in (ROOT / top).rglob("*.py"):
            dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[dotted.removesuffix(".__init__")] = path
    return found


def imports(path: Path) -> list[tuple[str, bool]]:
    """Every module of the project ``path`` imports, and whether at module level."""
    tree = ast.parse(path.read_text(), filename=str(path))
    top = set(map(id, tree.body))
    out = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        out += [(name, id(node) in top) for name in names if name.split(".")[0] in ("polarize", "ui")]
    return out


MODULES = modules()


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_run_down_the_layers(module):
    mine = layer(module)
    for target, _ in imports(MODULES[module]):
        theirs = layer(target)
        if (module, target) in LATE:
            continue
        assert RANKS[theirs] <= RANKS[mine], f"{module} ({mine}) imports {target} ({theirs})"
        assert RANKS[theirs] < RANKS[mine] or theirs == mine, \
            f"{module} ({mine}) imports {target} ({theirs}): side by side, not on top of each other"


def test_upward_imports_are_late_and_few():
    for (module, target), why in LATE.items():
        assert why and (target, False) in imports(MODULES[module]), (module, target)


def test_no_streamlit_below_the_ui():
    for module, path in MODULES.items():
        if layer(module) in ("ui", "app"):
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(name.split(".")[0] == "streamlit" for name in names), module


def test_every_module_is_in_a_layer_folder_or_the_engine():
    """The package root holds the engine and the experiment only: what serves, draws or talks to
    people has its own folder."""
    root_modules = sorted(m for m in MODULES if m.count(".") == 1 and layer(m) == "engine")
    assert root_modules == [
        "polarize.batched", "polarize.budget", "polarize.config", "polarize.diagnostics",
        "polarize.draws", "polarize.ensemble", "polarize.env", "polarize.fields", "polarize.integrate",
        "polarize.losses", "polarize.model", "polarize.normalizers", "polarize.presets", "polarize.serialize",
        "polarize.sinks", "polarize.summary", "polarize.switching", "polarize.systems", "polarize.textfile",
    ]


def test_nothing_refers_to_files_outside_the_project():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    for name in tracked.stdout.split():
        path = ROOT / name
        if path.suffix not in (".py", ".md", ".toml", ".txt", ".js", ".ipynb", ".rst") or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        for outside in ("PAPER.md", "../shared", "/work/"):
            assert outside not in text or path.name == "test_layers.py", f"{name} refers to {outside}"
