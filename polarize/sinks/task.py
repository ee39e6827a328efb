"""The induction (bigram copying) task of the paper's section 7.

A full sequence is ``[BOS, t_1 .. t_k, q, c]``: ``k`` distinct tokens drawn from
``1 .. vocab - 1``, then the query ``q = t_j + vocab`` (one of them, shifted so
that the query is a token of its own), then its continuation ``c``, the token
that followed ``t_j`` in the sequence. As in the paper's public code, when
``t_j`` is the last distinct token its continuation is the query itself.
The model reads the sequence without its last token and predicts the next one
at every position; the prediction at the query is the induction answer.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BOS", "make_sequences", "split_inputs"]

BOS = 0


def make_sequences(count: int, *, vocab: int, distinct: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``count`` full induction sequences.

    Parameters
    ----------
    count : int
        Number of sequences.
    vocab : int
        Base vocabulary including BOS; queries are shifted into ``vocab .. 2 vocab - 1``.
    distinct : int
        Distinct tokens per sequence (at most ``vocab - 1``).
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        Integer array, shape (count, distinct + 3).
    """
    # Distinct tokens per row: the first `distinct` entries of a random permutation of 1..vocab-1.
    keys = rng.random((count, vocab - 1))
    body = np.argsort(keys, axis=1)[:, :distinct] + 1
    where = rng.integers(0, distinct, size=count)
    rows = np.arange(count)
    query = body[rows, where] + vocab
    extended = np.concatenate([body, query[:, None]], axis=1)
    answer = extended[rows, where + 1]
    bos = np.full((count, 1), BOS)
    return np.concatenate([bos, body, query[:, None], answer[:, None]], axis=1).astype(np.int32)


def split_inputs(sequences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Model inputs and next-token targets, each shape (count, length - 1)."""
    return sequences[:, :-1], sequences[:, 1:]
