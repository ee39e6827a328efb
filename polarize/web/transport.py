"""The transport script (``transport.js``): keys and step buttons for animated figures, in any page.

One script serves both places a figure plays, each in the page with the figures: the app's chart
element, whose module starts with it (``ui.charts``; ``ui.transport`` draws the element that installs
it), and the offline HTML download, which carries it inline (``export.dashboard_html``), its settings
as JSON in a ``<script id="transport-config">`` element (``script_html``).
"""

from __future__ import annotations

import json
from importlib import resources

__all__ = ["script", "script_html"]

_FILE = "transport.js"


def script() -> str:
    """The script's text (package data: its ``KEYS`` and ``BUTTONS`` lines are the key and button maps)."""
    return resources.files(__package__).joinpath(_FILE).read_text(encoding="utf-8")


def script_html(*, autoplay: bool = False) -> str:
    """The settings as JSON, then the script, as two ``<script>`` elements for a page with the figures.

    Parameters
    ----------
    autoplay : bool
        Play the (first) figure once it has settled.

    Returns
    -------
    str
    """
    # "<" escaped: the JSON cannot end its element early.
    settings = json.dumps({"autoplay": autoplay}).replace("<", "\\u003c")
    return (f'<script id="transport-config" type="application/json">{settings}</script>\n'
            f"<script>\n{script()}</script>")
