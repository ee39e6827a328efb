"""The tree is the architecture: each folder is a layer, and imports run one way only.

    app.py, server.py, pages/ -> ui/ -> polarize.web -> polarize.sweeps -> polarize.serve, polarize.clips
           -> polarize.plots -> polarize.science -> the engine (the package root and polarize.sinks)

with ``polarize.cli`` (the command line) beside ``ui`` at the top. Inside ``polarize.web`` the
same holds, in tiers (``WEB_TIERS``):

    pages -> study -> experiment (the Explorer's shared controls, runs under the time limit,
    the comparisons shipped ahead) -> view (the view model and its words: ``view``, ``slides``,
    ``page``, ``controls``, ``links``, ``failures``, ...)

Read from the source (every import statement, at any depth), not from what happens to be
imported at run time; then no module-level import loop anywhere, and every module imports
alone in a fresh interpreter. Inside ``polarize.serve`` no loop at all, even through an import
inside a function (the backends, their errors and the runner's choice of one import one way).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

RANKS = {"engine": 0, "science": 1, "plots": 2, "serve": 3, "clips": 3, "sweeps": 4, "web": 5, "cli": 6,
         "ui": 6, "app": 7, "server": 7, "pages": 7}
"""A module may import its own layer and those ranked below it; serve and clips not each other. Sweeps
take their Dask client from serve's backend."""

_FIGURE = "Jupyter's view of a result is the app's own figure: imported on call, from the layer above"
_ROOT = ("the public API names the functions that judge and draw; imported on first use (the module's "
         "__getattr__), here for the type checker only")
LATE = {
    # Jupyter's view of a result is the app's own figure: imported on call, from the layer above.
    ("polarize.notebook", "polarize.plots.dashboard"): _FIGURE,
    ("polarize.notebook", "polarize.plots.paper"): _FIGURE,
    ("polarize.notebook", "polarize.plots.comparisons"): _FIGURE,
    ("polarize.notebook", "polarize.plots.portrait"): _FIGURE,
    ("polarize.notebook", "polarize.plots.words"): _FIGURE,
    ("polarize.notebook", "polarize.science.studies"): "the rate figure draws polarization_rate's numbers",
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
    if parts[0] in ("app", "server", "pages"):
        return parts[0]
    if module == "polarize.__main__":
        return "cli"  # ``python -m polarize``: the command line
    if len(parts) > 1 and parts[1] in ("science", "plots", "serve", "clips", "sweeps", "web", "cli"):
        return parts[1]
    return "engine"  # the package root and polarize.sinks (the transformer's engine)


def modules() -> dict[str, Path]:
    found = {"app": ROOT / "app.py", "server": ROOT / "server.py"}
    for top in ("polarize", "ui", "pages"):
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
        if layer(module) in ("ui", "app", "server", "pages"):
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
        "polarize.budget", "polarize.config", "polarize.diagnostics",
        "polarize.draws", "polarize.ensemble", "polarize.env", "polarize.fields", "polarize.integrate",
        "polarize.losses", "polarize.methods", "polarize.model", "polarize.models", "polarize.normalizers",
        "polarize.notebook", "polarize.presets", "polarize.registry", "polarize.save_at",
        "polarize.serialize", "polarize.sinks", "polarize.status", "polarize.stepping",
        "polarize.switching", "polarize.systems", "polarize.textfile",
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


WEB_TIERS = {"view": 0, "experiment": 1, "study": 2, "pages": 3}
"""Tiers inside ``polarize.web``: a module imports its own tier or those below it."""
_EXPERIMENT = ("polarize.web.experiment_controls", "polarize.web.limited", "polarize.web.precomputed")


def web_tier(module: str) -> str:
    """The tier of a module of ``polarize.web`` (``WEB_TIERS``)."""
    if module == "polarize.web.pages" or module.startswith("polarize.web.pages."):
        return "pages"
    if module == "polarize.web.study":
        return "study"
    return "experiment" if module in _EXPERIMENT else "view"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if layer(m) == "web"))
def test_web_imports_run_down_its_tiers(module):
    mine = web_tier(module)
    for target, _ in imports(MODULES[module]):
        if layer(target) == "web":
            theirs = web_tier(_module_of(target))
            assert WEB_TIERS[theirs] <= WEB_TIERS[mine], f"{module} ({mine}) imports {target} ({theirs})"


def test_every_experiment_tier_module_exists():
    for module in _EXPERIMENT:
        assert module in MODULES, module


def _module_of(name: str) -> str:
    """The project module ``name`` is, or, for ``package.attribute``, its package."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _ancestors(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _targets(node: ast.AST) -> list[str]:
    """What an import statement names: ``import a.b`` names ``a.b``; ``from a import b`` names ``a`` and
    ``a.b`` (a module or not); anything else, nothing."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return []


def module_level_edges(module: str) -> set[str]:
    """The project modules that importing ``module`` runs first, from its module-level imports.

    ``import a.b`` and ``from a.b import c`` run ``a``'s and ``a.b``'s ``__init__`` (unless
    ``module`` lies inside them: they are being imported already) and ``a.b.c`` when it is a
    module. Imports inside functions (and under ``if TYPE_CHECKING``) run later, and do not count.
    """
    tree = ast.parse(MODULES[module].read_text())
    own = set(_ancestors(module))
    out: set[str] = set()
    for node in tree.body:
        for target in _targets(node):
            if target.split(".")[0] not in ("polarize", "ui") or _module_of(target) not in MODULES:
                continue
            out |= {m for m in (*_ancestors(target), _module_of(target)) if m in MODULES and m not in own}
    out.discard(module)
    return out


