"""Downloads of a run: the trajectory as CSV or JSON, the configuration, the dashboard as HTML, clips.

Each function returns text, built only when called (the page hands them to
download buttons as callables, so nothing is serialized until someone clicks).
Clips wait in one queue (``CLIP_QUEUE``, ``CLIPS_AT_ONCE`` made at a time), like runs,
each told its place: three made at once took a server from 0.33 to 1.5 GB.
"""

from __future__ import annotations

import html
import io
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.io as pio

from polarize.clips import animate
from polarize.config import Experiment
from polarize.diagnostics import Result
from polarize.plots.style import FONT_FAMILY
from polarize.serialize import strict_dumps
from polarize.serve.admission import Admission, ServerBusy
from polarize.web import progress, transport
from polarize.web.view import Download

__all__ = ["CLIPS", "CLIPS_AT_ONCE", "CLIP_QUEUE", "clip_downloads",
           "config_json", "dashboard_html", "file_stem", "trajectory_columns",
           "trajectory_csv", "trajectory_json"]


def trajectory_columns(result: Result) -> tuple[list[str], np.ndarray]:
    """Column names and values of the trajectory table.

    Parameters
    ----------
    result : Result
        ``K`` saved times, ``n`` tokens.

    Returns
    -------
    names : list of str
        ``t, loss, entropy, one_minus_max``, then ``s_i``, ``a_i``, ``u_i`` for
        each token ``i = 0 .. n-1``, then ``p_i`` when the run has them.
    values : ndarray, shape (K, 4 + 3n) or (K, 4 + 4n)
    """
    n = result.s.shape[1]
    names = ["t", "loss", "entropy", "one_minus_max"]
    blocks = [np.column_stack([result.t, result.loss, result.entropy, result.one_minus_max])]
    series = [("s", result.s), ("a", result.a), ("u", result.u)]
    if result.p is not None:
        series.append(("p", result.p))
    for prefix, values in series:
        names += [f"{prefix}_{i}" for i in range(n)]
        blocks.append(np.asarray(values, dtype=float))
    return names, np.hstack(blocks)


def trajectory_csv(result: Result) -> str:
    """The trajectory as CSV: one row per saved time, full precision.

    Parameters
    ----------
    result : Result

    Returns
    -------
    str
        A header line (see ``trajectory_columns``), then ``K`` rows.
    """
    names, values = trajectory_columns(result)
    buffer = io.StringIO()
    np.savetxt(buffer, values, delimiter=",", fmt="%.17g", header=",".join(names), comments="")
    # A value the run does not have (the entropy of a dead run's all-zero scores) is an empty field.
    lines = buffer.getvalue().split("\n")
    rows = (",".join("" if v == "nan" else v for v in line.split(",")) for line in lines[1:])
    return "\n".join([lines[0], *rows])


def trajectory_json(result: Result) -> str:
    """The whole result as JSON (``Result.to_dict``: the resolved configuration and every series)."""
    return strict_dumps(result.to_dict())


def config_json(result_or_experiment: Result | Experiment) -> str:
    """The resolved configuration as JSON, loadable by ``polarize run CONFIG.json -o RESULT.json``.

    Parameters
    ----------
    result_or_experiment : Result or Experiment
        A result gives its resolved experiment (with the drawn arrays written
        in, so the file alone reproduces the run); an experiment is resolved here.

    Returns
    -------
    str
    """
    if isinstance(result_or_experiment, Result):
        experiment = result_or_experiment.experiment
    else:
        experiment = result_or_experiment.resolved()
    return experiment.to_json(indent=1)


