"""The example notebooks run top to bottom on a real Jupyter kernel (ipykernel), as a researcher runs them."""

from __future__ import annotations

import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "examples").glob("*.ipynb"))
CELL_TIMEOUT = 120
"""The time budget: seconds one cell may take on a busy 2-core machine (each notebook runs in seconds)."""
PLOTLY = "application/vnd.plotly.v1+json"


def _outputs(notebook) -> list:
    return [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]


def test_there_are_examples():
    assert len(NOTEBOOKS) >= 3


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name} is stored with outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_runs_on_a_real_kernel(path, tmp_path, monkeypatch):
    notebook = nbformat.read(path, as_version=4)
    # The kernel (this interpreter's ipykernel) imports this checkout's polarize, as pytest does.
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    client = nbclient.NotebookClient(notebook, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError on the first failing cell, CellTimeoutError past the budget
    outputs = _outputs(notebook)
    assert not [out for out in outputs if out.output_type == "error"]
    assert any(PLOTLY in out.get("data", {}) for out in outputs), "no figure drawn inline"
    # Echoed experiments, results and ensembles show a short text (a figure's plain text is not shown).
    echoed = [out["data"]["text/plain"] for out in outputs
              if "text/plain" in out.get("data", {}) and PLOTLY not in out["data"]]
    short = [text for text in echoed if text.startswith(("Experiment(", "Result(", "Ensemble("))]
    assert short and all(len(text) < 500 for text in short)
    assert all("text/html" in out["data"] for out in outputs if out.get("data", {}).get(
        "text/plain", "").startswith(("Experiment(", "Result(", "Ensemble(")))
