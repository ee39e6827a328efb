"""What is measured at each saved time, and the result object that holds it.

A ``Recorder`` is fed one state at a time (scores, logits, fitness, loss,
gradient norms and a few numbers about ``V``) and keeps only those vectors, so
memory grows with ``samples * n``, never with ``samples * n * d``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from polarize import notebook
from polarize.config import Experiment
from polarize.losses import entropy
from polarize.status import Status

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

__all__ = ["Result", "Recorder", "ScoresTooSmall", "top_singular_values", "N_SINGULAR"]

N_SINGULAR = 3
"""How many leading singular values of ``V`` are saved at each time."""


def top_singular_values(V: np.ndarray, k: int = N_SINGULAR) -> np.ndarray:
    """The ``k`` largest singular values of ``V``, zero-padded to length ``k``."""
    values = np.linalg.svd(V, compute_uv=False)[:k]
    return np.pad(values, (0, k - len(values)))


class ScoresTooSmall(FloatingPointError):
    """The scores are so close to zero that ``s_i / max s`` or the entropy leave the floats."""


def _derived(s: np.ndarray) -> dict[str, np.ndarray]:
    """What ``Result`` derives from the scores ``s`` (K, n): entropy, ``s_i / max s``, ``1 - max s``."""
    biggest = np.max(s, axis=1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.where(biggest[:, None] != 0, s / biggest[:, None], 0.0)
        # Every score 0 (a dead ReLU run) is no distribution: no entropy, rather than a one-hot's 0.
        h = np.where(dead_rows(s), np.nan, entropy(s))
        return {"entropy": h, "ratio": ratio, "one_minus_max": 1.0 - biggest}


def dead_rows(s: np.ndarray) -> np.ndarray:
    """Whether each row of scores ``s`` (K, n) is all 0 (every token switched off): bool, shape (K,)."""
    return ~np.any(np.asarray(s) != 0, axis=-1)


def _frozen(x: Any) -> np.ndarray:
    arr = np.array(x, dtype=float)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, kw_only=True, eq=False)
class Result:
    """A simulated trajectory at the saved times (K of them, ``t[0] = 0``).

    Attributes
    ----------
    experiment : Experiment
        The resolved experiment (drawn arrays included): rerunning it gives this result.
    t : ndarray, shape (K,)
        Saved times; ``t[-1] = horizon`` unless the run stopped early (``status``).
    s, a, u : ndarray, shape (K, n)
        Scores ``sigma(a)``, logits, and fitness ``u = -V^T grad l``.
    p : ndarray, shape (K, n), or None
        Value projections ``V^T beta_*`` (logistic loss on a target direction only).
    loss, entropy, effective_support, one_minus_max : ndarray, shape (K,)
        Loss; entropy of ``s`` (nats, of ``|s|`` normalized when ``s`` leaves the
        simplex); ``exp(entropy)``; ``1 - max s``. Where every score is 0 (a dead
        ReLU run) ``s`` is no distribution: entropy and effective support are NaN.
    ratio : ndarray, shape (K, n)
        Each score over the largest, ``s_i / max s``.
    grad_norm_V, grad_norm_a : ndarray, shape (K,)
        Norms of the loss gradient in ``V`` (Frobenius) and in ``a``.
    singular_values : ndarray, shape (K, 3)
        Leading singular values of ``V`` (zero-padded when ``min(n, d) < 3``).
    column_norms : ndarray, shape (K, n)
        Norm of each column of ``V``.
    V_final : ndarray, shape (d, n)
    status : Status
        ``Status.OUT_OF_TIME``: stopped by its wall-clock budget (``simulate(budget=...)``). Given as its
        string (a result read back from a file), it is read as that status.
    message : str
        Empty when finished; otherwise why the run stopped (in words).
    n_evaluations : int
        Gradient evaluations made (vector-field calls, or descent steps).
    switches : int
        Times the flow met a kink of the normalizer (a coordinate switched off,
        or caught on or released from the kink of l1), each located and restarted at.
    note : str
        What the flow met on the way, in words (switches at a normalizer's kinks,
        coordinates held on one); empty when there is nothing to say.
    """

    experiment: Experiment
    t: np.ndarray
    s: np.ndarray
    a: np.ndarray
    u: np.ndarray
    p: np.ndarray | None
    loss: np.ndarray
    entropy: np.ndarray
    effective_support: np.ndarray
    one_minus_max: np.ndarray
    ratio: np.ndarray
    grad_norm_V: np.ndarray
    grad_norm_a: np.ndarray
    singular_values: np.ndarray
    column_norms: np.ndarray
    V_final: np.ndarray
    status: Status = Status.FINISHED
    message: str = ""
    n_evaluations: int = 0
    switches: int = 0
    note: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status(self.status))

    @property
    def winner(self) -> int:
        """Index of the largest final score (0 for a ``dead`` run, which has no winner: check ``dead``)."""
        return int(np.argmax(self.s[-1]))

    @property
    def dead(self) -> bool:
        """Whether every final score is 0 (a dead ReLU run): no distribution, so no entropy and no winner."""
        return bool(dead_rows(self.s[-1:])[0])

    @property
    def winner_column_norm(self) -> np.ndarray:
        """Norm of ``V``'s column at the running ``argmax s``, shape (K,)."""
        return self.column_norms[np.arange(len(self.t)), np.argmax(self.s, axis=1)]

    @property
    def finished(self) -> bool:
        return self.status.ok

    def __repr__(self) -> str:
        # One line for notebooks (the series are K x n arrays): the settings, how far it ran, the winner.
        return notebook.result_repr(self)

    def _repr_html_(self) -> str:
        return notebook.result_html(self)

    def figure(self, kind: str = "dashboard", **options: Any) -> go.Figure:
        """The app's own figure of this run, to show inline in a notebook.

        Parameters
        ----------
        kind : {"dashboard", "paper", "rate"}
            ``"dashboard"``: the Explorer's animated five-panel dashboard (``polarize.dashboard``);
            ``"paper"``: the paper's static figure of a run, scores and value projections on log axes;
            ``"rate"``: ``1 - max s`` against its asymptotics and their correction (a logistic run on a
            target direction only).
        **options
            Passed to the figure's builder (for the dashboard: ``frames``, ``height``, ``repulsion``).

        Returns
        -------
        plotly.graph_objects.Figure
        """
        return notebook.result_figure(self, kind, **options)

    def to_pandas(self, per: str = "token") -> pd.DataFrame:
        """The saved series as a tidy ``pandas.DataFrame``.

        Parameters
        ----------
        per : {"token", "time"}
            ``"token"``: one row per saved time and token (``K * n`` rows): ``step, t, token, s, a, u,
            ratio, column_norm`` and ``p`` when the run has it. ``"time"``: one row per saved time
            (``K`` rows): ``step, t, loss, entropy, effective_support, one_minus_max, grad_norm_V,
            grad_norm_a, sv1, sv2, sv3, leader``.

        Returns
        -------
        pandas.DataFrame
        """
        return notebook.result_frame(self, per)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the resolved config plus every saved series as lists."""
        return notebook.as_dict(self)


@dataclass
class Recorder:
    """Accumulates diagnostics sample by sample, then builds a ``Result``."""

    rows: dict[str, list] = field(default_factory=dict)

    def add(
        self,
        *,
        s: np.ndarray,
        a: np.ndarray,
        u: np.ndarray,
        loss: float,
        grad_norm_V: float,
        grad_norm_a: float,
        singular_values: np.ndarray,
        column_norms: np.ndarray,
        p: np.ndarray | None = None,
        batch: bool = False,
    ) -> None:
        """Add one saved time, or with ``batch=True`` several (a leading axis on every value)."""
        values = dict(s=s, a=a, u=u, loss=loss, grad_norm_V=grad_norm_V, grad_norm_a=grad_norm_a,
                      singular_values=singular_values, column_norms=column_norms)
        if p is not None:
            values["p"] = p
        arrays = {key: np.array(value, dtype=float) for key, value in values.items()}
        if not batch:
            arrays = {key: value[None] for key, value in arrays.items()}
        bad = [key for key, value in arrays.items() if not np.all(np.isfinite(value))]
        if bad:
            # Refuse the sample rather than let a NaN reach a figure.
            raise FloatingPointError(f"{', '.join(bad)} no longer finite (the run diverges)")
        live = ~dead_rows(arrays["s"])
        derived = [key for key, value in _derived(arrays["s"]).items()
                   if not np.all(np.isfinite(value[live]))]
        if derived:
            # e.g. linear scores [-1, -1e-320]: s / max s is 1e320. A finished run holds finite numbers only.
            raise ScoresTooSmall(f"{', '.join(derived)} of the scores would not be a finite number (the "
                                 "largest score is too close to 0)")
        for key, value in arrays.items():
            self.rows.setdefault(key, []).append(value)

    def __len__(self) -> int:
        return sum(len(chunk) for chunk in self.rows.get("loss", ()))

    def result(self, experiment: Experiment, t: np.ndarray, V_final: np.ndarray, *,
               status: Status = Status.FINISHED, message: str = "", n_evaluations: int = 0, switches: int = 0,
               note: str = "") -> Result:
        k = len(self)
        series = {key: _frozen(np.concatenate(v)) for key, v in self.rows.items()}
        s = series["s"]
        derived = _derived(s)  # finite: add() refused any sample where it is not
        h = derived["entropy"]
        return Result(
            experiment=experiment, t=_frozen(t[:k]), s=s, a=series["a"], u=series["u"],
            p=series.get("p"), loss=series["loss"], entropy=_frozen(h),
            effective_support=_frozen(np.exp(h)), one_minus_max=_frozen(derived["one_minus_max"]),
            ratio=_frozen(derived["ratio"]), grad_norm_V=series["grad_norm_V"],
            grad_norm_a=series["grad_norm_a"],
            singular_values=series["singular_values"], column_norms=series["column_norms"],
            V_final=_frozen(V_final), status=status, message=message, n_evaluations=n_evaluations,
            switches=switches, note=note,
        )
