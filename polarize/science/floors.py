"""The lowest loss a run can reach, where the theory knows it."""

from __future__ import annotations

import numpy as np

from polarize.config import Experiment
from polarize.losses import KL

__all__ = ["kl_floor"]


def kl_floor(experiment: Experiment) -> float | None:
    """The cross-entropy's floor ``H(p*)`` (``KL.floor``) for a resolved experiment.

    Parameters
    ----------
    experiment : Experiment
        Resolved (its ``target`` drawn), e.g. ``result.experiment``.

    Returns
    -------
    float or None
        None unless the loss is ``"kl"`` with a target.
    """
    if experiment.loss != "kl" or experiment.target is None:
        return None
    return KL(np.asarray(experiment.target, dtype=float)).floor
