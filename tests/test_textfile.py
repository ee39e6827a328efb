"""A user's text file, read bounded and refused in words, the same for an experiment and a sweep."""

from __future__ import annotations

import io
import os
import sys

import pytest
from support.hang import hard_limit

from polarize.fields import ConfigError
from polarize.sweeps.spec import read_sweep
from polarize.textfile import read_text

SWEEP = 'kind = "runs"\n[base]\npreset = "default"\n[grid]\nseed = [0, 1]\n'


def test_a_regular_file_and_standard_input_are_read(tmp_path, monkeypatch):
    path = tmp_path / "x.txt"
    path.write_text("h\u00e9llo", encoding="utf-8")
    assert read_text(path, field="f", most=100) == "h\u00e9llo"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"from stdin")))
    assert read_text("-", field="f", most=100) == "from stdin"


@pytest.mark.parametrize("make", ["fifo", "folder", "missing", "large", "binary"])
def test_what_is_not_a_small_text_file_is_one_line_naming_the_field(tmp_path, make):
    path = tmp_path / "input"
    if make == "fifo":
        os.mkfifo(path)  # with no writer, a plain open() would wait for ever
    elif make == "folder":
        path.mkdir()
    elif make == "large":
        path.write_bytes(b"x" * 101)
    elif make == "binary":
        path.write_bytes(b"ok \xff\xfe")
    with hard_limit(30.0), pytest.raises(ConfigError) as info:
        read_text(path, field="thing", most=100, larger="; it is a few lines")
    message = str(info.value)
    assert info.value.field == "thing" and "\n" not in message and str(path) in message
    expected = {"fifo": "not a regular file", "folder": "Is a directory", "missing": "cannot read",
                "large": "larger than 100 bytes; it is a few lines", "binary": "not UTF-8 text (byte 3)"}
    assert expected[make] in message


def test_a_sweep_file_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "grid.toml"
    os.mkfifo(fifo)
    with hard_limit(30.0), pytest.raises(ConfigError) as info:
        read_sweep(fifo)
    assert info.value.field == "sweep" and "not a regular file" in str(info.value)


def test_a_sweep_file_is_read_through_the_same_reader(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(SWEEP)
    sweep = read_sweep(path)
    assert sweep.name == "tiny" and sweep.kind == "runs"
    path.write_bytes(SWEEP.encode() + b"\xff")
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        read_sweep(path)
