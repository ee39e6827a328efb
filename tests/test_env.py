"""Every POLARIZE_* variable goes through polarize.env's strict parsers.

The variables are found by scanning the code (not from a list kept by hand), so a new
``os.environ`` read of a ``POLARIZE_*`` name that bypasses ``polarize.env`` fails here. A data folder
that cannot be found and a cap below what any setting takes are one line naming the variable, as are
caps that are not positive and finite, and the app's time limit (any value ``support.fuzz`` draws); the
app stops in one line on a bad cap.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.fuzz import environment_values, fuzz
from support.inputs import field_of

from polarize import Experiment, simulate_many
from polarize.config import ConfigError
from polarize.env import CAPS, FLOORS, VARIABLES, environment_problem, flag, limits, positive_number
from polarize.serve.runner import timeout_seconds

ROOT = Path(__file__).resolve().parents[1]
CODE = [*sorted((ROOT / "polarize").rglob("*.py")), *sorted((ROOT / "ui").rglob("*.py")),
        *sorted((ROOT / "pages").rglob("*.py")), ROOT / "app.py"]
HOSTILE = ["inf", "-inf", "nan", "1e400", "9" * 5000, "-1", "0", "2.5", "lots", "1e18", " ", "0x10", "١٢"]
"""Values no variable should take silently (the blank one means unset: the default)."""


def read_variables() -> set[str]:
    names = set()
    for path in CODE:
        names |= set(re.findall(r"POLARIZE_[A-Z_]+[A-Z]", path.read_text()))
    return names


def test_every_variable_the_code_names_has_one_strict_reader():
    named = read_variables()
    assert named >= {"POLARIZE_MAX_STARTS", "POLARIZE_APP_INPROCESS", "POLARIZE_DATA_DIR",
                     "POLARIZE_MAX_SIZE"}
    assert named == set(VARIABLES), "a POLARIZE_* variable is read without polarize.env.VARIABLES"


def test_only_polarize_env_reads_the_environment_for_polarize_variables():
    for path in CODE:
        if path.name == "env.py":
            continue
        for line in path.read_text().splitlines():
            if re.search(r"os\.environ|getenv\(", line):
                assert "POLARIZE_" not in line, f"{path.relative_to(ROOT)} reads {line.strip()!r} itself"


@pytest.mark.parametrize("var", sorted(VARIABLES))
@pytest.mark.parametrize("raw", HOSTILE)
def test_each_variable_refuses_hostile_values_in_one_line_naming_it(monkeypatch, tmp_path, var, raw):
    monkeypatch.chdir(tmp_path)  # a relative path that is a number names a folder that may be made here
    monkeypatch.setenv(var, raw)
    try:
        value = VARIABLES[var]()
    except ConfigError as exc:
        assert exc.field == var and var in str(exc) and "\n" not in str(exc) and len(str(exc)) < 300
        assert environment_problem() == str(exc)
        return
    # Accepted: only a value that means what it says (a switch's spelling, a folder, a blank, a number
    # that is the cap exactly: 2.5 s of time limit, a horizon of 1e18).
    if var == "POLARIZE_DATA_DIR":
        assert value is None or isinstance(value, Path)
    elif isinstance(value, bool):
        assert raw.strip() in ("", "0")
    elif raw.strip():
        assert raw.isascii() and value == float(raw) and 0 < value < float("inf")
    assert environment_problem() is None


@pytest.mark.parametrize("raw", ["1", "true", "TRUE", "yes", "on", "On"])
def test_switches_accept_the_usual_spellings_for_on(monkeypatch, raw):
    monkeypatch.setenv("POLARIZE_APP_INPROCESS", raw)
    assert flag("POLARIZE_APP_INPROCESS") is True


@pytest.mark.parametrize("raw", ["0", "false", "False", "no", "off", "OFF", ""])
def test_switches_accept_the_usual_spellings_for_off(monkeypatch, raw):
    """``false``, ``no`` and ``off`` used to turn the in-process mode (no time limit) on."""
    from polarize.serve import runner

    monkeypatch.setenv("POLARIZE_APP_INPROCESS", raw)
    assert flag("POLARIZE_APP_INPROCESS") is False and not runner._in_process()


@pytest.mark.parametrize("raw", ["1e400", "inf", "9" * 5000, "-1", "0", "2.5", "1e300"])
def test_the_cap_on_starts_is_checked_before_any_run(monkeypatch, raw):
    monkeypatch.setenv("POLARIZE_MAX_STARTS", raw)
    with pytest.raises(ConfigError) as info:
        simulate_many(Experiment(n=3, d=3, horizon=1.0), np.zeros((2, 3)))
    assert info.value.field == "POLARIZE_MAX_STARTS"


@pytest.mark.parametrize("var", ["POLARIZE_MAX_SIZE", "POLARIZE_MAX_N", "POLARIZE_MAX_D",
                                 "POLARIZE_MAX_STEPS", "POLARIZE_MAX_SAMPLES", "POLARIZE_MAX_STARTS"])
def test_caps_have_upper_bounds(monkeypatch, var):
    monkeypatch.setenv(var, "1e18")
    with pytest.raises(ConfigError, match="up to"):
        VARIABLES[var]()


def test_the_largest_caps_are_honoured(monkeypatch, tmp_path):
    """At the most each cap may be set to, the code still works: ``polarize run`` reads and runs a config."""
    from polarize import env
    from polarize.cli import main

    for var, _, most in env.CAPS.values():
        monkeypatch.setenv(var, str(most))
    monkeypatch.setenv(env.STARTS[0], str(env.STARTS[2]))
    monkeypatch.setenv(env.TIMEOUT[0], str(env.TIMEOUT[2]))
    assert environment_problem() is None and limits()["max_size"] == env.CAPS["max_size"][2]
    source = tmp_path / "good.json"
    source.write_text('{"n": 3, "d": 3, "horizon": 10}')
    assert main(["run", str(source), "-o", str(tmp_path / "out.json")]) == 0


@pytest.mark.parametrize("where", ["/dev/null", "/proc/self", "/proc/nonexistent/polarize", "/sys/kernel",
                                   "file/inside", "x" * 300, "deep/" + "y" * 5000])
def test_bad_data_folders_are_one_sentence(monkeypatch, tmp_path, where):
    from polarize.web.deck_store import DeckStore, data_dir

    (tmp_path / "file").write_text("not a folder")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("POLARIZE_DATA_DIR", where)
    with pytest.raises(ConfigError) as info:
        data_dir()
    assert info.value.field == "POLARIZE_DATA_DIR" and "\n" not in str(info.value)
    with pytest.raises(ConfigError):
        DeckStore.shared().names()


def test_a_fifo_as_config_file_does_not_block(tmp_path, capsys):
    import os

    from support.hang import hard_limit  # a FIFO with no writer blocked the open for ever

    from polarize.cli import main

    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    with hard_limit(30.0):
        status = main(["run", str(fifo), "-o", str(tmp_path / "out.json")])
    assert status == 2
    assert "not a regular file" in capsys.readouterr().err


def test_a_folder_as_config_file_is_one_line(tmp_path, capsys):
    from polarize.cli import main

    assert main(["run", str(tmp_path), "-o", str(tmp_path / "out.json")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_standard_input_is_read_when_asked_within_the_size_cap(tmp_path, monkeypatch, capsys):
    import io
    import sys

    from polarize.cli import main

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"n": 3, "d": 3, "horizon": 10}')))
    assert main(["run", "-", "-o", str(tmp_path / "out.json")]) == 0
    monkeypatch.setenv("POLARIZE_MAX_SIZE", "2")  # its floor: n * d >= 2
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b" " * 1_000_000)))
    assert main(["run", "-", "-o", str(tmp_path / "out.json")]) == 2
    assert "larger than" in capsys.readouterr().err


# ---- a data folder that cannot be found, caps below what any setting takes ---------------------------


def test_a_data_dir_of_an_unknown_users_home_is_one_line(monkeypatch, capsys):
    from polarize.cli import main
    from polarize.env import data_dir, environment_problem

    monkeypatch.setenv("POLARIZE_DATA_DIR", "~nosuchuser3317/x")
    with pytest.raises(ConfigError) as info:
        data_dir()
    assert info.value.field == "POLARIZE_DATA_DIR"
    assert "POLARIZE_DATA_DIR" in environment_problem()
    assert main(["presets"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "POLARIZE_DATA_DIR" in err and "Traceback" not in err


@pytest.mark.parametrize(("var", "raw"), [("POLARIZE_MAX_N", "1"), ("POLARIZE_MAX_SIZE", "1"),
                                          ("POLARIZE_MAX_SAMPLES", "1"), ("POLARIZE_MAX_HORIZON", "1e-13")])
def test_a_cap_below_what_any_setting_takes_names_the_variable(monkeypatch, var, raw):
    from polarize import Experiment
    from polarize.env import environment_problem

    monkeypatch.setenv(var, raw)
    problem = environment_problem()
    assert problem and problem.startswith(f"{var}: ")
    with pytest.raises(ConfigError) as info:
        Experiment(n=2, d=1, samples=2, horizon=1e-12)
    assert info.value.field == var


def test_the_floors_of_the_caps_are_what_the_settings_take(monkeypatch):
    """At its floor each cap still lets the least setting run: the floors are not above what is needed."""
    from polarize import Experiment, env
    from polarize.config import MIN_TIME

    for key, least in env.FLOORS.items():
        monkeypatch.setenv(env.CAPS[key][0], str(least))
    assert env.environment_problem() is None and env.FLOORS["max_horizon"] == MIN_TIME
    Experiment(n=2, d=1, samples=2, horizon=MIN_TIME, method="gd", lr=MIN_TIME)


# ---- caps and the app's time limit, strict; the app stops in one line on a bad cap -------------------


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


def test_the_app_stops_with_one_line_on_a_bad_cap(monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("POLARIZE_MAX_N", "inf")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    (line,) = [t.value for t in at.text]
    assert "POLARIZE_MAX_N" in line and "positive" in line and "\n" not in line


# ---- property-based: any value of a cap or of the app's time limit ----------------------------------


@fuzz(200)
@given(st.sampled_from(sorted(CAPS)), environment_values)
def test_environment_caps_are_positive_finite_or_name_the_variable(key, raw):
    var, default, most = CAPS[key]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(var, raw)
        try:
            value = limits()[key]
        except ConfigError as exc:
            assert exc.field == var and "positive" in str(exc)
            number = _number_or_nan(raw)
            whole = number.is_integer() or not isinstance(default, int)
            assert raw.strip() and not (max(0, FLOORS[key]) <= number <= most and number > 0 and whole)
            return
    assert math.isfinite(value) and value > 0 and type(value) is type(default)
    assert value == (float(raw) if raw.strip() else default)


@fuzz(100)
@given(environment_values)
def test_the_app_time_limit_is_positive_finite_or_names_the_variable(raw):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("POLARIZE_APP_TIMEOUT", raw)
        try:
            value = positive_number("POLARIZE_APP_TIMEOUT", 20.0)
        except ConfigError as exc:
            assert exc.field == "POLARIZE_APP_TIMEOUT"
            assert raw.strip() and not 0 < _number_or_nan(raw) < math.inf
            return
    assert 0 < value < math.inf


def _number_or_nan(raw: str) -> float:
    try:
        return float(raw)
    except ValueError:
        return math.nan
