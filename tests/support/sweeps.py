"""Sweeps for the sweep tests: a small runs sweep, a copy of a shipped example's results folder, and a
call that must not block (a FIFO in a results folder once blocked every reader)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["RUNS", "example_copy", "runs_sweep", "within"]

RUNS = {"kind": "runs", "grid": {"seed": [0, 1]}, "base": {"horizon": 10.0}}
"""Two runs of ten time units, seeds 0 and 1."""


def runs_sweep(**grid):
    """``RUNS`` parsed, over ``grid`` when given (``seed=[5]``: another sweep)."""
    from polarize.sweeps import parse_sweep

    return parse_sweep({**RUNS, "grid": grid or RUNS["grid"]})


def within(call, seconds: float = 20.0):
    """``call()``'s result, or a failure when it blocks (run in a daemon thread)."""
    import threading

    box: dict = {}

    def target():
        try:
            box["value"] = call()
        except BaseException as exc:  # handed back to the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked"
    if "error" in box:
        raise box["error"]
    return box["value"]


def example_copy(tmp_path: Path, name: str = "runs") -> Path:
    import shutil

    from polarize.sweeps.examples import example

    return Path(shutil.copytree(example(name), tmp_path / name))
