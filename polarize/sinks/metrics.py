"""The paper's sink metric and induction accuracy (NumPy only; no extra needed).

Sink score of a head: for each query position 1..9 (after BOS, before the last
two inputs), the attention it puts on BOS divided by all the attention in its
row, averaged over those queries and over evaluation sequences. A head scoring
over 0.9 is a sink, counted only in runs whose induction accuracy exceeds 0.95.
"""

from __future__ import annotations

import numpy as np

from polarize.sinks.config import attention_of

__all__ = ["SINK_ACCURACY", "SINK_THRESHOLD", "induction_accuracy", "sink_heads", "sink_scores"]

SINK_THRESHOLD = 0.9
SINK_ACCURACY = 0.95
_EPS = 1e-9


def sink_scores(weights: np.ndarray, *, first: int = 1, last: int = 9) -> np.ndarray:
    """Sink score per layer and head.

    Parameters
    ----------
    weights : numpy.ndarray
        Attention weights, shape (layers, sequences, heads, length, length), rows are queries.
    first, last : int
        Query positions used, inclusive (the paper: 1..9 of 12 inputs).

    Returns
    -------
    numpy.ndarray
        Shape (layers, heads); for a normalized row with all mass on BOS the score is 1.
    """
    weights = np.asarray(weights, dtype=float)
    rows = weights[:, :, :, first:last + 1, :]
    ratio = rows[..., 0] / (rows.sum(axis=-1) + _EPS)
    return ratio.mean(axis=(1, 3))


def counts_sinks(variant: str) -> bool:
    """Whether the sink score means anything for ``variant``: not for raw attention, whose signed,
    unnormalized weights can put any share (or none) on BOS without it being a sink
    (``Attention.signed``)."""
    return not attention_of(variant).signed


def sink_heads(scores: np.ndarray, accuracy: float) -> np.ndarray:
    """Boolean (layers, heads): sink heads of a run (none if its accuracy is not above 0.95)."""
    scores = np.asarray(scores, dtype=float)
    if not accuracy > SINK_ACCURACY:
        return np.zeros(scores.shape, dtype=bool)
    return scores > SINK_THRESHOLD


def induction_accuracy(logits: np.ndarray, targets: np.ndarray) -> float:
    """Fraction of sequences whose last-position argmax is the target.

    Parameters
    ----------
    logits : numpy.ndarray
        Shape (sequences, length, tokens).
    targets : numpy.ndarray
        Shape (sequences, length).
    """
    return float(np.mean(np.argmax(logits[:, -1], axis=-1) == targets[:, -1]))
