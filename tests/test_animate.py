"""Clips for slides: ``polarize animate`` writes GIF and MP4 with the right frames and size, titled.

Frames are the static exporter's picture (Chromium) with the moving parts drawn by
Pillow; the tests that draw need Chromium, as ``polarize reproduce`` does. A clip cannot exhaust a
server: its caps are checked before anything is drawn, a GIF's frames go to the file as they come, and
clips queue like runs, each told its place.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from polarize import Experiment, simulate
from polarize.clips import animate, draw, frames
from polarize.fields import ConfigError
from polarize.plots import dashboard, find_trace, style, trace_index
from polarize.plots.static import find_browser
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
    expected = len(dashboard(result, frames=6)["frames"])
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
    pictures = list(iio.imiter(clip.path))
    assert len(pictures) == clip.frames == len(dashboard(result, frames=5)["frames"])
    assert pictures[0].shape == (clip.height, 480, 3) and clip.height % 16 == 0


@needs_browser
def test_moving_markers_land_on_the_exporters_curves():
    """Where Pillow draws the loss marker is where Chromium drew the loss curve under it."""
    result = small_run()
    fig = dashboard(result, frames=6)
    static, boxes, height = frames._static_figure(fig, ("title",))
    picture = np.asarray(frames._render(static, height, 1.0)).astype(int)
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
    fig = dashboard(result, frames=4, repulsion="replicator")
    _, boxes, _ = frames._static_figure(fig, ())
    pictures = list(frames.clip_frames(fig))
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


@cache
def sinks_record():
    from polarize.sinks.runs import read_run, shipped_runs

    runs = shipped_runs()
    if "classroom-softmax-seed0" not in runs:
        pytest.skip("no shipped sinks run in this checkout")
    return read_run(runs["classroom-softmax-seed0"])


@cache
def sinks_pictures(width):
    """The clip's pictures of the shipped run's attention (drawn once: the static export takes seconds)."""
    from polarize.plots.transformer import attention_figure

    return tuple(frames.clip_frames(attention_figure(sinks_record()), title=("settings", "verdict"),
                                        width=width))


def test_a_frames_annotations_update_the_layouts_by_index():
    notes = [{"text": "a", "x": 0.1, "font": {"size": 13}}, {"text": "b", "x": 0.9}]
    assert draw.merge_notes(notes, [{"text": "a*"}]) == [
        {"text": "a*", "x": 0.1, "font": {"size": 13}}, {"text": "b", "x": 0.9}]
    assert draw.merge_notes(notes, [{}, {"font": {"color": "red"}}, {"text": "c"}]) == [
        notes[0], {"text": "b", "x": 0.9, "font": {"color": "red"}}, {"text": "c"}]
    assert notes == [{"text": "a", "x": 0.1, "font": {"size": 13}}, {"text": "b", "x": 0.9}]  # not changed


def test_the_sinks_clip_takes_its_titles_and_labels_from_the_frames():
    from polarize.plots.transformer import attention_figure

    record = sinks_record()
    fig = attention_figure(record)
    changing, notes = frames._moving_notes(fig)
    assert changing == set(range(8))  # every panel title carries its head's sink score
    titles = [note["text"] for note in fig["frames"][-1]["layout"]["annotations"]]
    assert [note["text"] for note in notes[-1][:8]] == titles
    static, _, _ = frames._static_figure(fig, ("settings",))
    assert [note["text"] for note in static["layout"]["annotations"]] == ["<b>settings</b>"]  # per frame
    assert frames._frame_labels(fig) == [f"training step {m['step']}" for m in record["maps"]]
    explorer = dashboard(small_run(), frames=3)
    labels = frames._frame_labels(explorer)  # the Explorer's frames are labelled by their time
    assert len(labels) == len(explorer["frames"]) and all(label.startswith("t = ") for label in labels)


@needs_browser
def test_the_sinks_clip_redraws_the_attention_and_the_titles_at_every_checkpoint():
    from plotly.colors import sample_colorscale, unlabel_rgb

    from polarize.plots.transformer import attention_figure

    record = sinks_record()
    fig = attention_figure(record)
    width = 640
    pictures = [np.asarray(picture).astype(int) for picture in sinks_pictures(width)]
    assert len(pictures) == len(record["maps"]) == len(fig["frames"])
    _, boxes, _ = frames._static_figure(fig, ())
    zoom = width / frames.LAYOUT_WIDTH
    weights = np.asarray([np.asarray(m["weights"])[0] for m in record["maps"]])  # (C, layers, heads, T, T)
    layer, head, query, key = np.unravel_index(np.argmax(np.abs(weights[-1] - weights[0])), weights.shape[1:])
    trace = fig["data"][layer * weights.shape[2] + head]
    ((x, y),) = boxes[f"{trace['xaxis']}|{trace['yaxis']}"].to_pixels([key], [query])  # rows top down
    for picture, w in ((pictures[0], weights[0]), (pictures[-1], weights[-1])):
        u = (w[layer, head, query, key] - trace["zmin"]) / (trace["zmax"] - trace["zmin"])
        want = np.array(unlabel_rgb(sample_colorscale(trace["colorscale"], [u])[0]))
        assert np.abs(picture[round(y * zoom), round(x * zoom)] - want).sum() < 30
    # A head starred as a sink at the end: ink where its title's "\u2605 SINK" ends, right of where step 0's
    # title ("head 0: sink 0.21", centred, about 105 px wide at 13 px) ended.
    notes = frames._moving_notes(fig)[1]
    index = next(i for i, note in enumerate(notes[-1]) if "SINK" in note["text"])
    assert "SINK" not in notes[0][index]["text"]
    at_x, at_y = frames._note_at(notes[-1][index], boxes)
    rows = slice(round((at_y - 14) * zoom), round(at_y * zoom))
    columns = slice(round((at_x + 60) * zoom), round((at_x + 72) * zoom))
    ink = [np.abs(p[rows, columns] - p[rows, columns].max(axis=(0, 1))).sum(axis=-1).max() for p in pictures]
    assert ink[0] < 30 < ink[-1]


@needs_browser
def test_the_sinks_clip_writes_a_gif_and_an_mp4_frame_per_checkpoint(tmp_path):
    iio = pytest.importorskip("imageio.v3")
    pytest.importorskip("imageio_ffmpeg")
    pictures = sinks_pictures(640)
    palette = animate._palette(pictures)  # a GIF's one palette, made before its frames stream in
    gif = lambda frames, path, fps: animate._write_gif(frames, path, fps, palette)  # noqa: E731
    for suffix, write in ((".gif", gif), (".mp4", animate._write_mp4)):
        count, size = write(iter(pictures), tmp_path / f"sinks{suffix}", 12)
        frames = list(iio.imiter(tmp_path / f"sinks{suffix}"))
        assert len(frames) == count == len(sinks_record()["maps"]), suffix
        assert frames[0].shape[:2] == (size[1], size[0]) == (pictures[0].height, 640)


@needs_browser
def test_the_sinks_cells_land_where_the_exporter_draws_them():
    """Every cell Pillow draws has the colour Chromium gives it at that spot, in every panel."""
    from polarize.plots.transformer import attention_figure

    fig = attention_figure(sinks_record())
    static, boxes, height = frames._static_figure(fig, ("settings", "verdict"))
    last = fig["frames"][-1]["data"]
    static["data"] = [draw.merge(fig["data"][i], last[i]) for i in range(len(last))]  # cells shown
    zoom = 0.5
    chromium = np.asarray(frames._render(static, height, zoom)).astype(int)
    ours = np.asarray(sinks_pictures(640)[-1]).astype(int)
    for trace in static["data"]:
        axes = boxes[f"{trace['xaxis']}|{trace['yaxis']}"]
        cells = len(trace["x"])
        for query in range(cells):
            for x, y in axes.to_pixels(list(range(cells)), [query] * cells):
                spot = round(y * zoom), round(x * zoom)
                assert np.abs(ours[spot] - chromium[spot]).sum() < 30, (trace["xaxis"], query, x)


@needs_browser
def test_one_browser_serves_exports_from_many_threads_each_getting_its_own_figure():
    """kaleido's own calls start a Chromium per call; ``static`` keeps one, shared by threads."""
    import io
    from concurrent.futures import ThreadPoolExecutor

    from polarize.plots import static

    def picture(color: str) -> tuple[int, ...]:
        figure = {"data": [], "layout": {"paper_bgcolor": color, "plot_bgcolor": color, "width": 64,
                                         "height": 48}}
        png = static.render(figure, format="png", width=64, height=48)
        with PIL.open(io.BytesIO(png)) as image:
            return image.convert("RGB").getpixel((2, 2))

    colors = {"#ff0000": (255, 0, 0), "#00ff00": (0, 255, 0), "#0000ff": (0, 0, 255),
              "#ffffff": (255, 255, 255)}
    picture("#ffffff")
    browser = static._STATE["browser"]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(picture, list(colors) * 2))
    assert got == list(colors.values()) * 2
    assert static._STATE["browser"] is browser  # the same Chromium drew them all
    static.close_browser()
    assert static._STATE["browser"] is None
    assert picture("#0000ff") == (0, 0, 255)  # and the next export starts one again


