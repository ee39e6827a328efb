"""The hosted demo's files: the Dockerfile serves the app, and the deploy files agree with each other.

There is no Docker daemon here, so ``test_the_dockerfile_environment_serves_the_app``
rebuilds what the Dockerfile builds, read from the Dockerfile itself: its ``COPY`` lines
stage the same files (read-only, as the image's app folder is to its user), its dependency
layer is a virtual environment with ``requirements.lock`` installed with its hashes (kept
between runs under ``test-artifacts/``, as Docker keeps that layer, and rebuilt whenever the
file changes), the package goes in as a freshly built wheel, and the server starts with the
image's ``CMD`` (on a free local port). It then asks the ``HEALTHCHECK`` URL and opens one
page over the app's websocket.

``requirements.lock`` and ``locks/`` are made from ``pyproject.toml`` by ``bash locks/make`` (uv);
``test_the_lock_file_is_in_step`` checks, without a network, that it still is. The app's user cannot
rename the code's folder.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from support.browser import ARTIFACTS, free_port  # noqa: E402
from support.stream_client import open_page  # noqa: E402


@dataclass
class Image:
    """What the Dockerfile does, as far as the app is concerned."""

    copies: list[tuple[list[str], str, str]] = field(default_factory=list)  # (sources, dest, workdir)
    runs: list[str] = field(default_factory=list)
    workdir: str = "/"
    expose: int = 0
    health: str = ""
    cmd: list[str] = field(default_factory=list)


def read_dockerfile(path: Path = ROOT / "Dockerfile") -> Image:
    image = Image()
    text = re.sub(r"\\\n\s*", " ", path.read_text())
    for line in text.splitlines():
        word, _, rest = line.strip().partition(" ")
        if word == "COPY" and "--from" not in rest:
            *sources, dest = [part for part in rest.split() if not part.startswith("--")]
            image.copies.append((sources, dest, image.workdir))
        elif word == "RUN":
            image.runs.append(rest.strip())
        elif word == "WORKDIR":
            image.workdir = rest.strip()
        elif word == "EXPOSE":
            image.expose = int(rest.split("/")[0])
        elif word == "HEALTHCHECK":
            (image.health,) = re.findall(r"https?://[^'\" ]+", rest)
        elif word == "CMD":
            image.cmd = json.loads(rest)
    return image


def front_matter() -> dict[str, str]:
    """The README's YAML front matter (Hugging Face Spaces reads it), as flat key: value pairs."""
    head = (ROOT / "README.md").read_text().split("---\n")
    assert head[0] == "", "README.md must open with the Spaces front matter"
    return dict(line.split(": ", 1) for line in head[1].strip().splitlines())


def option(cmd: list[str], name: str) -> str:
    (value,) = [arg.split("=", 1)[1] for arg in cmd if arg.startswith(f"--{name}=")]
    return value


def test_the_deploy_files_agree():
    image = read_dockerfile()
    assert image.cmd[:3] == ["streamlit", "run", "server.py"]
    assert int(option(image.cmd, "server.port")) == image.expose == 7860
    assert image.health == f"http://127.0.0.1:{image.expose}/_stcore/health"
    spaces = front_matter()
    assert spaces["sdk"] == "docker" and int(spaces["app_port"]) == image.expose
    assert any(run.startswith("useradd") for run in image.runs)
    assert "\nUSER app\n" in (ROOT / "Dockerfile").read_text()  # not root


def _bases(dockerfile: Path) -> list[str]:
    return [line.split()[1] for line in dockerfile.read_text().splitlines() if line.startswith("FROM ")]


def test_the_base_image_is_pinned_by_digest():
    (base,) = _bases(ROOT / "Dockerfile")
    assert re.fullmatch(r"python:3\.11-slim@sha256:[0-9a-f]{64}", base), base


def test_the_proxy_images_bases_are_pinned_by_digest_too():
    """Issue 43: the proxy's nginx base was a moving tag where the app's image is pinned."""
    streamlit, proxy = _bases(ROOT / "deploy" / "nginx" / "Dockerfile")
    assert streamlit == _bases(ROOT / "Dockerfile")[0]  # the app's own Streamlit files
    assert re.fullmatch(r"nginx:[\w.-]+@sha256:[0-9a-f]{64}", proxy), proxy


