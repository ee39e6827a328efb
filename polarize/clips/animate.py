"""GIF and MP4 clips of an animated figure, for slides (``polarize animate``).

``frames`` draws the pictures (the static exporter once, Pillow for what moves);
this module writes them: GIF through Pillow, MP4 through imageio and the ffmpeg
binary that imageio-ffmpeg ships. Both are the optional extra ``polarize[animate]``;
``missing`` names what is not installed. ``benchmarks/animate.py`` times a clip.

A clip is bounded (``MOST_WIDTH``, ``MOST_FRAMES``, checked before anything is drawn) and
its frames go to the encoder as they are drawn, never all held: an MP4 is encoded frame by
frame, and a GIF's one palette is made from a few sampled frames drawn first, then every
frame is mapped to it and written at once (``_write_gif``). A 2560 px clip of 200 frames
held 4.2 GB before.
"""

from __future__ import annotations

import importlib.util
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from polarize.clips.frames import LAYOUT_WIDTH, clip_frames
from polarize.diagnostics import Result
from polarize.fields import ConfigError, integer
from polarize.plots import dashboard, static
from polarize.plots.static import find_browser
from polarize.science import title_lines

__all__ = ["FORMATS", "MOST_FRAMES", "MOST_WIDTH", "Clip", "Progress", "available", "clip_bytes", "missing",
           "write_clip", "write_result_clip"]

FORMATS = (".gif", ".mp4")
LEAST_WIDTH, MOST_WIDTH = 160, 1920
"""A clip's width in pixels: full HD at most (a frame of the dashboard is then about 9 MB)."""
MOST_FRAMES = 300
"""Frames a clip may have (the dashboard's default is about 90)."""


def check_clip(*, width: Any, frames: int) -> int:
    """``width`` as an int, or a ``ConfigError`` naming ``width`` or ``frames`` and its cap."""
    if frames > MOST_FRAMES:
        raise ConfigError("frames", f"a clip has at most {MOST_FRAMES:,} frames; this figure has {frames:,}")
    try:
        return integer("width", width, LEAST_WIDTH, MOST_WIDTH)
    except ConfigError:
        raise ConfigError("width", f"must be a whole number of pixels from {LEAST_WIDTH} to {MOST_WIDTH:,}, "
                          f"got {width!r}") from None

@dataclass(frozen=True, kw_only=True)
class Clip:
    """A written clip.

    Attributes
    ----------
    path : Path
    frames : int
    width, height : int
        Pixels.
    fps : float
    seconds : float
        Wall time of drawing and writing it.
    """

    path: Path
    frames: int
    width: int
    height: int
    fps: float
    seconds: float


def missing(suffix: str = ".gif") -> list[str]:
    """The packages a clip of this kind needs that are not installed (pip names); empty when ready."""
    needed = {"PIL": "pillow", "kaleido": "kaleido"}
    if suffix == ".mp4":
        needed |= {"imageio": "imageio", "imageio_ffmpeg": "imageio-ffmpeg"}
    return [pip for module, pip in needed.items() if importlib.util.find_spec(module) is None]


def available(suffix: str = ".gif") -> bool:
    """Whether clips of this kind can be written here: the packages, and a browser for the static export."""
    return not missing(suffix) and find_browser() is not None


Progress = Callable[[float, str], None]
"""``progress(fraction, text)``: how much of a clip is made (0 to 1), and what is being done."""