def test_a_kept_browser_is_not_closed_for_being_idle(monkeypatch):
    """The app keeps the clips' browser (a first clip waited seconds for Chromium); others close it idle."""
    from polarize.plots import static

    monkeypatch.setattr(static, "_STATE", {"browser": object(), "busy": 0, "timer": None, "keep": False})
    with static._LOCK:
        static._close_when_idle()
    assert static._STATE["timer"] is not None  # not kept: closes after IDLE_SECONDS
    static._STATE["timer"].cancel()
    static._STATE["timer"] = None
    monkeypatch.setattr(static, "_Browser", lambda: object())  # no Chromium needed to test the rule
    static.start_browser(keep=True)
    with static._LOCK:
        static._close_when_idle()
    assert static._STATE["keep"] and static._STATE["timer"] is None


# ---- clips that cannot exhaust a server: caps checked first, frames streamed, a queue ----------------


@pytest.mark.parametrize(("options", "field"), [({"width": 2560}, "width"), ({"width": 3840}, "width"),
                                                ({"width": 100}, "width"), ({"width": 640.5}, "width")])
def test_a_clip_beyond_its_caps_is_refused_before_anything_is_drawn(tmp_path, monkeypatch, options, field):
    from polarize.clips import animate
    from polarize.plots import static

    monkeypatch.setattr(static, "start_browser", lambda **kw: pytest.fail("drew before checking"))
    with pytest.raises(ConfigError) as info:
        animate.write_clip({"data": [], "layout": {}, "frames": [{}] * 3}, tmp_path / "c.gif", **options)
    assert info.value.field == field and f"{animate.MOST_WIDTH:,}" in str(info.value)


