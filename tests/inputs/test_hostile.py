"""The hostile inputs of issue 13, one test each: configs, environment caps and command lines
that used to crash, change silently or run unbounded now give a run or a one-line error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from polarize import cli
from polarize.config import ConfigError, Experiment
from polarize.integrate import simulate
from polarize.serve.runner import timeout_seconds
from polarize.web.links import read_link
from polarize.web.pages.explorer import EXPLORER

DEEP = "[" * 1000 + "]" * 1000


def field_of(call) -> str:
    with pytest.raises(ConfigError) as caught:
        call()
    assert "\n" not in str(caught.value)
    return caught.value.field


# ---- validation is total -------------------------------------------------------------------------


@pytest.mark.parametrize(("config", "field"), [
    ({"a_scale": 10**400}, "a_scale"),
    ({"seed": 10**400}, "seed"),
    ({"n": 2, "d": 1, "a0": [10**400, 1]}, "a0"),
    ({"n": 2, "d": 1, "V0": [[1, 10**400]]}, "V0"),
    ({"method": "gd", "lr": 5e-324, "horizon": 1}, "lr"),
    ({"lr": 1e-300}, "lr"),
    ({"model": None}, "model"),
    ({"n": 2, "d": 1, "a0": [True, False]}, "a0"),
    ({"n": 2, "d": 1, "a0": ["1", "2"]}, "a0"),
    ({"a_scale": True}, "a_scale"),
    ({"loss": "square", "n": 2, "d": 2, "X": [[1, 0], [0, 1]]}, "y"),
    ({"loss": "square", "d": 3000, "n": 2, "kappa": 2.0}, "kappa"),
])
def test_hostile_fields_are_config_errors_naming_them(config, field):
    assert field_of(lambda: Experiment.from_dict(config)) == field


def test_hostile_json_and_links_are_config_errors():
    assert field_of(lambda: Experiment.from_json('{"n": ' + "9" * 5000 + "}")) == "config"
    assert field_of(lambda: Experiment.from_json(DEEP)) == "config"
    assert field_of(lambda: Experiment.from_dict({"bad\nkey": 1})) == "'bad\\nkey'"
    values, ignored = read_link(EXPLORER, {"seed": DEEP, "n": "9" * 5000, "d": "2", "horizon": "50"})
    assert set(ignored) == {"seed", "n"} and (values["d"], values["horizon"]) == (2, 50.0)


def test_link_integers_are_read_exactly():
    values, ignored = read_link(EXPLORER, {"seed": str(2**32 - 1)})
    assert values["seed"] == 2**32 - 1 and not ignored
    assert set(read_link(EXPLORER, {"seed": str(2**32)})[1]) == {"seed"}


@pytest.mark.parametrize(("loss", "target", "expected"), [
    ("logistic", [1e155], [1.0]),
    ("kl", [1e308, 1e308], [0.5, 0.5]),
    ("logistic", [1e-160, 1e-160], [2**-0.5, 2**-0.5]),
    ("square", [-1e308, 1e308], [-(2**-0.5), 2**-0.5]),
])
def test_targets_are_normalized_without_overflow_and_round_trip(loss, target, expected):
    e = Experiment(n=2, d=len(target), loss=loss, target=target)
    np.testing.assert_allclose(np.asarray(e.target), expected, rtol=1e-15)
    assert Experiment.from_dict(e.to_dict()) == e


def test_negative_zero_in_an_array_is_zero():
    plus, minus = Experiment(n=2, d=1, a0=[0.0, 1.0]), Experiment(n=2, d=1, a0=[-0.0, 1.0])
    assert plus == minus and hash(plus) == hash(minus)


def test_an_unset_optional_field_round_trips():
    e = Experiment.from_dict({"kappa": None, "m": None, "a0": None})
    assert e == Experiment() and Experiment.from_dict(e.to_dict()) == e


# ---- simulate is total on what validation accepts ------------------------------------------------


def test_a_long_flow_saved_from_a_small_step_runs():
    result = simulate(Experiment(horizon=1e15, lr=1e-5, n=4, d=3, samples=40))
    assert result.finished and result.t[1] == pytest.approx(1e-5) and result.t[-1] == 1e15


def test_the_longest_horizon_runs_and_an_overflowing_step_count_names_lr():
    result = simulate(Experiment(horizon=1e300, lr=1e-5, n=3, d=3, samples=40))
    assert result.finished and result.t[-1] == 1e300 and np.all(np.isfinite(result.t))
    for method in ("flow", "gd"):
        with pytest.raises(ConfigError, match=r"^lr:"):
            Experiment(horizon=1e300, lr=1e-12, method=method)


@pytest.mark.parametrize(("config", "field"), [
    (dict(n=2, d=1, V0=[[1e155, 0.0]]), "V0"),
    (dict(n=5, d=6, V0=np.where(np.arange(30).reshape(6, 5) == 0, 1e308, 0.0)), "V0"),
    (dict(loss="square", n=3, d=2, X=[[1e308, 0.0], [0.0, 1.0]], y=[1.0, 2.0]), "X"),
])
def test_a_start_that_overflows_is_refused_naming_the_array(config, field):
    with pytest.raises(ConfigError) as caught:
        simulate(Experiment(**config))
    assert caught.value.field == field and "cannot start there" in str(caught.value)


@pytest.mark.parametrize("loss", ["logistic", "square"])
def test_a_temperature_so_small_that_the_start_overflows_is_blamed_not_V_scale(loss):
    """Nothing but the temperature is set: the refusal must name it, not a field the config left alone."""
    with pytest.raises(ConfigError) as caught:
        simulate(Experiment(n=3, d=2, loss=loss, temperature=1e-300))
    assert caught.value.field == "temperature" and "too small" in str(caught.value)
    assert simulate(Experiment(n=3, d=2, loss=loss, temperature=1e-3, horizon=1.0)).finished


def test_a_diverging_descent_stops_in_words_with_finite_numbers():
    result = simulate(Experiment(loss="square", n=3, d=3, method="gd", lr=900.0, horizon=9e4, samples=20,
                                 V_scale=1.0, a_init="gaussian"))
    assert not result.finished and "diverg" in result.message
    assert all(np.all(np.isfinite(getattr(result, k))) for k in ("s", "loss", "V_final", "t"))


# ---- environment caps ----------------------------------------------------------------------------


@pytest.mark.parametrize("var", ["POLARIZE_MAX_N", "POLARIZE_MAX_HORIZON", "POLARIZE_MAX_STEPS"])
@pytest.mark.parametrize("raw", ["inf", "1e400", "nan", "0", "-3", "lots"])
def test_bad_caps_name_the_variable(monkeypatch, var, raw):
    monkeypatch.setenv(var, raw)
    with pytest.raises(ConfigError) as caught:
        Experiment()
    assert caught.value.field == var and "positive" in str(caught.value)


def test_count_caps_must_be_whole_and_others_need_not(monkeypatch):
    monkeypatch.setenv("POLARIZE_MAX_N", "2.9")
    assert field_of(Experiment) == "POLARIZE_MAX_N"
    monkeypatch.setenv("POLARIZE_MAX_N", "1e3")
    monkeypatch.setenv("POLARIZE_MAX_HORIZON", "2.5")
    assert Experiment(n=1000, d=2, horizon=2.5).n == 1000
    assert field_of(lambda: Experiment(horizon=3.0)) == "horizon"


@pytest.mark.parametrize("raw", ["inf", "nan", "0", "-1", "soon"])
def test_the_app_time_limit_is_strict(monkeypatch, raw):
    monkeypatch.setenv("POLARIZE_APP_TIMEOUT", raw)
    assert field_of(timeout_seconds) == "POLARIZE_APP_TIMEOUT"
    monkeypatch.setenv("POLARIZE_APP_TIMEOUT", "7.5")
    assert timeout_seconds() == 7.5


# ---- the command line ----------------------------------------------------------------------------


def run_cli(capsys, *argv) -> tuple[int, str]:
    try:
        status = cli.main(list(argv))
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


def test_the_app_stops_with_one_line_on_a_bad_cap(monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("POLARIZE_MAX_N", "inf")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    (line,) = [t.value for t in at.text]
    assert "POLARIZE_MAX_N" in line and "positive" in line and "\n" not in line
