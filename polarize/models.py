"""The models a configuration names: the value model and the tied model, each with its own facts.

``MODELS`` (a ``polarize.registry.Registry``) holds a ``Model`` for each: the sizes it needs, which
of the integrator's systems may run it (``polarize.systems.SYSTEMS``, by their ``name``; the first
there that applies runs it) and its mark in a settings line. Their gradients are in
``polarize.model``.
"""

from __future__ import annotations

from dataclasses import dataclass

from polarize.registry import Registry

__all__ = ["MODELS", "Model"]


@dataclass(frozen=True, kw_only=True)
class Model:
    """A model a configuration names (``Experiment.model``).

    Attributes
    ----------
    name : str
        Its key in ``MODELS``.
    label : str
        Its name for people, with its formula.
    tied : bool
        Whether ``U`` enters twice, ``beta = U sigma(U a)``: the scores are then ``sigma(U a)`` and
        ``U`` is n x n (so ``d`` must equal ``n``); else ``beta = V sigma(a)``.
    systems : tuple of str
        The names of the systems (``polarize.systems.SYSTEMS``) that may run it.
    mark : str
        What a settings line adds to its sizes (``" (tied)"``); empty for the plain model.
    """

    name: str
    label: str
    tied: bool
    systems: tuple[str, ...]
    mark: str = ""


MODELS: Registry[Model] = Registry({model.name: model for model in (
    Model(name="value", label="value model \u03b2 = V \u03c3(a)", tied=False,
          systems=("closed", "reduced", "value")),
    Model(name="tied", label="tied model \u03b2 = U \u03c3(U a)", tied=True, systems=("tied",),
          mark=" (tied)"),
)})
"""Every model a configuration can name."""
