"""The repulsion panel's replicator mode: each token's fitness minus the mean fitness, as signed bars.

Under softmax the logits move as ``da_i/dt = s_i (u_i - s.u) / T`` (docs/derivations.md
section 1, the replicator form): a bar above zero is a logit that grows, one
below a logit that falls. The bars play on the dashboard's own frames
(``dashboard(result, repulsion="replicator")``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polarize.diagnostics import Result
from polarize.plots import style
from polarize.plots.numbers import rounded
from polarize.plots.panels import PanelTraces, RunFrames, moving_traces, panel_axis
from polarize.science import simplex_shares

__all__ = ["REPULSION_TITLES", "fitness_gaps", "replicator_panel"]

REPULSION_TITLES: dict[str, str] = {
    "fitness": "Fitness vs score",
    "replicator": "Replicator: u<sub>i</sub> \u2212 s\u00b7u",
}
"""The repulsion panel's modes: mode -> the panel's title."""
_TOP = 1.18
"""Height of the labels above and below the bars, in units of the largest bar."""
_SCALE = 1.45
"""Height of the scale's label: a row of its own above the labels (beside them it ran into
"logit grows" and the tick "1" in a dashboard panel 160 px wide)."""


def fitness_gaps(result: Result) -> np.ndarray:
    """Each token's fitness minus the mean fitness, ``u_i - q.u`` with ``q`` the shares of ``s``.

    Parameters
    ----------
    result : Result
        ``K`` saved times, ``n`` tokens.

    Returns
    -------
    ndarray, shape (K, n)
        ``u - s.u`` for scores on the simplex; off it, the mean is over the shares ``|s_i| / sum |s_j|``.
    """
    u = np.asarray(result.u, dtype=float)
    shares = simplex_shares(np.asarray(result.s, dtype=float))
    return u - np.sum(shares * u, axis=1, keepdims=True)


def replicator_panel(view: RunFrames, xa: str, ya: str) -> PanelTraces:
    """The repulsion panel as the replicator lens: a bar ``u_i - s.u`` per token, in the token colours.

    The gaps fade by decades over a run (the fitness vanishes with the loss's gradient), while the
    dashboard's axes stay fixed: so the bars at each time are divided by the largest ``|u_j - s.u|``
    then, which a label above them gives; each bar's hover and ``customdata`` hold its value.
    For the logistic loss ``u = c p`` with ``c > 0``, so the bars are also ``p_i - s.p``, scaled.
    """
    n, ink, muted = view.n, style.PALETTE.ink, style.PALETTE.muted
    gap = fitness_gaps(view.result)
    largest = np.max(np.abs(gap), axis=1)
    scaled = gap / np.where(largest > 0, largest, 1.0)[:, None]
    on = dict(xaxis=xa, yaxis=ya)
    styles = [
        dict(type="bar", uid="replicator-bars", name="u\u1d62 \u2212 s\u00b7u", x=list(range(n)),
             marker=dict(color=view.colors, line=dict(color=ink, width=0.5 if n <= 24 else 0)),
             hovertemplate="token %{x}: u \u2212 s\u00b7u = %{customdata:.3g}<extra></extra>", **on),
        dict(uid="replicator-scale", name="scale", mode="text", x=[n - 0.45], y=[_SCALE],
             textposition="middle left", textfont=style.font(-3, muted), hoverinfo="skip", **on),
    ]

    def at(k: int) -> list[dict[str, Any]]:
        return [dict(y=rounded(scaled[k]), customdata=rounded(gap[k])),
                dict(text=[f"bars \u00f7 {largest[k]:.2g}"])]  # glyphs a clip font has

    axes = dict(x=panel_axis(range=[-0.6, n - 0.4], title="token", zeroline=False,
                             **({"dtick": 1} if n <= 12 else {})),
                y=panel_axis(range=[-_TOP - 0.12, _SCALE + 0.13],
                             title="u<sub>i</sub> \u2212 s\u00b7u (scaled)", tickvals=[-1, -0.5, 0, 0.5, 1],
                             zeroline=True, zerolinecolor=ink,
                             zerolinewidth=2))
    signs = (("\u25b2 logit grows", _TOP), ("\u25bc logit falls", -_TOP))
    notes = [dict(text=words, x=-0.55, y=y, xref=xa, yref=ya, xanchor="left", showarrow=False,
                  font=style.font(-3, muted))
             for words, y in signs
             if view.result.experiment.sigma.replicator]  # where the bars' sign is the logit's direction
    return PanelTraces(static=[], moving=moving_traces(styles, at(int(view.shown[0]))), at=at, axes=axes,
                       annotations=notes)
