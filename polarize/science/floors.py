"""The lowest loss a run can reach, where the theory knows it."""

from __future__ import annotations

import numpy as np

from polarize.config import Experiment
from polarize.losses import LOSSES

__all__ = ["kl_floor"]


def kl_floor(experiment: Experiment) -> float | None:
    """The loss's floor (``LossKind.floor``, the cross-entropy's ``H(p*)``) for a resolved experiment.

    Parameters
    ----------
    experiment : Experiment
        Resolved (its ``target`` drawn), e.g. ``result.experiment``.

    Returns
    -------
    float or None
        None unless its loss has a floor and the experiment a target.
    """
    floor = LOSSES[experiment.loss].floor
    if floor is None or experiment.target is None:
        return None
    return floor(np.asarray(experiment.target, dtype=float))
