"""The ``polarize`` command line: runs from a JSON file or a preset, one-line errors with status 2."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from polarize import ConfigError, Experiment, simulate
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


def test_cli_caps_descent_steps_for_a_local_run_not_a_hosted_one(tmp_path):
    """The app refuses the notebook's 1e7 steps of paper-kl (cap 2e6); the command line's cap is 1e8."""
    notebook = PRESETS["paper-kl"].experiment.to_dict() | {"method": "gd"}
    env = {k: v for k, v in os.environ.items() if k != "POLARIZE_MAX_STEPS"}
    with pytest.raises(ConfigError, match="2e\\+06"):
        Experiment.from_dict(notebook)
    config = tmp_path / "typo.json"
    config.write_text(json.dumps(notebook | {"lr": 1e-3}))  # 1e9 steps: refused here too, naming the field
    command = [sys.executable, "-m", "polarize", "run", str(config), "-o", str(tmp_path / "r.json")]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 2 and proc.stderr.startswith("polarize: error: horizon:")
    assert "1e+09 gradient-descent steps exceeds the cap of 1e+08" in proc.stderr