def test_the_app_code_belongs_to_root_and_is_read_only_to_its_user():
    text = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())
    image = read_dockerfile()
    assert not [line for line in text.splitlines() if line.startswith("COPY") and "--chown" in line]
    user = text.index("\nUSER app\n")
    code = image.workdir
    assert f"RUN chmod -R u=rwX,go=rX {code}" in text[:user]  # no write bit for others, whatever the checkout
    copies = [m.start() for m in re.finditer(r"^COPY ", text, flags=re.M)]
    assert copies and max(copies) < user  # all the code is in place, as root, before the user takes over


LOCKS = {"EXPORT": "export", "SINKS": "sinks", "CLUSTER": "sweep"}
"""The Dockerfile's optional build args and the extra each installs (``locks/EXTRA.lock``)."""

IMAGE_MARKERS = {"python_version": "3.11", "python_full_version": "3.11.0", "sys_platform": "linux",
                 "platform_system": "Linux", "os_name": "posix", "implementation_name": "cpython",
                 "platform_machine": "x86_64", "platform_python_implementation": "CPython", "extra": ""}


def _locked(path: Path = ROOT / "requirements.lock") -> dict[str, tuple[str, list[str]]]:
    """A lock file: name -> (version, hashes), of the entries that apply to the image's Python."""
    from packaging.markers import Marker

    entries: dict[str, tuple[str, list[str]]] = {}
    text = re.sub(r"\\\n\s*", " ", path.read_text())
    for line in text.splitlines():
        if line and not line.startswith(("#", " ")):
            spec, *hashes = line.split(" --hash=")
            pin, _, marker = spec.partition(";")
            if marker.strip() and not Marker(marker.strip()).evaluate(IMAGE_MARKERS):
                continue
            name, version = pin.strip().split("==")
            entries[name.lower().replace("_", "-")] = (version, [h.strip() for h in hashes])
    return entries


def _closed(locked: dict[str, tuple[str, list[str]]]) -> None:
    """Every requirement of every locked package installed here is locked too."""
    from packaging.requirements import Requirement

    for name in locked:
        try:
            needs = metadata.requires(name) or []
        except metadata.PackageNotFoundError:  # not installed here: its own needs cannot be read offline
            continue
        for requirement in map(Requirement, needs):
            if requirement.marker is None or requirement.marker.evaluate(IMAGE_MARKERS):
                assert requirement.name.lower().replace("_", "-") in locked, f"{name} needs {requirement}"


def _hashed(locked: dict[str, tuple[str, list[str]]]) -> bool:
    return bool(locked) and all(hashes and all(h.startswith("sha256:") for h in hashes)
                                for _, hashes in locked.values())


def test_the_lock_file_is_in_step():
    """Every dependency of ``pyproject.toml`` is locked within its range, at ``requirements.txt``'s pin,
    with hashes; and so is every requirement of every locked package (the lock is closed)."""
    import tomllib

    from packaging.requirements import Requirement

    locked = _locked()
    assert _hashed(locked)
    pins = dict(line.split("==") for line in (ROOT / "requirements.txt").read_text().splitlines()
                if line and not line.startswith("#"))
    for raw in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        wanted = Requirement(raw)
        version, _ = locked[wanted.name.lower()]
        assert wanted.specifier.contains(version), f"{wanted} is locked at {version}: run bash locks/make"
        assert pins.get(wanted.name) in (None, version), f"requirements.txt pins {wanted.name} otherwise"
    _closed(locked)


@pytest.mark.parametrize("extra", sorted(LOCKS.values()))
def test_each_extras_lock_holds_it_at_the_apps_versions(extra):
    """``locks/EXTRA.lock``: hashed, closed, the extra's requirements within their ranges, and every
    package the app's lock holds at the app's version (the image's layers agree)."""
    from packaging.requirements import Requirement

    locked, app = _locked(ROOT / "locks" / f"{extra}.lock"), _locked()
    assert _hashed(locked)
    assert {name: locked.get(name, (None,))[0] for name in app} == {name: v for name, (v, _) in app.items()}
    wants = [r for r in map(Requirement, metadata.requires("polarize") or [])
             if r.marker is not None and r.marker.evaluate({**IMAGE_MARKERS, "extra": extra})]
    assert wants, f"pyproject.toml has no extra {extra}"
    for wanted in wants:
        version, _ = locked[wanted.name.lower()]
        assert wanted.specifier.contains(version), f"{wanted} is locked at {version}: run bash locks/make"
    _closed(locked)