def test_a_clip_of_too_many_frames_is_refused_naming_the_cap(tmp_path, monkeypatch):
    from polarize.clips import animate
    from polarize.plots import static

    monkeypatch.setattr(static, "start_browser", lambda **kw: pytest.fail("drew before checking"))
    with pytest.raises(ConfigError) as info:
        animate.write_clip({"data": [], "layout": {}, "frames": [{}] * (animate.MOST_FRAMES + 1)},
                           tmp_path / "c.gif")
    assert info.value.field == "frames" and f"{animate.MOST_FRAMES:,}" in str(info.value)


@pytest.mark.parametrize(("flag", "value"), [("--width", "2560"), ("--width", "3840"),
                                             ("--frames", "1000")])
def test_the_animate_command_names_the_caps(tmp_path, capsys, flag, value):
    from polarize.cli import main
    from polarize.clips import animate

    status = main(["animate", "--preset", "default", "-o", str(tmp_path / "c.gif"), flag, value])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    cap = animate.MOST_WIDTH if flag == "--width" else animate.MOST_FRAMES
    assert f"{cap:,}" in err or str(cap) in err


def test_gif_frames_stream_to_the_file_as_they_are_drawn(tmp_path):
    """Each frame is written when it comes (with one kept back to merge a repeat), never all held."""
    import numpy as np
    from PIL import Image

    from polarize.clips import animate

    path = tmp_path / "c.gif"
    rng = np.random.default_rng(0)
    pictures = [Image.fromarray(rng.integers(0, 255, (48, 64, 3), dtype=np.uint8)) for _ in range(8)]
    palette = animate._palette(pictures)
    sizes = []

    def drawn():
        for k, picture in enumerate(pictures):
            sizes.append(path.stat().st_size if path.exists() else 0)
            if k >= 3:
                assert sizes[-1] > sizes[-2] > 0, "frames held back, not written as they came"
            yield picture

    count, size = animate._write_gif(drawn(), path, 5, palette)
    assert count == 8 and size == (64, 48)
    with Image.open(path) as gif:
        assert gif.n_frames == 8 and gif.info["duration"] == 200 and gif.info.get("loop") == 0
        for k, picture in enumerate(pictures):
            gif.seek(k)
            want = picture.quantize(palette=palette, dither=Image.Dither.NONE).convert("RGB")
            assert np.array_equal(np.asarray(gif.convert("RGB")), np.asarray(want))


def test_clips_queue_like_runs_and_are_told_their_place(monkeypatch):
    import threading

    from polarize.clips import animate
    from polarize.web import export, progress

    monkeypatch.setattr(animate, "available", lambda suffix=".gif": True)
    monkeypatch.setattr(animate, "clip_bytes", lambda *a, **k: b"GIF89a")
    (button, *_) = export.clip_downloads({"frames": []}, key="k", name="Clip", title=(), stem="s",
                                         help_text="")
    held = export.CLIP_QUEUE.enter()
    said: list[str] = []
    out: dict = {}

    def make():
        with progress.progress_notices(lambda fraction, text: said.append(text)):
            out["data"] = button.data()

    worker = threading.Thread(target=make, daemon=True)
    worker.start()
    try:
        for _ in range(400):
            if said:
                break
            worker.join(0.05)
        assert said and "1" in said[0] and "clip" in said[0].lower() and "data" not in out
    finally:
        export.CLIP_QUEUE.leave(held)
    worker.join(20)
    assert out["data"] == b"GIF89a" and export.CLIP_QUEUE.counts() == (0, 0)
