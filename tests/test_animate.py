"""Clips for slides: ``polarize animate`` writes GIF and MP4 with the right frames and size, titled.

Frames are the static exporter's picture (Chromium) with the moving parts drawn by
Pillow; these tests need Chromium, as ``polarize reproduce`` does.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from polarize import Experiment, animate, clipframes, simulate
from polarize.plots import dashboard, find_trace, style, trace_index
from polarize.reproduce import find_browser
from polarize.science import judge, title_lines
from polarize.web.export import dashboard_html

needs_browser = pytest.mark.skipif(find_browser() is None, reason="no Chromium for the static export")
PIL = pytest.importorskip("PIL.Image")


@cache
def small_run():
    return simulate(Experiment(n=3, d=3, horizon=1e3, seed=2, a_init="gaussian", a_scale=0.5))


def test_title_lines_say_the_settings_and_the_verdict():
    result = small_run()
    settings, verdict = title_lines(result)
    assert settings.startswith("n = 3, d = 3") and "logistic loss" in settings and "seed 2" in settings
    assert verdict.startswith(judge(result).headline + ":")
    for loss in ("logistic", "square"):  # polarized and not: the headline is said once
        headline, _, sentence = title_lines(simulate(Experiment(n=3, d=3, loss=loss)))[1].partition(": ")
        assert headline not in sentence and not sentence.startswith("Yes")


def test_the_offline_html_carries_the_title_as_text():
    heading = ("n = 3 <b>", "Polarized: & so")
    page = dashboard_html(dashboard(small_run(), frames=4), title="x", heading=heading)
    assert "<h1" in page and "n = 3 &lt;b&gt;" in page and "Polarized: &amp; so" in page
    assert "n = 3 <b>" not in page  # shown as text, never as markup


@needs_browser
def test_gif_has_every_frame_at_the_asked_width(tmp_path):
    result = small_run()
    clip = animate.write_result_clip(result, tmp_path / "run.gif", frames=6, fps=5, width=320)
    expected = len(dashboard(result, frames=6).frames)
    with PIL.open(clip.path) as gif:
        assert gif.format == "GIF" and gif.n_frames == clip.frames == expected
        assert gif.size == (clip.width, clip.height) == (320, clip.height)
        assert clip.height % 16 == 0 and clip.height > 100
        assert gif.info["duration"] == 200  # 5 frames per second
        first = np.asarray(gif.convert("RGB"))
        gif.seek(gif.n_frames - 1)
        last = np.asarray(gif.convert("RGB"))
    assert np.any(first != last)  # the markers moved


@needs_browser
def test_mp4_has_every_frame_and_an_even_size(tmp_path):
    iio = pytest.importorskip("imageio.v3")
    pytest.importorskip("imageio_ffmpeg")
    result = small_run()
    clip = animate.write_result_clip(result, tmp_path / "run.mp4", frames=5, fps=10, width=480)
    frames = list(iio.imiter(clip.path))
    assert len(frames) == clip.frames == len(dashboard(result, frames=5).frames)
    assert frames[0].shape == (clip.height, 480, 3) and clip.height % 16 == 0


@needs_browser
def test_moving_markers_land_on_the_exporters_curves():
    """Where Pillow draws the loss marker is where Chromium drew the loss curve under it."""
    result = small_run()
    fig = dashboard(result, frames=6).to_dict()
    static, boxes, height = clipframes._static_figure(fig, ("title",))
    picture = np.asarray(clipframes._render(static, height, 1.0)).astype(int)
    index = trace_index(fig, "loss-now")
    ink = np.array(PIL.new("RGB", (1, 1), style.PALETTE.ink).getpixel((0, 0)))
    loss_now = find_trace(fig, "loss-now")
    axes = boxes[f"{loss_now['xaxis']}|{loss_now['yaxis']}"]
    for frame in fig["frames"]:
        state = frame["data"][frame["traces"].index(index)]
        ((x, y),) = axes.to_pixels(state["x"], state["y"])
        patch = picture[round(y) - 2:round(y) + 3, round(x) - 2:round(x) + 3]
        assert np.min(np.abs(patch - ink).sum(axis=-1)) < 60  # the dark curve passes through the spot


@needs_browser
def test_the_replicator_bars_are_drawn_in_the_clip_in_their_token_colours():
    result = small_run()
    fig = dashboard(result, frames=4, repulsion="replicator").to_dict()
    _, boxes, _ = clipframes._static_figure(fig, ())
    pictures = list(clipframes.clip_frames(fig))
    index = trace_index(fig, "replicator-bars")
    bars = find_trace(fig, "replicator-bars")
    axes = boxes[f"{bars['xaxis']}|{bars['yaxis']}"]
    for frame, picture in zip(fig["frames"], pictures, strict=True):
        state = frame["data"][frame["traces"].index(index)]
        pixels = np.asarray(picture).astype(int)
        for x, y, color in zip(bars["x"], state["y"], bars["marker"]["color"], strict=True):
            if abs(y) < 0.2:
                continue  # too short to hit its middle surely
            ((px, py),) = axes.to_pixels([x], [y / 2])
            want = np.array(PIL.new("RGB", (1, 1), color).getpixel((0, 0)))
            assert np.abs(pixels[round(py), round(px)] - want).sum() < 30


def test_cli_refuses_what_it_cannot_write(tmp_path, capsys):
    from polarize import cli as command

    assert command.main(["animate", "--preset", "default", "-o", str(tmp_path / "clip.avi")]) == 2
    assert "neither .gif nor .mp4" in capsys.readouterr().err
    out = str(tmp_path / "clip.gif")
    assert command.main(["animate", "--preset", "default", "-o", out, "--fps", "0"]) == 2
    assert "fps" in capsys.readouterr().err
    assert not (tmp_path / "clip.gif").exists()


def test_cli_names_the_missing_extra(tmp_path, monkeypatch, capsys):
    from polarize import cli as command

    monkeypatch.setattr(animate, "missing", lambda suffix: ["imageio", "imageio-ffmpeg"])
    assert command.main(["animate", "--preset", "default", "-o", str(tmp_path / "clip.mp4")]) == 2
    err = capsys.readouterr().err
    assert "imageio, imageio-ffmpeg" in err and "polarize[animate]" in err