def test_the_build_backend_is_locked():
    import tomllib

    from packaging.requirements import Requirement

    locked = _locked(ROOT / "locks" / "build.lock")
    assert _hashed(locked)
    for raw in tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]:
        wanted = Requirement(raw)
        assert wanted.specifier.contains(locked[wanted.name.lower()][0]), f"{wanted}: run bash locks/make"


def test_the_image_installs_only_locked_hashed_files_and_fetches_no_build_backend():
    image = read_dockerfile()
    installs = [part.strip() for run in image.runs for part in re.split(r"&&|;", run)
                if "pip install" in part or "pip wheel" in part]
    for step in installs:
        command = step[step.index("pip "):]
        if command.startswith("pip install --no-deps /tmp/wheels/"):
            continue  # the wheel just built here
        if command.startswith("pip wheel"):
            assert "--no-build-isolation" in command and "--no-deps" in command, command
            continue
        locked = r"pip install --require-hashes -r /tmp/src/(requirements|locks/\w+)\.lock"
        assert re.fullmatch(locked, command), command
    runs = " ".join(image.runs)
    for arg, extra in LOCKS.items():
        assert f"ARG {arg}=0" in (ROOT / "Dockerfile").read_text()  # off by default: a small image
        assert f'if [ "${arg}" = "1" ]; then pip install --require-hashes -r /tmp/src/locks/{extra}.lock' \
            in runs
    assert any(step.endswith("-r /tmp/src/locks/build.lock") for step in installs)


def test_requirements_pin_the_versions_the_tests_run_with():
    pins = [line.split("==") for line in (ROOT / "requirements.txt").read_text().splitlines()
            if line and not line.startswith("#")]
    assert {name for name, _ in pins} >= {"numpy", "scipy", "plotly", "streamlit", "threadpoolctl"}
    assert {name: metadata.version(name) for name, _ in pins} == dict(pins)


def _stage(image: Image, root: Path) -> None:
    """Copy what the Dockerfile copies, to the same places under ``root``."""
    for sources, dest, workdir in image.copies:
        target = root / (dest if dest.startswith("/") else f"{workdir}/{dest}").lstrip("/")
        for source in sources:
            origin = ROOT / source
            into = target / origin.name if dest.endswith("/") else target
            into.parent.mkdir(parents=True, exist_ok=True)
            if origin.is_dir():
                shutil.copytree(origin, into, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(origin, into)


def _dependency_layer(*locks: Path) -> Path:
    """A venv with ``locks`` installed in order (hashes checked), reused while the files are unchanged.

    Installed without byte-compiling every module (``--no-compile``): the server compiles those it
    imports as it starts. Byte-compiling the locked packages whole was two thirds of the install (59 s
    against 20 s, 21 against 8 CPU-s) and half of the Dockerfile test on a clean clone (64 s against 34
    to 37 s; shared 2 cores at a load of 4 to 9); what is installed, and from which hashes, is the same."""
    digest = hashlib.sha1(b"".join(lock.read_bytes() for lock in locks)).hexdigest()[:12]
    venv = ARTIFACTS / f"deploy-venv-{digest}"
    if not (venv / "bin" / "streamlit").exists():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        for lock in locks:
            subprocess.run([venv / "bin" / "pip", "install", "-q", "--no-compile", "--require-hashes", "-r",
                            lock], check=True)
    return venv


def _serve(cmd: list[str], cwd: Path, venv: Path, port: int) -> subprocess.Popen[bytes]:
    cmd = [arg if not arg.startswith(("--server.port=", "--server.address=")) else
           f"{arg.split('=')[0]}={port if 'port' in arg else '127.0.0.1'}" for arg in cmd]
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(cwd), "LANG": "C.UTF-8"}
    with open(ARTIFACTS / "deploy-server.log", "wb") as log:
        return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _healthy(url: str, process: subprocess.Popen[bytes], most: float = 60.0) -> str:
    end = time.monotonic() + most
    while time.monotonic() < end and process.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                return reply.read().decode()
        except OSError:
            time.sleep(0.25)
    return f"no answer (server exit code {process.poll()})"


