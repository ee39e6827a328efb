"""A real Dask cluster for tests: a ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1.

The workers import this checkout's ``polarize`` and the tests' helper modules (``PYTHONPATH``), as
an operator's workers import the installed package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DASK = Path(sys.executable).with_name("dask")


def start(args: list[str], log: Path) -> subprocess.Popen:
    """``dask ARGS`` in a session of its own (so a test can kill it alone), its output in ``log``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    return subprocess.Popen([str(DASK), *args], cwd=ROOT, env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True)


def start_worker(scheduler_file: Path, name: str, log: Path) -> subprocess.Popen:
    """A one-thread worker without a nanny (killing it kills the worker, not a restartable child)."""
    return start(["worker", "--scheduler-file", str(scheduler_file), "--nthreads", "1", "--no-nanny",
                  "--no-dashboard", "--name", name, "--host", "127.0.0.1"], log)


def wait_workers(address: str, count: int) -> dict[str, str]:
    """Wait until ``count`` workers have joined; their names -> addresses."""
    from dask.distributed import Client

    with Client(address, timeout="20s") as client:
        client.wait_for_workers(count, timeout=60)
        return {w["name"]: a for a, w in client.scheduler_info()["workers"].items()}


def unused_address() -> str:
    """A loopback address nothing listens on (a port the system handed out and took back)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


def stop(procs: list[subprocess.Popen]) -> None:
    for proc in reversed(procs):
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()


class DaskCluster:
    """A ``dask scheduler`` and ``workers`` one-thread workers, as a context manager: ``address``,
    ``file`` (its scheduler file), ``folder`` (the logs) and ``procs`` (a worker a caller appends is
    stopped with the cluster). ``lose_scheduler`` and ``restart`` play an operator's bad day."""

    def __init__(self, folder: Path, workers: int = 2):
        self.folder, self.workers = folder, workers
        self.file = folder / "scheduler.json"
        self.procs: list[subprocess.Popen] = []
        self.address = ""
        self.starts = 0

    def __enter__(self) -> DaskCluster:
        try:
            self._start("0")
        except BaseException:
            stop(self.procs)
            raise
        return self

    def _start(self, port: str) -> None:
        self.starts += 1
        self.file.unlink(missing_ok=True)
        self.procs.append(start(["scheduler", "--host", "127.0.0.1", "--port", port, "--dashboard-address",
                                 ":0", "--scheduler-file", str(self.file)],
                                self.folder / f"scheduler{self.starts}.log"))
        deadline = time.monotonic() + 60
        while not self.file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.procs += [start_worker(self.file, f"w{k}", self.folder / f"w{k}-{self.starts}.log")
                       for k in range(1, self.workers + 1)]
        self.address = json.loads(self.file.read_text())["address"]
        if self.workers:
            wait_workers(self.address, self.workers)

    def lose_scheduler(self) -> None:
        """Kill the scheduler at once (SIGKILL): its workers, without one, close themselves."""
        scheduler = self.procs[0]
        scheduler.kill()
        scheduler.wait(timeout=30)
        stop(self.procs)
        self.procs.clear()

    def restart(self) -> None:
        """A new scheduler on the address of the one lost (``lose_scheduler``), with new workers."""
        self._start(self.address.rpartition(":")[2])

    def __exit__(self, *exc: object) -> None:
        # The workers first, while their scheduler still answers: a worker whose scheduler went first
        # kept trying to reach it until ``stop`` killed it, 5 s each (10 s of a module's teardown).
        schedulers = [proc for proc in self.procs if proc.args[1] == "scheduler"]
        stop([proc for proc in self.procs if proc not in schedulers])
        stop(schedulers)

    def as_dict(self) -> dict[str, Any]:
        return {"address": self.address, "file": self.file, "folder": self.folder, "procs": self.procs}


def cluster_fixture(workers: int = 2) -> Any:
    """A module-scoped pytest fixture ``cluster``: a ``DaskCluster`` of ``workers`` workers, as a dict
    (``DaskCluster.as_dict``)."""
    import pytest

    @pytest.fixture(scope="module")
    def cluster(tmp_path_factory):
        with DaskCluster(tmp_path_factory.mktemp("dask"), workers) as running:
            yield running.as_dict()

    return cluster


