"""``benchmarks/sweep.py --quick`` runs to the end and its sweep agrees with the plain loop.

No timing is asserted: the machine is shared; the figures are in the README.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed")

ROOT = Path(__file__).parents[1]


@pytest.mark.slow
def test_the_quick_sweep_benchmark_agrees_with_the_loop():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "benchmarks/sweep.py", "--quick"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "same winner 24/24" in out.stdout
    found = re.search(r"ensemble sweep: (\d+) starts in (\d+) tasks", out.stdout)
    assert found and found.groups() == ("10000", "4")
    assert re.search(r"per-task overhead: [\d.]+ ms", out.stdout)