def import_loops(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every loop of the graph (Tarjan's strongly connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return loops


def test_the_loop_finder_finds_a_loop_through_a_package():
    # study -> pages.explorer runs pages/__init__, which imports descent, which imports study.
    edges = {"w.study": {"w.pages", "w.pages.explorer"}, "w.pages": {"w.pages.descent"},
             "w.pages.descent": {"w.study"}, "w.pages.explorer": set()}
    assert import_loops(edges) == [["w.pages", "w.pages.descent", "w.study"]]
    assert import_loops({**edges, "w.pages.descent": set()}) == []


def test_no_module_level_import_loop():
    edges = {module: module_level_edges(module) for module in MODULES if module != "app"}
    assert import_loops(edges) == []


def edges_at_any_depth(module: str) -> set[str]:
    """The project modules ``module`` imports anywhere, at module level or inside a function
    (``from a import b`` counts ``a.b`` when it is a module)."""
    out = {target for node in ast.walk(ast.parse(MODULES[module].read_text())) for target in _targets(node)
           if target in MODULES}
    out.discard(module)
    return out


def test_serve_has_no_import_loop_at_any_depth():
    """The runner chooses a backend, the backends import the protocol and the errors, never the runner
    (``serve/runner.py`` and ``serve/cluster.py`` imported each other, the cluster's import late)."""
    serve = {module for module in MODULES if module.startswith("polarize.serve.")}
    edges = {module: edges_at_any_depth(module) & serve for module in serve}
    assert import_loops(edges) == []
    assert "polarize.serve.runner" in edges["polarize.serve.training"]  # the reader sees a module's import


def third_party() -> list[str]:
    """The modules outside the project and the standard library that the project imports at module
    level (imported once, before the fork: none of them imports the project)."""
    names = set()
    for path in MODULES.values():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
    outside = ("polarize", "ui", "__future__", *sys.stdlib_module_names)
    return sorted(name for name in names if name.split(".")[0] not in outside)


_ALONE = """
import gc, importlib, json, os, sys, tempfile, traceback
sys.path.insert(0, {root!r})
for name in {preload!r}:
    try:
        importlib.import_module(name)
    except ImportError:  # an extra not installed: the modules that need it fail alone too, and say so
        pass
assert not any(m.split(".")[0] in ("polarize", "ui") for m in sys.modules), "the project is imported"
gc.freeze()  # the children's collector skips the preloaded objects (it walked them all: half their time)
told = tempfile.mkdtemp()
failed, imported, running = [], {{}}, {{}}
modules = {modules!r}
for depth in sorted({{name.count(".") for name in modules}}):  # a package before the modules in it
    queue = []
    for name in (name for name in modules if name.count(".") == depth):
        parts = name.split(".")
        if not any(name in imported.get(".".join(parts[:k]), ()) for k in range(1, len(parts))):
            queue.append(name)
    while queue or running:
        while queue and len(running) < {parallel}:
            name = queue.pop()
            pid = os.fork()
            if pid == 0:  # the child: an interpreter that has imported no module of the project
                try:
                    importlib.import_module(name)
                    with open(os.path.join(told, str(os.getpid())), "w") as out:
                        json.dump([m for m in sys.modules if m.split(".")[0] in ("polarize", "ui")], out)
                except BaseException:
                    traceback.print_exc()
                    os._exit(1)
                os._exit(0)
            running[pid] = name
        pid, status = os.wait()
        if status:
            failed.append(running[pid])
        else:
            with open(os.path.join(told, str(pid))) as told_by:
                imported[running[pid]] = set(json.load(told_by))
        running.pop(pid)
print("FAILED", *sorted(failed))
"""


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_every_module_imports_alone_in_a_fresh_interpreter():
    """Each module imported first, as ``python -c "import polarize.web.study"`` does.

    Quick: one fresh interpreter imports the third-party packages (``third_party``), never a module
    of the project, freezes them out of the garbage collector's reach, then forks a child per module,
    two at a time, packages before the modules in them; each child imports its one module. A module
    that a child importing one of its packages alone has imported needs no child of its own: imported
    alone, it would import that package alone first, the same way, and then find itself imported
    (``polarize.integrate`` is imported by ``polarize``'s ``__init__``).
    Scripts run a command or the app when imported, and are left out: ``__main__`` modules, and
    ``app`` and its page scripts (``pages/``: each draws the whole app when imported outside
    Streamlit, two thirds of this test's time; AppTest runs each, ``test_navigation``).
    """
    names = sorted(m for m in MODULES
                   if m != "app" and not m.startswith("pages.") and not m.endswith("__main__"))
    script = _ALONE.format(root=str(ROOT), preload=third_party(), modules=names, parallel=2)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    assert done.returncode == 0 and last == "FAILED", f"{last}\n{done.stderr[-4000:]}"