def clip_bytes(figure: Any, suffix: str = ".gif", *, title: Sequence[str] = (), fps: float = 12,
               width: int = LAYOUT_WIDTH, progress: Progress | None = None) -> bytes:
    """``write_clip`` into memory: the file's bytes (for a download button)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"clip{suffix}"
        write_clip(figure, path, title=title, fps=fps, width=width, progress=progress)
        return path.read_bytes()


def write_clip(figure: Any, path: Path | str, *, title: Sequence[str] = (), fps: float = 12,
               width: int = LAYOUT_WIDTH, progress: Progress | None = None) -> Clip:
    """Write an animated figure as a GIF or an MP4 (by ``path``'s suffix).

    Parameters
    ----------
    figure : go.Figure or its dict
    path : path ending in ``.gif`` or ``.mp4``
    title : sequence of str
    fps : float
        Frames per second.
    width : int
        Pixels (rounded up to a multiple of 16).
    progress : callable, optional
        Told ``(fraction, text)`` as the clip is made: the still picture, each frame, the
        file; ``(1.0, ...)`` last.

    Returns
    -------
    Clip

    Raises
    ------
    ValueError
        For another suffix, or when a package it needs is missing (named).
    """
    start = time.perf_counter()
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"cannot write {path.name}: a clip is .gif or .mp4")
    fig = figure if isinstance(figure, dict) else figure.to_dict()
    width = check_clip(width=width, frames=len(fig.get("frames", [])))
    absent = missing(suffix)
    if absent:
        raise ValueError(f"writing {suffix} needs {', '.join(absent)}: pip install 'polarize[animate]'")
    static.start_browser()  # while the figure is read, when no browser is running yet
    tell = progress or (lambda fraction, text: None)
    tell(0.0, "Drawing the still parts of the figure")
    pictures = _told(clip_frames(fig, title=title, width=width), len(fig.get("frames", [])), suffix, tell)
    if suffix == ".gif":
        tell(0.02, "Drawing a few frames for the GIF's colours")
        palette = _palette(list(clip_frames(_sampled(fig), title=title, width=width)))
        count, size = _write_gif(pictures, path, fps, palette)
    else:
        count, size = _write_mp4(pictures, path, fps)
    tell(1.0, f"{suffix[1:].upper()} written: {count} frames")
    return Clip(path=path, frames=count, width=size[0], height=size[1], fps=fps,
                seconds=time.perf_counter() - start)


def _told(pictures: Iterator[Any], total: int, suffix: str, tell: Progress) -> Iterator[Any]:
    """``pictures``, telling ``tell`` about each as it is drawn (and written: both formats stream)."""
    for j, picture in enumerate(pictures, 1):
        tell(0.05 + 0.95 * j / max(total, 1), f"Frame {j} of {total} drawn")
        yield picture


def _sampled(fig: dict[str, Any]) -> dict[str, Any]:
    """``fig`` with only the frames a GIF's palette is made of (``PALETTE_SAMPLES``, first to last)."""
    frames = fig.get("frames", [])
    picks = sorted({round(k) for k in np.linspace(0, max(len(frames) - 1, 0), PALETTE_SAMPLES)})
    layout = dict(fig.get("layout", {}))
    meta = layout.get("meta")
    if isinstance(meta, dict) and meta.get("frame_times"):
        layout["meta"] = {**meta, "frame_times": [meta["frame_times"][k] for k in picks]}
    return {**fig, "layout": layout, "frames": [frames[k] for k in picks if k < len(frames)]}


def _write_gif(pictures: Iterator[Any], path: Path, fps: float, palette: Any) -> tuple[int, tuple[int, int]]:
    """A looping GIF, every frame mapped to one ``palette`` (``_palette``) without dithering, written
    as it comes: only what changed since the last frame (its box), a repeat merged into the last.

    One palette keeps what does not move the same bytes from frame to frame, so the GIF
    stores only what changed: a palette of each frame's own (fast octree) took three times
    as long to write and made a file half as large again.
    """
    from PIL import GifImagePlugin, Image, ImageChops

    duration = round(1000 / fps)
    count, last, pending = 0, None, None  # pending: (picture, offset, duration), one frame kept back

    with open(path, "wb") as out:
        def flush() -> None:
            if pending is not None:
                out.writelines(GifImagePlugin.getdata(pending[0], offset=pending[1], duration=pending[2]))
                out.flush()

        for picture in pictures:
            frame = picture.quantize(palette=palette, dither=Image.Dither.NONE)
            if last is None:
                header, _ = GifImagePlugin.getheader(frame, info={"loop": 0, "duration": duration})
                out.writelines(header)
                box = (0, 0, *frame.size)
            else:
                box = ImageChops.subtract_modulo(frame, last).getbbox(alpha_only=False)
            count += 1
            if box is None:  # the same picture again: the last frame shows longer
                pending = (pending[0], pending[1], pending[2] + duration)
                continue
            flush()
            pending, last = (frame.crop(box), box[:2], duration), frame
        if last is None:
            raise ValueError("the figure has no frames")
        flush()
        out.write(b";")
    return count, last.size


PALETTE_SAMPLES = 4
"""Frames, evenly spread from first to last, whose colours make a GIF's palette."""


def _palette(pictures: Sequence[Any]) -> Any:
    """255 colours for all ``pictures`` (Pillow images, one size): a fast octree of a few stacked.

    The still parts are in every frame; the moving ones take their colours from the
    figure's, the same in each frame, so a few frames hold them all.
    """
    from PIL import Image

    picks = sorted({round(k) for k in np.linspace(0, len(pictures) - 1, PALETTE_SAMPLES)})
    width, height = pictures[0].size
    sample = Image.new("RGB", (width, height * len(picks)))
    for row, k in enumerate(picks):
        sample.paste(pictures[k], (0, row * height))
    return sample.quantize(colors=255, method=Image.Quantize.FASTOCTREE)


def _write_mp4(pictures: Iterator[Any], path: Path, fps: float) -> tuple[int, tuple[int, int]]:
    """An H.264 MP4 through imageio-ffmpeg's ffmpeg binary (sizes are already multiples of 16)."""
    import imageio.v2 as imageio

    count, size = 0, (0, 0)
    with imageio.get_writer(path, mode="I", fps=fps, codec="libx264", quality=7, macro_block_size=16) as out:
        for picture in pictures:
            out.append_data(np.asarray(picture))
            count, size = count + 1, picture.size
    if not count:
        raise ValueError("the figure has no frames")
    return count, size


def write_result_clip(result: Result, path: Path | str, *, frames: int = 100, fps: float = 12,
                      width: int = LAYOUT_WIDTH, progress: Progress | None = None) -> Clip:
    """The Explorer's dashboard of a run as a clip, titled with its settings and verdict.

    Parameters
    ----------
    result : Result
    path : path ending in ``.gif`` or ``.mp4``
    frames : int
        Wanted number of frames (``plots.frame_indices`` picks about this many saved times).
    fps, width, progress :
        As ``write_clip``.

    Returns
    -------
    Clip
    """
    return write_clip(dashboard(result, frames=frames), path, title=title_lines(result), fps=fps, width=width,
                      progress=progress)
