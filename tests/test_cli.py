"""The ``polarize`` command line: runs from a JSON file or a preset, one-line errors with status 2.

Every failure is one line (in a real process too), config files are bounded before they are parsed, a
huge result is refused unless allowed, the progress bar goes to stderr, and results are strict JSON."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from support.inputs import strict_loads

from polarize import ConfigError, Experiment, simulate
from polarize.cli import main
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


# ---- failures in one line, files bounded, results written as strict JSON ----------------------------


def run_cli(capsys, *argv) -> tuple[int, str]:
    try:
        status = main(list(argv))
    except SystemExit as exit_:  # argparse's own exit
        status = exit_.code
    err = capsys.readouterr().err
    return status, err


def one_line_error(status, err, *words):
    assert status != 0 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert all(word in err for word in words), err


def test_cli_failures_are_one_line(capsys, tmp_path, monkeypatch):
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{")
    existing = tmp_path / "existing"
    existing.write_text("")
    out = str(tmp_path / "o.json")
    one_line_error(*run_cli(capsys, "run", str(binary), "-o", out), "config:", "UTF-8")
    one_line_error(*run_cli(capsys, "run", "--preset", "", "-o", out), "preset:")
    one_line_error(*run_cli(capsys, "reproduce", "-o", str(existing)), "output:")
    one_line_error(*run_cli(capsys, "reproduce", "-o", "/proc/polarize/x"), "output:")
    one_line_error(*run_cli(capsys, "run", "--preset", "default", "-o", "/proc/polarize/x.json"), "output:")
    one_line_error(*run_cli(capsys, "run"), "required")
    one_line_error(*run_cli(capsys, "nonsense"), "invalid choice")
    monkeypatch.setenv("POLARIZE_MAX_N", "inf")
    one_line_error(*run_cli(capsys, "presets"), "POLARIZE_MAX_N", "positive")


def test_cli_bounds_config_files_before_parsing(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("POLARIZE_MAX_SIZE", "100")
    monkeypatch.setenv("POLARIZE_MAX_N", "50")
    monkeypatch.setenv("POLARIZE_MAX_D", "50")
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"a0": [0.5] * 100_000}))
    one_line_error(*run_cli(capsys, "run", str(big), "-o", str(tmp_path / "o.json")), "config:", "larger")


def test_cli_refuses_a_huge_result_unless_allowed(capsys, tmp_path):
    config = tmp_path / "caps.json"
    config.write_text(json.dumps({"n": 4096, "d": 256, "horizon": 1e15, "samples": 2000}))
    out = tmp_path / "o.json"
    one_line_error(*run_cli(capsys, "run", str(config), "-o", str(out)), "output:", "MiB", "--allow-large")
    assert not out.exists()


def test_cli_progress_bar_goes_to_stderr_and_the_result_is_written(capsys, tmp_path):
    config = tmp_path / "gd.json"
    config.write_text(Experiment(n=3, d=2, method="gd", lr=0.1, horizon=20.0, samples=10).to_json())
    out = tmp_path / "o.json"
    status, err = run_cli(capsys, "run", str(config), "-o", str(out), "--progress")
    assert status == 0 and "100%" in err and err.endswith("\n")
    assert json.loads(out.read_text())["status"] == "finished"


def test_cli_in_a_real_process_has_no_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"n": 2, "d": 1, "V0": [[1e155, 0]]}')
    proc = subprocess.run([sys.executable, "-m", "polarize", "run", str(bad), "-o", str(tmp_path / "o.json")],
                          capture_output=True, text=True, timeout=120)
    one_line_error(proc.returncode, proc.stderr, "V0:", "cannot start there")


def _finite_everywhere(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(map(_finite_everywhere, value.values()))
    if isinstance(value, list):
        return all(map(_finite_everywhere, value))
    return True


@pytest.mark.parametrize("config", [
    {"n": 2, "d": 2, "normalizer": "linear", "horizon": 1e-3, "a0": [-1.0, -1e-320]},  # s / max s = inf
    {"n": 2, "d": 2, "normalizer": "linear", "horizon": 1e-3, "a0": [-1.0, -1e-300]},
    {"n": 3, "d": 3, "normalizer": "sparsemax", "horizon": 10, "samples": 5},
    {"n": 3, "d": 2, "loss": "square", "method": "gd", "lr": 50.0, "horizon": 5000.0, "V_scale": 1.0},
])
def test_polarize_run_writes_strict_json(tmp_path, config, capsys):
    source, out = tmp_path / "config.json", tmp_path / "result.json"
    source.write_text(json.dumps(config))
    status = main(["run", str(source), "-o", str(out)])
    if status == 0:
        data = strict_loads(out.read_text())
        assert _finite_everywhere(data)
    else:
        assert status == 2 and not out.exists()
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
