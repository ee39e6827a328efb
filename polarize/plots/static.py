"""Static images of figures (PNG, SVG) through kaleido and the system's Chromium.

Optional: kaleido is the extra ``polarize[export]`` (a hosted app does not need it),
and it drives a Chromium or Chrome installed on the system. ``polarize reproduce``
and the GIF/MP4 clips (``polarize.clips``) both export through here.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

__all__ = ["find_browser", "missing_for_images", "write_images"]


def find_browser() -> str | None:
    """A Chromium or Chrome executable for kaleido's static export, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def missing_for_images(browser: str | None) -> str | None:
    """What static export (PNG, SVG) lacks here, as an instruction, or None when it can run.

    Parameters
    ----------
    browser : str or None
        The browser found, ``find_browser()``.
    """
    if importlib.util.find_spec("kaleido") is None:
        return "kaleido is not installed (pip install 'polarize[export]')"
    if browser is None:
        return "no Chromium or Chrome found (apt-get install chromium)"
    return None


def write_images(figures: dict[Path, Any]) -> None:
    """Write each figure to its path, the format taken from the path's suffix (``.png``, ``.svg``).

    One call for every file, so the browser starts once; two tabs render at a time
    (``plotly.io.write_images`` offers one), which halves the export on two cores.

    Raises
    ------
    RuntimeError
        Naming what kaleido reported for the figures it could not write.
    """
    import kaleido

    jobs = [dict(fig=fig.to_dict(), path=path,
                 opts=dict(format=Path(path).suffix.lstrip("."), width=fig.layout.width,
                           height=fig.layout.height, scale=1))
            for path, fig in figures.items()]
    errors = kaleido.write_fig_from_object_sync(jobs, kopts={"n": 2})  # returns failures, never raises them
    if errors:
        raise RuntimeError("; ".join(str(error) for error in errors))
