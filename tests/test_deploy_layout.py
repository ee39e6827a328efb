"""The hosted layout's files (``deploy/``) agree with each other, with the image and with the code.

``tests/browser/test_deploy_proxy.py`` runs this layout as real processes; these checks hold the parts it
cannot start here (Docker Compose, Kubernetes) to the same names, ports and versions.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

from polarize.env import SCHEDULER, scheduler_address  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
TEMPLATE = (DEPLOY / "nginx" / "polarize.conf.template").read_text()
COOKIE = re.search(r"map \$cookie_(\w+) \$polarize_affinity", TEMPLATE)[1]


def _compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def _manifests() -> list[dict]:
    return list(yaml.safe_load_all((DEPLOY / "kubernetes" / "polarize.yaml").read_text()))


def test_the_template_sets_the_cookie_it_hashes_on():
    assert f'add_header Set-Cookie "{COOKIE}=$polarize_affinity;' in TEMPLATE
    assert "hash $polarize_affinity consistent;" in TEMPLATE
    assert set(re.findall(r"\$\{(\w+)\}", TEMPLATE)) == {"APP_SERVERS", "LISTEN", "STATIC_ROOT", "CACHE_ROOT",
                                                       "ACCESS_LOG", "CONNECTIONS_PER_CLIENT"}


def _image_env() -> dict[str, str]:
    (line,) = re.findall(r"^ENV (.+)$", (DEPLOY / "nginx" / "Dockerfile").read_text(), flags=re.M)
    return dict(pair.split("=", 1) for pair in line.split())


def test_the_proxy_has_room_for_a_hall_and_limits_each_client():
    """Issue 43: the image's 1,024 connections a worker were filled by one address's idle websockets.
    A student holds a websocket (two connections at the proxy: theirs and the replica's) and a few
    requests while a page loads; a hall of 1,000 on a proxy of one core."""
    main, image = (DEPLOY / "nginx" / "nginx.conf").read_text(), (DEPLOY / "nginx" / "Dockerfile").read_text()
    assert "COPY deploy/nginx/nginx.conf /etc/nginx/nginx.conf" in image
    assert "include /etc/nginx/conf.d/*.conf;" in main  # where the image renders the template
    connections = int(re.search(r"worker_connections\s+(\d+);", main)[1])
    assert connections >= 1000 * 3
    assert int(re.search(r"worker_rlimit_nofile\s+(\d+);", main)[1]) >= 2 * connections
    per_client = int(_image_env()["CONNECTIONS_PER_CLIENT"])
    assert "limit_conn polarize_per_client ${CONNECTIONS_PER_CLIENT};" in TEMPLATE
    assert 8 <= per_client <= connections // 100  # a few tabs of one person; a hundred people fill nothing
    kinds = {doc["kind"] + "/" + doc["metadata"]["name"]: doc for doc in _manifests()}
    ingress = kinds["Ingress/polarize"]["metadata"]["annotations"]
    assert ingress["nginx.ingress.kubernetes.io/limit-connections"] == str(per_client)


def test_compose_wires_the_replicas_to_the_scheduler_and_the_proxy_to_the_replicas():
    services = _compose()["services"]
    port = re.search(r"EXPOSE (\d+)", (ROOT / "Dockerfile").read_text())[1]
    assert f"server app:{port} " in services["proxy"]["environment"]["APP_SERVERS"]
    address = scheduler_address(services["app"]["environment"][SCHEDULER])
    command = services["scheduler"]["command"]
    assert address.endswith(":" + command[command.index("--port") + 1])
    assert "tcp://scheduler:" in services["worker"]["command"][2]
    assert "STREAMLIT_SERVER_COOKIE_SECRET" in services["app"]["environment"]
    proxy_image = (DEPLOY / "nginx" / "Dockerfile").read_text()
    assert "COPY deploy/nginx/polarize.conf.template /etc/nginx/templates/" in proxy_image
    assert "--require-hashes -r /tmp/requirements.lock" in proxy_image  # the app's own Streamlit


def test_kubernetes_keeps_sessions_on_their_pod_and_reaches_the_chart_scheduler():
    kinds = {doc["kind"] + "/" + doc["metadata"]["name"]: doc for doc in _manifests()}
    ingress = kinds["Ingress/polarize"]["metadata"]["annotations"]
    assert ingress["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert ingress["nginx.ingress.kubernetes.io/session-cookie-name"] == COOKIE
    (app,) = kinds["Deployment/polarize"]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in app["env"]}
    assert scheduler_address(env[SCHEDULER]["value"]) == "tcp://dask-scheduler:8786"  # release "dask"
    paths = {p["path"]: p["backend"]["service"]["name"]
             for p in kinds["Ingress/polarize"]["spec"]["rules"][0]["http"]["paths"]}
    assert paths == {"/static/": "polarize-static", "/": "polarize"}


def test_the_cluster_image_runs_the_dask_the_tests_run():
    text = (ROOT / "Dockerfile").read_text()
    assert "ARG CLUSTER=0" in text and "-r /tmp/src/locks/sweep.lock" in text
    lock = (ROOT / "locks" / "sweep.lock").read_text()
    for name in ("dask", "distributed"):
        assert f"\n{name}=={metadata.version(name)} " in lock


def test_kubernetes_asks_another_pod_for_a_session_file_as_the_proxy_does():
    """A session's downloads and uploads are retried on another pod after a 404 on Kubernetes too,
    on exactly the paths the proxy template retries, with the same affinity and limits as the rest."""
    kinds = {doc["kind"] + "/" + doc["metadata"]["name"]: doc for doc in _manifests()}
    files, main = kinds["Ingress/polarize-session-files"], kinds["Ingress/polarize"]
    notes = files["metadata"]["annotations"]
    retried = set(notes["nginx.ingress.kubernetes.io/proxy-next-upstream"].split())
    (template_rule,) = re.findall(r"proxy_next_upstream ([^;]*http_404[^;]*);", TEMPLATE)
    assert retried == set(template_rule.split())
    (location,) = re.findall(r"location ~ \^/\(([^)]*)\)/", TEMPLATE)
    rules = files["spec"]["rules"][0]["http"]["paths"]
    assert {p["path"] for p in rules} == {f"/{name}/" for name in location.split("|")}
    assert all(p["backend"]["service"]["name"] == "polarize" for p in rules)
    annotations = main["metadata"]["annotations"]
    kept = {k: v for k, v in annotations.items() if "timeout" not in k}
    assert kept.items() <= notes.items()  # the same cookie, body size and per-client limit
    assert "http_404" not in annotations.get("nginx.ingress.kubernetes.io/proxy-next-upstream", "")
