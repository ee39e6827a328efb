"""Where starts end, against the naive prediction: the basin map of a triangle and the odds at random starts.

The naive prediction (``flow_field.naive_winner``) names the token with the largest
fitness at the uniform scores; the basin map runs a grid of starts on the
triangle of three tokens (``flow_field.triangle_grid``) and says where it fails, and
``naive_odds`` how often it holds from random logits of a growing scale. Both
are ensembles; under a ``Deadline`` the basin map is run row by row of its grid
(``Deadline.ensemble``), so a budget running out leaves its first rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from polarize.config import Experiment
from polarize.ensemble import Ensemble, simulate_many
from polarize.science.deadline import Deadline
from polarize.science.flow_field import naive_winner, slice_logits, triangle_grid

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["Basins", "NaiveOdds", "basins", "naive_odds"]


@dataclass(frozen=True, kw_only=True, eq=False)
class Basins:
    """Where starts end: an ensemble over a grid on the triangle (or a slice), and the naive guess.

    Attributes
    ----------
    shares : ndarray, shape (K, 3)
        Every start of the grid, as shares of the three ``tokens`` among themselves.
    tokens : tuple of int
    ensemble : Ensemble
        The runs of the first ``len(ensemble)`` starts (whole rows of the grid): all of them, unless a
        deadline left the rest out (``missing``).
    naive : int
        The naive prediction (``naive_winner``).
    resolution : int
        The grid is ``resolution x resolution`` (``triangle_grid``).
    """

    shares: np.ndarray
    tokens: tuple[int, int, int]
    ensemble: Ensemble
    naive: int
    resolution: int

    @property
    def missing(self) -> int:
        """How many starts of the grid were not run (the last ones)."""
        return len(self.shares) - len(self.ensemble)

    @property
    def naive_holds(self) -> np.ndarray:
        """Whether the naive prediction wins, per start run (``len(ensemble)``,)."""
        return self.ensemble.winner == self.naive

    def boundary(self) -> np.ndarray:
        """Shares (B, 3) midway between grid neighbours (among the starts run) on either side of where the
        naive prediction fails."""
        rows = len(self.ensemble) // self.resolution
        holds = self.naive_holds.reshape(rows, self.resolution)
        grid = self.shares[: rows * self.resolution].reshape(rows, self.resolution, 3)
        points = []
        for axis in (0, 1):
            change = np.diff(holds.astype(int), axis=axis) != 0
            low = grid[:-1] if axis == 0 else grid[:, :-1]
            high = grid[1:] if axis == 0 else grid[:, 1:]
            points.append(((low + high) / 2)[change])
        return np.concatenate(points)

    def __repr__(self) -> str:
        # One line for notebooks (the grid is resolution**2 starts): where the naive prediction holds.
        ran = len(self.ensemble)
        held = f"{np.mean(self.naive_holds):.0%}" if ran else "none"
        missing = f", {self.missing} not run" if self.missing else ""
        return (f"Basins({self.resolution} x {self.resolution} grid on tokens {self.tokens}: the naive "
                f"prediction, token {self.naive}, wins from {held} of {ran} starts{missing})")

    def figure(self, **options: Any) -> go.Figure:
        """The basin map (``polarize.basin_figure``): each start coloured by its winner, the naive line.

        ``options`` (``picked``, ``title``, ``height``) go to ``basin_figure``.
        """
        import plotly.graph_objects as go

        from polarize.plots.portrait import basin_figure

        return go.Figure(basin_figure(self, **options), _validate=False)  # the library's edge


def basins(experiment: Experiment, resolution: int, tokens: tuple[int, int, int] = (0, 1, 2),
           *, trajectories: bool = False, deadline: Deadline | None = None) -> Basins | None:
    """Run a ``resolution x resolution`` grid of starts on the triangle of ``tokens``.

    Tokens outside the triangle keep the logits of the experiment's own ``a0``. Under a ``deadline``
    the grid runs row by row (``Deadline.ensemble``, labelled "the basin map"); None when not even its
    first row could be run.
    """
    e, deadline = experiment.resolved(), deadline or Deadline()
    shares = triangle_grid(resolution)
    starts = slice_logits(shares, tokens, np.asarray(e.a0), e.temperature)
    ensemble = deadline.ensemble("the basin map", e, starts,
                                 row=resolution, trajectories=trajectories)
    if ensemble is None:
        return None
    return Basins(shares=shares, tokens=tuple(tokens), ensemble=ensemble, naive=naive_winner(e),
                  resolution=resolution)


@dataclass(frozen=True, kw_only=True)
class NaiveOdds:
    """How often the naive prediction wins, against the scale of random starting logits.

    Attributes
    ----------
    scales : ndarray, shape (S,)
    odds, low, high : ndarray, shape (S,)
        The fraction of starts the naive token won, and its 95% Wilson interval.
    starts : int
        Starts per scale.
    """

    scales: np.ndarray
    odds: np.ndarray
    low: np.ndarray
    high: np.ndarray
    starts: int

    def figure(self, **options: Any) -> go.Figure:
        """The odds against the scale, with their 95% band (``polarize.odds_figure``; ``height``)."""
        import plotly.graph_objects as go

        from polarize.plots.portrait import odds_figure

        return go.Figure(odds_figure(self, **options), _validate=False)  # the library's edge


def naive_odds(experiment: Experiment, scales: ArrayLike, starts: int, seed: int = 0, *,
               deadline: Deadline | None = None) -> NaiveOdds:
    """The chance that ``naive_winner`` wins from ``a(0) = scale * randn(n)``, for each scale (one
    ensemble each, in turn: the ones a ``deadline`` leaves out are missing; the starts are the same)."""
    e, deadline = experiment.resolved(), deadline or Deadline()
    scales, naive, odds = np.asarray(scales, dtype=float), naive_winner(e), []
    noise = np.random.default_rng(seed).standard_normal((len(scales), starts, e.n))
    for k, scale in enumerate(scales):
        ensemble = deadline.part(f"the odds at scales from {scale:.3g}", starts,
                                 lambda k=k: simulate_many(e, scales[k] * noise[k]))
        if ensemble is None:  # and at every scale after it
            break
        odds.append(np.mean(ensemble.winner == naive))
    scales, odds = scales[: len(odds)], np.array(odds)
    z = 1.959964  # two-sided 95%
    centre = (odds + z**2 / (2 * starts)) / (1 + z**2 / starts)
    half = z * np.sqrt(odds * (1 - odds) / starts + z**2 / (4 * starts**2)) / (1 + z**2 / starts)
    return NaiveOdds(scales=scales, odds=odds, low=centre - half, high=centre + half, starts=starts)
