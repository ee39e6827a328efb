"""The ``polarize`` command line: runs from a JSON file or a preset, one-line errors with status 2."""

import json
import subprocess
import sys

import numpy as np
import pytest

from polarize import Experiment, simulate
from polarize.presets import PRESETS


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "polarize", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_cli_runs_a_config_file(tmp_path):
    e = Experiment(n=4, d=3, seed=1, horizon=1e3, samples=12)
    config = tmp_path / "config.json"
    config.write_text(e.to_json())
    out = tmp_path / "result.json"
    proc = cli("run", str(config), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    data = json.loads(out.read_text())
    assert Experiment.from_dict(data["config"]) == e.resolved()
    np.testing.assert_array_equal(np.array(data["s"]), simulate(e).s)
    assert "max s" in proc.stdout


def test_cli_runs_a_preset_and_lists_presets(tmp_path):
    out = tmp_path / "paper.json"
    proc = cli("run", "--preset", "paper-logistic", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["status"] == "finished"
    assert Experiment.from_dict(data["config"]) == PRESETS["paper-logistic"].experiment.resolved()
    listing = cli("presets")
    assert listing.returncode == 0
    names = [line.split()[0] for line in listing.stdout.splitlines() if line.strip()]
    assert set(PRESETS) <= set(names)


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ('{"n": 1}', "n"),
        ('{"loss": "hinge", "n": 4}', "loss"),
        ('{"n": 4, "bogus": 1}', "bogus"),
        ("{not json", "config"),
        # valid fields, but the normalizer is undefined at the drawn start (all logits zero)
        ('{"normalizer": "l1", "n": 4, "d": 3}', "a_init"),
    ],
)
def test_cli_bad_config_exits_2_with_one_line(tmp_path, content, field):
    config = tmp_path / "bad.json"
    config.write_text(content)
    out = tmp_path / "result.json"
    proc = cli("run", str(config), "-o", str(out))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"{field}:" in lines[0]
    assert not out.exists()


def test_cli_missing_file_and_unknown_preset(tmp_path):
    proc = cli("run", str(tmp_path / "absent.json"), "-o", str(tmp_path / "r.json"))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "config:" in proc.stderr
    proc = cli("run", "--preset", "nope", "-o", str(tmp_path / "r.json"))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "preset:" in proc.stderr