@pytest.mark.slow
def test_the_dockerfile_environment_serves_the_app(tmp_path):
    image = read_dockerfile()
    install = ("pip install --require-hashes -r /tmp/src/requirements.lock",
               "pip install --require-hashes -r /tmp/src/locks/build.lock",
               "pip wheel --no-deps --no-build-isolation -w /tmp/wheels /tmp/src",
               "pip install --no-deps /tmp/wheels/*.whl")
    assert all(any(step in run for run in image.runs) for step in install), "the Dockerfile changed"
    ARTIFACTS.mkdir(exist_ok=True)
    _stage(image, tmp_path)
    venv = _dependency_layer(tmp_path / "tmp/src/requirements.lock", tmp_path / "tmp/src/locks/build.lock")
    pip = venv / "bin" / "pip"
    # Without build isolation, as the image builds it: only the locked backend, nothing fetched.
    subprocess.run([pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", tmp_path / "wheels",
                    tmp_path / "tmp/src"], check=True)
    (wheel,) = (tmp_path / "wheels").glob("polarize-*.whl")
    subprocess.run([pip, "install", "-q", "--no-deps", "--force-reinstall", wheel], check=True)
    subprocess.run([pip, "check"], check=True)  # the pins satisfy the package's own requirements
    app = tmp_path / image.workdir.lstrip("/")
    assert not (app / "polarize").exists()  # the app must import the installed wheel
    (publish,) = [run for run in image.runs if "publish()" in run]  # plotly.js into static/ (ui/plotly_js.py)
    subprocess.run(publish, shell=True, cwd=app, env={"PATH": f"{venv / 'bin'}:/usr/bin:/bin"}, check=True)
    assert (app / "static").is_dir()
    for path in (app, *app.rglob("*")):  # read-only, as the image's user finds it
        path.chmod(0o555 if path.is_dir() else 0o444)
    port = free_port()
    server = _serve(image.cmd, app, venv, port)
    try:
        assert _healthy(image.health.replace(str(image.expose), str(port)), server) == "ok"
        load = asyncio.run(open_page(f"http://127.0.0.1:{port}", "/?seed=3", timeout=90))
        # The Explorer sends one figure: the dashboard.
        assert load.errors == [] and load.figures == 1 and load.finished is not None
        from ui.plotly_js import ADDRESS, PACKED  # the image's server sends plotly.js as it was packed
        asked = urllib.request.Request(f"http://127.0.0.1:{port}/{ADDRESS}",
                                       headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(asked, timeout=60) as reply:
            assert reply.headers["Content-Encoding"] == "gzip"
            assert reply.read() == (app / "static" / PACKED).read_bytes()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=15)


@pytest.mark.slow
def test_the_page_icon_is_served_by_the_app_itself(monkeypatch, tmp_path):
    """A ``:material/...:`` page icon makes the browser fetch the tab's icon from fonts.gstatic.com."""
    import streamlit
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("POLARIZE_DATA_DIR", str(tmp_path))
    asked: list[dict] = []
    real = streamlit.set_page_config
    monkeypatch.setattr(streamlit, "set_page_config", lambda **kw: (asked.append(kw), real(**kw))[1])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["horizon"] = "1"
    at.run()
    assert not at.exception and asked, "the app sets its page config"
    icon = Path(asked[0]["page_icon"])
    assert icon.is_file() and icon.suffix == ".png" and ROOT / "ui" in icon.parents  # COPY ui carries it
    assert icon.read_bytes().startswith(b"\x89PNG")


# ---- the image: the code's folder out of the app user's reach ---------------------------------------


def test_the_app_user_cannot_rename_the_code_folder():
    """The code's folder lies in a folder of root's, not in the app user's home (which it could rename)."""
    import re

    text = re.sub(r"\\\n\s*", " ", (Path(__file__).resolve().parents[1] / "Dockerfile").read_text())
    (workdir,) = re.findall(r"^WORKDIR (\S+)$", text, flags=re.M)
    home = re.search(r"useradd .*--home-dir (\S+)", text)
    home = home.group(1) if home else "/home/app"
    assert not (workdir + "/").startswith(home.rstrip("/") + "/"), (workdir, home)
    assert str(Path(workdir).parent) in ("/", "/opt", "/srv", "/usr/local")
