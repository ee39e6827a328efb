"""plotly.js, the app's own copy (``ui.plotly_js``): published once with a packed copy, and served by the
app's server's route packed as it is (``Content-Encoding: gzip``) or plain, whatever the folder holds.

The route is called here as Starlette calls it (an ASGI scope); tests/browser/test_browser.py fetches it
from the real server and watches a browser load it."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from support.asgi import ask

from polarize.plots.display import Display
from polarize.web.pages import PAGES
from ui import charts, plotly_js

SHIPPED = plotly_js.SOURCE.read_bytes()
"""What the app serves: the vendored cartesian bundle while it is the plotly package's version."""
ROOT = Path(__file__).resolve().parents[1]
FULL = (resources.files("plotly") / "package_data" / "plotly.min.js").read_bytes()


def test_plotly_js_is_published_with_a_copy_packed_once(tmp_path):
    """``publish``: plotly.js as the app serves it (``SOURCE``), and beside it the same bytes gzipped once
    (``PACKED``, what the route sends); a second call writes nothing again."""
    written = plotly_js.publish(tmp_path)
    packed = tmp_path / plotly_js.PACKED
    assert written == tmp_path / plotly_js.PLOTLY_JS and written.read_bytes() == SHIPPED
    assert plotly_js.ADDRESS == f"app/static/{plotly_js.PLOTLY_JS}"
    assert plotly_js.PACKED == f"{plotly_js.PLOTLY_JS}.gz"
    assert gzip.decompress(packed.read_bytes()) == SHIPPED and len(packed.read_bytes()) < len(SHIPPED) / 2
    for path in (written, packed):
        path.touch()
    touched = {path: path.stat().st_mtime_ns for path in (written, packed)}
    assert plotly_js.publish(tmp_path) == written
    assert {path: path.stat().st_mtime_ns for path in (written, packed)} == touched  # not written again
    packed.unlink()  # a folder published before there was a packed copy gets one
    plotly_js.publish(tmp_path)
    assert gzip.decompress(packed.read_bytes()) == SHIPPED
    head = json.loads(charts.payload({"data": [], "layout": {}, "frames": []}).split(b"\n", 1)[0])
    assert head["plotly"] == plotly_js.ADDRESS


def test_the_cartesian_bundle_is_served_while_it_is_the_plotly_package_s_version(tmp_path):
    """The vendored bundle is plotly.js's cartesian one at the version the plotly package ships (the
    figures' schema), a third of the full bundle's size; a bundle of another version (or none, or a file
    without its banner) is not served: the package's full plotly.js is, under its own name."""
    assert plotly_js.vendored_version() == plotly_js.VERSION and plotly_js.CARTESIAN
    assert plotly_js.SOURCE == plotly_js.VENDORED
    assert plotly_js.PLOTLY_JS == f"plotly-cartesian-{plotly_js.VERSION}.min.js"
    assert len(SHIPPED) < len(FULL) / 3 and SHIPPED.startswith(b"/**\n* plotly.js (cartesian - minified) v")
    other = tmp_path / "other.min.js"
    other.write_bytes(SHIPPED.replace(plotly_js.VERSION.encode(), b"0.0.1", 1))
    assert plotly_js.vendored_version(other) == "0.0.1" != plotly_js.VERSION
    other.write_bytes(FULL[:4096])
    assert plotly_js.vendored_version(other) is None
    assert plotly_js.vendored_version(tmp_path / "missing.js") is None


def test_a_plotly_package_of_another_version_serves_its_own_full_bundle(tmp_path):
    """After an upgrade of plotly (its plotly.js another version than the vendored bundle's), the app
    serves the package's full plotly.js under its own name, and its log says why: the figures' schema
    is the package's. In a fresh interpreter, the package said to ship plotly.js 9.9.9."""
    code = ("import logging, sys; from pathlib import Path; import plotly.offline as offline;"
            "offline.get_plotlyjs_version = lambda: '9.9.9'; logging.basicConfig();"
            "from ui import plotly_js as p;"
            "print(p.CARTESIAN, p.PLOTLY_JS, p.publish(Path(sys.argv[1])).name)")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=True)
    assert done.stdout.split() == ["False", "plotly-9.9.9.min.js", "plotly-9.9.9.min.js"]
    assert (tmp_path / "plotly-9.9.9.min.js").read_bytes() == FULL
    assert "the full plotly.js is served" in done.stderr and "9.9.9" in done.stderr


