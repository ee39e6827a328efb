"""nginx in front of app replicas, rendered from the shipped ``deploy/nginx/polarize.conf.template``.

``NginxProxy`` renders the template as the nginx image's entrypoint does (only its own variables
replaced, with the image's values: ``proxy_env``) and runs the system's nginx on a free port of
127.0.0.1, its files in a folder of its own, with the connections a worker of the shipped
``deploy/nginx/nginx.conf`` has; ``access`` reads its access log (``log_format polarize``): which
replica served what.
"""

from __future__ import annotations

import os
import re
import shutil
import string
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from support.browser import AppServer, free_port
from support.cluster import DaskCluster

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "deploy" / "nginx" / "polarize.conf.template"
MAIN_CONF = ROOT / "deploy" / "nginx" / "nginx.conf"
IMAGE = ROOT / "deploy" / "nginx" / "Dockerfile"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
_LINE = re.compile(r'"(?P<method>\S+) (?P<path>\S+) [^"]*" (?P<status>\d+) \d+ '
                   r'upstream="(?P<upstream>[^"]*)" affinity=(?P<affinity>\S+)')


def streamlit_static() -> Path:
    """The installed Streamlit's static files (what the proxy image copies from the app image)."""
    import streamlit

    return Path(streamlit.__file__).parent / "static"


def proxy_env() -> dict[str, str]:
    """The variables the proxy image sets (its Dockerfile's ``ENV``)."""
    (line,) = re.findall(r"^ENV (.+)$", IMAGE.read_text(), flags=re.M)
    return dict(pair.split("=", 1) for pair in line.split())


def worker_connections() -> int:
    """The connections a worker of the shipped main configuration may hold."""
    return int(re.search(r"worker_connections\s+(\d+);", MAIN_CONF.read_text())[1])


def render(servers: list[str], listen: int, access_log: Path) -> str:
    """The template with the variables the compose file's proxy is given (the rest the image's)."""
    lines = " ".join(f"server {s} max_fails=1 fail_timeout=10s;" for s in servers)
    values = {**proxy_env(), "APP_SERVERS": lines, "LISTEN": f"127.0.0.1:{listen}",
              "STATIC_ROOT": str(streamlit_static()), "CACHE_ROOT": str(access_log.parent / "cache"),
              "ACCESS_LOG": str(access_log)}
    text = string.Template(TEMPLATE.read_text()).safe_substitute(values)  # nginx's $vars left alone
    assert "${" not in text, "a variable of the template was not given"
    return text


@dataclass(frozen=True)
class Request:
    """One line of the access log."""

    method: str
    path: str
    status: int
    upstream: str
    """The replica that answered (the last one tried), or "-" for what the proxy served itself."""
    affinity: str
    tried: tuple[str, ...] = ()
    """Every replica asked, in order (the proxy asks the next after an error or, for a session's
    downloads and uploads, a 404)."""


class NginxProxy:
    """The system's nginx serving the shipped template in front of ``servers`` (``host:port``)."""

    def __init__(self, servers: list[str]):
        self.folder = Path(tempfile.mkdtemp(prefix="polarize-nginx-"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.access_log = self.folder / "access.log"
        (self.folder / "polarize.conf").write_text(render(servers, self.port, self.access_log))
        user = "user root;" if os.geteuid() == 0 else ""  # its workers read the venv's static files
        temps = "\n".join(f"{kind}_temp_path {self.folder / kind};"
                          for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        (self.folder / "nginx.conf").write_text(f"""{user}
worker_processes 1;
daemon off;
pid {self.folder / 'nginx.pid'};
error_log {self.folder / 'error.log'} info;
events {{ worker_connections {worker_connections()}; }}
http {{
    include /etc/nginx/mime.types;
    {temps}
    include {self.folder / 'polarize.conf'};
}}
""")
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> NginxProxy:
        command = [NGINX, "-p", str(self.folder), "-c", str(self.folder / "nginx.conf")]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True,
                                        stderr=(self.folder / "stderr").open("w"))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx exited: {(self.folder / 'stderr').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=5):
                    return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("nginx did not answer within 30 s")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        shutil.rmtree(self.folder, ignore_errors=True)

    def access(self) -> list[Request]:
        """Every request the proxy has logged so far."""
        text = self.access_log.read_text() if self.access_log.exists() else ""
        return [Request(m["method"], m["path"], int(m["status"]), upstream=m["upstream"].split(", ")[-1],
                        affinity=m["affinity"], tried=tuple(m["upstream"].split(", ")))
                for m in _LINE.finditer(text)]

    def replica_of(self, cookie: str) -> str | None:
        """The replica that last answered a request carrying affinity ``cookie`` (nginx logs a request
        when it ends: a websocket when it closes, the page's other requests at once)."""
        answered = [r.upstream for r in self.access() if r.affinity == cookie and r.upstream != "-"]
        return answered[-1] if answered else None


def affinity_cookie(url: str) -> str:
    """The affinity cookie the proxy gives a first request of ``url`` (as a browser's first visit gets it)."""
    with urllib.request.urlopen(url, timeout=30) as reply:
        cookies = reply.headers.get_all("Set-Cookie") or []
    (value,) = [c.split(";")[0].split("=", 1)[1] for c in cookies if c.startswith("polarize_replica=")]
    return value


SECRET = "polarize-test-cookie-secret-shared-by-the-replicas"
"""The cookie secret every replica shares (deploy/compose.yaml's POLARIZE_COOKIE_SECRET)."""


class Layout:
    """``deploy/``'s layout as processes: a Dask cluster, ``replicas`` app servers whose runs go to it
    (one cookie secret), and nginx in front of them. ``proxy``, ``replicas`` (``host:port`` -> server)."""

    def __init__(self, folder: Path, replicas: int = 2, workers: int = 1, env: dict[str, str] | None = None):
        self.cluster = DaskCluster(folder, workers)
        self.count, self.env = replicas, env or {}
        self.proxy: NginxProxy | None = None
        self.replicas: dict[str, AppServer] = {}

    def __enter__(self) -> Layout:
        self.cluster.__enter__()
        try:
            env = {"POLARIZE_SCHEDULER": self.cluster.address, "STREAMLIT_SERVER_COOKIE_SECRET": SECRET,
                   **self.env}
            for _ in range(self.count):
                server = AppServer(env=env).__enter__()
                self.replicas[f"127.0.0.1:{server.port}"] = server
            self.proxy = NginxProxy(list(self.replicas)).__enter__()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proxy is not None:
            self.proxy.__exit__(None, None, None)
        for server in self.replicas.values():
            server.__exit__(None, None, None)
        self.cluster.__exit__(None, None, None)