def dashboard_html(figure: Mapping[str, Any] | Any, *, title: str = "polarize",
                   heading: Sequence[str] = ()) -> str:
    """The animated dashboard as one standalone HTML page that plays offline.

    Parameters
    ----------
    figure : dict
        A figure dict of ``polarize.plots``.
    title : str
        The page title.
    heading : sequence of str
        Plain-text lines above the figure (``science.title_lines``: the settings, then
        the verdict, as a clip's title), escaped; the first as a heading.

    Returns
    -------
    str
        A full HTML document with plotly.js embedded (about 5 MB), not auto-playing; every control
        works as in the app: play, pause, reset, speeds, the slider, the step buttons and the keys
        (the app's transport script, inline after the figure).
    """
    page = pio.to_html(figure, include_plotlyjs=True, full_html=True, auto_play=False,
                       validate=False, config={"displaylogo": False, "responsive": True},
                       default_width="100%")
    end = page.rindex("</body>")
    page = f"{page[:end]}{transport.script_html()}\n{page[end:]}"
    page = page.replace("<head>", f"<head><title>{html.escape(title)}</title>", 1)
    if heading:
        lines = [f'<h1 style="font-size:1.3em;margin:0.3em 0">{html.escape(heading[0])}</h1>',
                 *(f'<p style="margin:0.2em 0">{html.escape(line)}</p>' for line in heading[1:])]
        top = f'<header style="font-family:{html.escape(FONT_FAMILY)}">{"".join(lines)}</header>'
        page = page.replace("<body>", f"<body>{top}", 1)
    # Older Plotly (6.1, the floor) writes no doctype, which puts browsers in quirks mode.
    return page if page.lstrip().lower().startswith("<!doctype") else "<!DOCTYPE html>\n" + page


def file_stem(experiment: Experiment) -> str:
    """A file name stem describing a run, e.g. ``polarize-n8-logistic-softmax-flow-seed0``."""
    return (f"polarize-n{experiment.n}-{experiment.loss}-{experiment.normalizer}-{experiment.method}"
            f"-seed{experiment.seed}")


CLIPS = {".gif": ("GIF", "image/gif"), ".mp4": ("MP4", "video/mp4")}
"""A clip's file suffix -> its name on the button and its MIME type."""
CLIPS_AT_ONCE = 1
"""Clips made at once in this server (each takes a core and a few hundred MB); the others wait."""
CLIP_QUEUE = Admission(CLIPS_AT_ONCE, reserve=0, most_waiting=16)
"""The server's one queue of clips: first come, first served, at most 16 waiting (``ServerBusy``)."""


def _queued(make: Any) -> Any:
    """``make()`` once the clip queue lets it, telling the progress bar the clip's place meanwhile."""
    def told(place: int) -> None:
        ahead = "next" if place == 1 else f"number {place} in line"
        progress.report(0.0, f"Waiting for the clip maker: your clip is {ahead} (clip {place} of the queue)")

    try:
        slot = CLIP_QUEUE.enter(told)
    except ServerBusy:
        raise ServerBusy(f"{CLIP_QUEUE.most_waiting} clips are waiting to be made already: try again in a "
                         "minute") from None
    try:
        return make()
    finally:
        CLIP_QUEUE.leave(slot)


def clip_downloads(figure: Mapping[str, Any] | Any, *, key: str, name: str, title: Sequence[str],
                   stem: str, help_text: str) -> tuple[Download, ...]:
    """Buttons downloading an animated figure as a GIF and as an MP4 for slides.

    Only the kinds this machine can write (``animate.available``: the extra and a browser);
    each is ``slow``: made when asked, its progress (``web.progress.report``) shown meanwhile.

    Parameters
    ----------
    figure : dict
        An animated figure of ``polarize.plots`` (``animate.write_clip``).
    key : str
        Prefix of the buttons' keys (``key + "gif"``, ``key + "mp4"``).
    name : str
        The buttons' label before the kind, e.g. ``"Clip"`` gives "Clip (GIF)".
    title : sequence of str
        Lines drawn above the clip (the settings and the verdict).
    stem : str
        File name without the suffix.
    help_text : str
    """
    def make(suffix: str) -> bytes:
        return _queued(lambda: animate.clip_bytes(figure, suffix, title=title, progress=progress.report))

    return tuple(
        Download(f"{key}{kind.lower()}", f"{name} ({kind})", lambda suffix=suffix: make(suffix),
                 f"{stem}{suffix}", mime, ":material/slideshow:", help_text, slow=True)
        for suffix, (kind, mime) in CLIPS.items() if animate.available(suffix))