def noted(log: Path, within: float = 60.0) -> list[int]:
    """The pids ``log`` holds once a task has noted its start there (``counted``, ``gated``): waits for a
    whole line, not for the file, which exists, empty, from the task's ``open`` to its ``write``."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        text = log.read_text() if log.exists() else ""
        if text.endswith("\n"):
            return [int(pid) for pid in text.split()]
        time.sleep(0.05)
    raise AssertionError(f"no task noted its start in {log} within {within:g} s")


def counted(log: str, value: float, seconds: float) -> dict[str, Any]:
    """A task that notes each time it runs (its worker's pid, a line in ``log``), waits, and returns.

    For the tests of what runs where and how often; importable by the workers (``start``).
    """
    with open(log, "a") as out:
        out.write(f"{os.getpid()}\n")
    time.sleep(seconds)
    return {"value": value, "pid": os.getpid()}


def gated(log: str, value: float, gate: str) -> dict[str, Any]:
    """A task that notes each time it starts (its worker's pid, a line in ``log``) and runs until the file
    ``gate`` exists: a run as heavy as a test needs, ended by the test when it chooses."""
    with open(log, "a") as out:
        out.write(f"{os.getpid()}\n")
    while not os.path.exists(gate):
        time.sleep(0.05)
    return {"value": value, "pid": os.getpid()}


_REPLICA = """
import json, sys, threading
from support import cluster
from polarize.serve.runner import call_with_timeout, queue_notices

said = threading.Lock()


def say(**event):
    with said:
        print(json.dumps(event), flush=True)


def run(name, function, args, timeout):
    try:
        with queue_notices(lambda place: say(name=name, place=place)):
            answer = call_with_timeout(getattr(cluster, function), *args, timeout=timeout)
        say(name=name, value=answer["value"])
    except Exception as exc:
        say(name=name, error=f"{type(exc).__name__}: {exc}")


for line in sys.stdin:
    threading.Thread(target=run, kwargs=json.loads(line)).start()
"""


class Replica:
    """A process standing for one replica of the app: its own client of the cluster at ``address``, running
    the runs it is sent (``run``) each in a thread of its own, as a server's sessions do. ``events`` are
    what its runs said, in order: ``{"name", "place"}`` while one waits, then ``{"name", "value"}`` or
    ``{"name", "error"}``."""

    def __init__(self, address: str):
        import threading

        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
               "POLARIZE_SCHEDULER": address}
        self.proc = subprocess.Popen([sys.executable, "-c", _REPLICA], env=env, cwd=ROOT, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
        self.events: list[dict[str, Any]] = []
        self.heard = threading.Condition()
        threading.Thread(target=self._listen, daemon=True).start()

    def _listen(self) -> None:
        for line in self.proc.stdout:
            with self.heard:
                self.events.append(json.loads(line))
                self.heard.notify_all()

    def run(self, name: str, function: str, *args: Any, timeout: float = 120.0) -> None:
        """Start ``support.cluster.<function>(*args)`` through ``call_with_timeout``, told ``name``."""
        self.proc.stdin.write(json.dumps({"name": name, "function": function, "args": args,
                                          "timeout": timeout}) + "\n")
        self.proc.stdin.flush()

    def said(self, name: str) -> list[dict[str, Any]]:
        with self.heard:
            return [event for event in self.events if event["name"] == name]

    def wait(self, name: str, key: str, seconds: float = 120.0) -> Any:
        """What run ``name`` said under ``key`` (``place``, ``value``, ``error``) first; AssertionError
        after ``seconds`` without it."""
        deadline = time.monotonic() + seconds
        with self.heard:
            while True:
                found = [event[key] for event in self.events if event["name"] == name and key in event]
                if found:
                    return found[0]
                assert time.monotonic() < deadline, f"{name} said no {key} in {seconds} s: {self.events}"
                self.heard.wait(min(1.0, deadline - time.monotonic()))

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.terminate()
            self.proc.wait(timeout=30)