def _trace_types(figure: dict) -> set[str]:
    """The trace types a figure dict draws, in its data and its frames (a trace without one: scatter)."""
    traces = [*figure.get("data", []), *(t for f in figure.get("frames", []) for t in f.get("data", []))]
    return {trace.get("type", "scatter") for trace in traces}


@pytest.mark.parametrize("spec", [p for p in PAGES if p.name != "deck"], ids=lambda p: p.name)
def test_every_figure_of_every_page_is_made_of_traces_the_bundle_draws(spec):
    """plotly.js's cartesian bundle draws no other trace type (a trace of another type is not drawn):
    every figure of every page, at its defaults, on a desktop and on a phone, is made of ``TRACES``."""
    for phone in (False, True):
        view = spec.show(spec.make_job(spec.defaults(None)), Display(width=390 if phone else 1280))
        drawn = {plot.key: plot.figure for plot in view.plots()}
        assert drawn, f"{spec.name} drew no figure"
        for name, figure in drawn.items():
            assert _trace_types(figure) <= plotly_js.TRACES, (spec.name, name, _trace_types(figure))


def test_a_published_folder_that_cannot_take_the_packed_copy_still_serves_plotly_js(tmp_path, monkeypatch,
                                                                                  caplog):
    """``publish`` into a folder holding plotly.js but no packed copy, which cannot be written (an app
    folder published before there was one, read-only): the plain file is kept and served (``route``),
    said in the log, never an error."""
    plotly_js.publish(tmp_path)
    (tmp_path / plotly_js.PACKED).unlink()

    def read_only(source, target):
        raise PermissionError(13, "Permission denied", str(target))

    monkeypatch.setattr(plotly_js, "_pack", read_only)
    assert plotly_js.publish(tmp_path) == tmp_path / plotly_js.PLOTLY_JS
    assert "could not be packed" in caplog.text
    status, headers, body = _get(tmp_path, {"accept-encoding": "gzip"})
    assert status == 200 and "content-encoding" not in headers and body == SHIPPED


@pytest.mark.parametrize(("accept", "takes"), [
    ("gzip, deflate, br, zstd", True), ("br;q=1.0, gzip;q=0.8", True), ("GZIP", True), ("*", True),
    ("x-gzip", True), ("", False), ("identity", False), ("br", False), ("gzip;q=0", False),
    ("gzip; q=0.000, br", False), ("gzip;q=0.001", True),
])
def test_a_request_takes_gzip_as_its_accept_encoding_says(accept, takes):
    assert plotly_js.takes_gzip(accept) is takes


def _get(folder: Path, headers: dict[str, str], method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """``route(folder)`` asked for plotly.js as Starlette asks it (an ASGI scope): status, headers, body."""
    return ask(plotly_js.route(folder), f"/{plotly_js.ADDRESS}", headers, method)


def test_the_route_sends_the_packed_file_as_it_is_to_a_browser_and_the_plain_one_otherwise(tmp_path):
    """A browser (gzip) gets the packed file's very bytes, said gzip-encoded: never compressed again; a
    client that takes no gzip gets the plain file; both as JavaScript a browser will run (nosniff)."""
    plotly_js.publish(tmp_path)
    status, headers, body = _get(tmp_path, {"accept-encoding": "gzip, deflate, br"})
    assert status == 200 and body == (tmp_path / plotly_js.PACKED).read_bytes()
    assert headers["content-encoding"] == "gzip" and headers["vary"] == "Accept-Encoding"
    assert headers["content-type"].startswith("text/javascript")
    assert headers["x-content-type-options"] == "nosniff"
    assert gzip.decompress(body) == SHIPPED
    status, headers, body = _get(tmp_path, {"accept-encoding": "identity"})
    assert status == 200 and "content-encoding" not in headers and body == SHIPPED
    status, headers, body = _get(tmp_path, {"accept-encoding": "gzip"}, method="HEAD")
    assert status == 200 and body == b"" and int(headers["content-length"]) == len(
        (tmp_path / plotly_js.PACKED).read_bytes())


def test_the_route_publishes_plotly_js_first_and_says_when_it_cannot(tmp_path, monkeypatch):
    """Asked before any page has run (nothing published yet), the route publishes it; a folder that cannot
    be written is a 503 in words, never a traceback."""
    status, _, body = _get(tmp_path / "static", {"accept-encoding": "gzip"})
    assert status == 200 and gzip.decompress(body) == SHIPPED
    monkeypatch.setattr(plotly_js, "publish", lambda folder: None)
    status, _, body = _get(tmp_path / "elsewhere", {})
    assert status == 503 and b"plotly.js could not be written" in body
