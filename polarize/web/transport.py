"""The transport script (``transport.js``): keys and step buttons for animated figures, in any page.

One script serves both places a figure plays: the app, which loads it in an empty same-origin
iframe beside the charts (``ui.transport``), and the offline HTML download, which carries it inline
(``export.dashboard_html``). Its settings come as JSON in a ``<script id="transport-config">``
element: ``inline`` says whether the charts are in the script's own page or in its parent's.
"""

from __future__ import annotations

import json
from importlib import resources

__all__ = ["script", "script_html"]

_FILE = "transport.js"


def script() -> str:
    """The script's text (package data: its ``KEYS`` and ``BUTTONS`` lines are the key and button maps)."""
    return resources.files(__package__).joinpath(_FILE).read_text(encoding="utf-8")


def script_html(*, inline: bool, autoplay: bool = False, run: int = 0) -> str:
    """The settings as JSON, then the script, as two ``<script>`` elements.

    Parameters
    ----------
    inline : bool
        True when the elements go into the page with the figures (the offline HTML); False for
        the app's iframe, whose script drives the figures of the page around it.
    autoplay : bool
        Play the (first) figure once it has settled ("Keep playing after a change").
    run : int
        Changes the document on each rerun, so that the app's iframe loads (and plays) again.

    Returns
    -------
    str
    """
    # "<" escaped: the JSON cannot end its element early.
    settings = json.dumps({"inline": inline, "autoplay": autoplay, "run": run}).replace("<", "\\u003c")
    return (f'<script id="transport-config" type="application/json">{settings}</script>\n'
            f"<script>\n{script()}</script>")
