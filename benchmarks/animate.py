"""``polarize animate`` on the default run: a 100-frame clip, timed part by part and end to end.

    python benchmarks/animate.py                # GIF and MP4 of the default run, 1280 px wide
    python benchmarks/animate.py --compare 9    # also kaleido drawing 9 whole frames, per frame
    python benchmarks/animate.py --quick        # 4 frames, 320 px wide: checks that it runs

The frames are the static exporter's picture drawn once plus Pillow for the moving parts;
``--compare`` times the plain way (every frame through kaleido) to show what that saves.
End to end is the Explorer's GIF download as the app makes it (``clips.animate.clip_bytes``):
once with no browser running (the first clip of a server, or ``polarize animate``), once
more with the browser the first one started (``plots.static`` keeps it for two minutes).
The target: the first under 5 s. Wall and CPU seconds (this process and its children: the
browser's processes count once they have ended, so the last line's CPU includes them).
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from polarize import simulate
from polarize.clips import animate
from polarize.clips import frames as clipframes
from polarize.plots import dashboard, static
from polarize.presets import get_preset
from polarize.science import title_lines


def _clock(label: str, start: float) -> float:
    now = time.perf_counter()
    print(f"{label:<42} {now - start:7.2f} s")
    return now


def _kaleido_per_frame(figure: dict, count: int) -> float:
    """Seconds a frame when kaleido draws whole frames (each a static figure of that frame's state)."""
    import kaleido

    moving = figure["layout"]["meta"]["animated"]
    layout = {k: v for k, v in figure["layout"].items() if k not in ("updatemenus", "sliders")}
    figures = []
    for frame in figure["frames"][:count]:
        data = [dict(trace) for trace in figure["data"]]
        for index, state in zip(frame.get("traces", moving), frame["data"], strict=True):
            data[index] |= state
        figures.append(dict(data=data, layout=layout))
    def batch(figs: list[dict]) -> float:
        with tempfile.TemporaryDirectory() as folder:
            jobs = [dict(fig=fig, path=Path(folder) / f"{j}.png",
                         opts=dict(format="png", width=1280, height=layout["height"]))
                    for j, fig in enumerate(figs)]
            start = time.perf_counter()
            kaleido.write_fig_from_object_sync(jobs, kopts={"n": 2})  # one browser, two tabs (as reproduce)
            return time.perf_counter() - start

    # The browser's start is paid once either way: a batch of one frame measures it, to take it out.
    return (batch(figures) - batch(figures[:1])) / max(len(figures) - 1, 1)


def _cpu() -> float:
    mine, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


def _end_to_end(result: Any, frames: int, width: int) -> None:
    """The Explorer's GIF as the app makes it: dashboard, frames, file; first with no browser running."""
    static.close_browser()
    for label in ("default GIF end to end, no browser running", "the same again, browser kept"):
        wall, cpu = time.perf_counter(), _cpu()
        data = animate.clip_bytes(dashboard(result, frames=frames), ".gif", title=title_lines(result),
                                  width=width)
        print(f"{label:<42} {time.perf_counter() - wall:7.2f} s  ({_cpu() - cpu:.2f} s CPU, "
              f"{len(data) / 1e3:.0f} kB)")
    static.close_browser()
    print(f"{'CPU of all the above, browsers included':<42} {_cpu():7.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=100)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--compare", type=int, default=0, help="also time N whole frames through kaleido")
    parser.add_argument("--quick", action="store_true",
                        help="4 frames, 320 px wide (seconds; for the tests)")
    args = parser.parse_args()
    if args.quick:
        args.frames, args.width = 4, 320
    start = time.perf_counter()
    result = simulate(get_preset("default").experiment)
    start = _clock("simulate the default run", start)
    figure = dashboard(result, frames=args.frames)
    title = title_lines(result)
    start = _clock(f"dashboard ({len(figure['frames'])} frames)", start)
    frames = clipframes.clip_frames(figure, title=title, width=args.width)
    pictures = [next(frames)]
    start = _clock("static export once (browser start incl.)", start)
    pictures += list(frames)
    start = _clock(f"Pillow: the other {len(pictures) - 1} pictures", start)
    with tempfile.TemporaryDirectory() as folder:
        palette = animate._palette(pictures)
        count, size = animate._write_gif(iter(pictures), Path(folder) / "clip.gif", 12, palette)
        start = _clock(f"encode GIF ({count} frames, {size[0]}x{size[1]})", start)
        count, size = animate._write_mp4(iter(pictures), Path(folder) / "clip.mp4", 12)
        start = _clock(f"encode MP4 ({count} frames, {size[0]}x{size[1]})", start)
    _end_to_end(result, args.frames, args.width)
    if args.compare:
        per_frame = _kaleido_per_frame(figure, args.compare)
        print(f"kaleido, whole frames: {per_frame:.2f} s a frame, "
              f"{per_frame * len(figure['frames']):.0f} s for {len(figure['frames'])} frames")


if __name__ == "__main__":
    main()
