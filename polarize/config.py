"""The experiment: one frozen, validated, hashable description of a run.

``Experiment`` is checked once, on the way in; every error is a ``ConfigError``
naming the field and what it accepts (the checkers are in ``polarize.fields``).
It round-trips through JSON (``to_dict``/``from_dict``, ``polarize.serialize``);
the app's links go through each page's controls (``polarize.web.links``).

Arrays not given are drawn from ``seed`` (``polarize.draws`` documents the
order). ``resolved()`` returns the same experiment with every drawn array
written in explicitly: that object alone reproduces the run. It draws once per
experiment object and remembers the answer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from polarize import notebook, serialize
from polarize.budget import descent_steps_message
from polarize.draws import draw_missing
from polarize.env import limits
from polarize.fields import ArrayInput, ConfigError, FrozenArray, choice, integer, matrix, real, vector
from polarize.losses import LOSSES
from polarize.methods import METHODS as _METHODS
from polarize.models import MODELS as _MODELS
from polarize.normalizers import NORMALIZERS, Normalizer, make_normalizer, takes
from polarize.save_at import SaveAt, save_at

__all__ = ["A_INITS", "METHODS", "MODELS", "V_INITS", "ConfigError", "Experiment", "FrozenArray",
           "limits"]

MODELS = _MODELS.names
"""The names of ``polarize.models.MODELS`` (a live view)."""
METHODS = _METHODS.names
"""The names of ``polarize.methods.METHODS`` (a live view)."""
A_INITS = ("zeros", "gaussian", "shifted", "vertex")
V_INITS = ("gaussian", "zeros", "identity")

MIN_TIME = 1e-12
"""Smallest ``lr`` and ``horizon``: no denormal steps."""
MAX_STEP_RATIO = 1e305
"""Largest ``horizon / lr``: the saved times are a log grid over that many steps, so it must stay finite."""
MAX_EPS = 1e-3
"""Largest ``eps`` added to a normalizing sum (the notebook's is 1e-10)."""
_RESOLVED = "_resolved"
"""Instance attribute (not a field) memoizing ``resolved()``: outside eq, hash, repr and pickles."""
_SIGMA = "_sigma"
"""Instance attribute (not a field) memoizing ``sigma``: outside eq, hash, repr and pickles."""
_ITSELF = "itself"
"""The memo of an experiment that is already resolved (a marker, not a reference cycle)."""


@dataclass(frozen=True, kw_only=True)
class Experiment:
    """A complete, validated description of one run.

    Parameters
    ----------
    model : str
        A key of ``polarize.models.MODELS``: ``"value"``, ``beta = V sigma(a)``, or ``"tied"``,
        ``beta = U sigma(U a)`` (needs ``d == n``).
    n : int
        Number of tokens (logits).
    d : int
        Output dimension (rows of ``V``; classes for ``kl``).
    loss : str
        A key of ``polarize.LOSSES``: logistic on the margin ``beta_*^T beta`` (or on a labelled
        set ``X, y``); square ``1/2 |X beta - y|^2`` (default ``X = I``, ``y = beta_*``);
        cross-entropy ``-sum p* log softmax(beta)``.
    normalizer : str
        A key of ``polarize.NORMALIZERS``.
    temperature : float
        Softmax temperature (softmax only).
    eps : float
        Added to the normalizing sum of relu, l1, l2 and sum (ignored by the
        others, which have none): ``s = |a| / (sum |a| + eps)`` for l1. 0 is the
        exact map; the ``paper-*`` presets set the official notebook's 1e-10.
    method : str
        A key of ``polarize.methods.METHODS``: ``"flow"``, exact gradient flow, or ``"gd"``, gradient
        descent with step ``lr``.
    lr : float
        Learning rate of ``gd``. Both methods also save their first positive
        time at ``lr`` (one step), so that flow and descent share time grids.
    horizon : float
        Final time; ``gd`` takes ``round(horizon / lr)`` steps (and so ends at
        that many steps of ``lr`` when ``horizon / lr`` is not whole).
    samples : int
        Number of saved times, log-spaced between ``lr`` and ``horizon``, plus ``t = 0``.
    seed : int
        Seed of the ``RandomState`` that draws every random array.
    a_init : {"zeros", "gaussian", "shifted", "vertex"}
        Logits ``0``, ``a_scale * randn``, ``a_shift + a_scale * randn``, or
        ``a_scale * randn + a_shift * e_{a_vertex}`` (near a vertex).
    a_scale, a_shift : float
    a_vertex : int
    V_init : {"gaussian", "zeros", "identity"}
        ``V_scale * randn``, zeros, or ``V_scale * I`` (``eye(d, n)``).
    V_scale : float
    kappa : float or None
        Square loss only: draw ``X`` (``m x d``) with condition number ``kappa`` and ``y = randn(m)``.
    m : int or None
        Rows of the drawn ``X`` (default ``d``).
    a0 : array of n floats, optional
        Explicit arrays (lists or numpy arrays) override the drawn ones; they are
        stored as read-only ``FrozenArray`` so the experiment stays hashable.
    V0 : array of d rows of n floats, optional
    target : array of d floats, optional
        ``beta_*`` (normalized to unit length) for logistic and square; the
        distribution ``p*`` (normalized to sum one) for kl.
    X : array of m rows of d floats, optional
        Explicit design: square loss, or logistic on the labelled set ``(X, y)``.
    y : array of m floats, optional
        Regression targets (square) or labels in {-1, +1} (logistic).
    """

    model: str = "value"
    n: int = 8
    d: int = 8
    loss: str = "logistic"
    normalizer: str = "softmax"
    temperature: float = 1.0
    eps: float = 0.0
    method: str = "flow"
    lr: float = 0.1
    horizon: float = 1e5
    samples: int = 200
    seed: int = 0
    a_init: str = "zeros"
    a_scale: float = 0.1
    a_shift: float = 1.0
    a_vertex: int = 0
    V_init: str = "gaussian"
    V_scale: float = 0.1
    kappa: float | None = None
    m: int | None = None
    a0: ArrayInput | None = field(default=None, repr=False)
    V0: ArrayInput | None = field(default=None, repr=False)
    target: ArrayInput | None = field(default=None, repr=False)
    X: ArrayInput | None = field(default=None, repr=False)
    y: ArrayInput | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        lim = limits()
        self._check_sizes(lim)
        self._check_map_and_method(lim)
        self._check_inits()
        # The order of the checks is the order in which errors are reported (a link reader drops
        # the first culprit): the design's size, the explicit start and target, then the data set.
        self._check_design_size(lim)
        self._check_start_and_target()
        self._check_data(lim)

    def _put(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    def _check_sizes(self, lim: dict[str, float]) -> None:
        self._put("model", choice("model", self.model, tuple(MODELS)))
        self._put("n", integer("n", self.n, 2, lim["max_n"]))
        self._put("d", integer("d", self.d, 1, lim["max_d"]))
        n, d = self.n, self.d
        if _MODELS[self.model].tied and d != n:
            raise ConfigError("d", f"must equal n for the {self.model} model (U is n x n), got d={d}, n={n}")
        if d * n > lim["max_size"]:
            raise ConfigError(
                "d", f"n * d = {d * n} exceeds the cap of {lim['max_size']} (POLARIZE_MAX_SIZE)")

    def _check_map_and_method(self, lim: dict[str, float]) -> None:
        self._put("loss", choice("loss", self.loss, tuple(LOSSES)))
        self._put("normalizer", choice("normalizer", self.normalizer, tuple(NORMALIZERS)))
        self._put("temperature", real("temperature", self.temperature, 0.0, 1e3, open_low=True))
        if self.temperature != 1.0 and not takes(self.normalizer, "temperature"):
            with_one = [name for name in NORMALIZERS if takes(name, "temperature")]
            raise ConfigError("temperature", f"applies to the {' and '.join(with_one)} normalizer"
                              f"{'s' if len(with_one) > 1 else ''} only; leave it at 1")
        # A guard against a zero sum, as in the notebook, not a second model: at most MAX_EPS.
        self._put("eps", real("eps", self.eps, 0.0, MAX_EPS))
        self._put("method", choice("method", self.method, tuple(METHODS)))
        # A floor on lr and horizon keeps horizon / lr (the saved step counts) a finite number.
        self._put("lr", real("lr", self.lr, MIN_TIME, 1e3))
        self._put("horizon", real("horizon", self.horizon, MIN_TIME, lim["max_horizon"]))
        if self.horizon / self.lr > MAX_STEP_RATIO:
            raise ConfigError("lr", f"is too small for horizon {self.horizon:g}: horizon / lr, the step "
                              f"count that sets the saved times, must stay below {MAX_STEP_RATIO:g}")
        steps = _METHODS[self.method].steps(self.horizon, self.lr)  # finite: the ratio is bounded above
        if steps is not None:
            if steps < 1:
                raise ConfigError("horizon",
                                  f"must be at least one step (lr = {self.lr:g}) for {self.method}")
            if steps > lim["max_steps"]:
                raise ConfigError("horizon", descent_steps_message(steps, lim["max_steps"]))
        self._put("samples", integer("samples", self.samples, 2, lim["max_samples"]))
        self._put("seed", integer("seed", self.seed, 0, 2**32 - 1))

    def _check_inits(self) -> None:
        self._put("a_init", choice("a_init", self.a_init, A_INITS))
        self._put("a_scale", real("a_scale", self.a_scale, 0.0, 1e3))
        self._put("a_shift", real("a_shift", self.a_shift, -1e3, 1e3))
        self._put("a_vertex", integer("a_vertex", self.a_vertex, 0, self.n - 1))
        self._put("V_init", choice("V_init", self.V_init, V_INITS))
        self._put("V_scale", real("V_scale", self.V_scale, 0.0, 1e3))

    def _check_design_size(self, lim: dict[str, float]) -> None:
        """``kappa`` and ``m``: the condition number and rows of a drawn design."""
        if self.kappa is not None:
            if not LOSSES[self.loss].takes_kappa:
                raise ConfigError("kappa", f"applies to the {_losses_that('takes_kappa')} only")
            self._put("kappa", real("kappa", self.kappa, 1.0, 1e6))
        if self.m is not None:
            if self.kappa is None:
                raise ConfigError("m", "sets the rows of the drawn X: give kappa too")
            self._put("m", integer("m", self.m, 1, lim["max_d"]))
        if self.kappa is not None and (self.m or self.d) * self.d > lim["max_size"]:
            size = (self.m or self.d) * self.d
            raise ConfigError("m" if self.m else "kappa",
                              f"the drawn X (m * d = {size}) exceeds the cap of {lim['max_size']} "
                              "(POLARIZE_MAX_SIZE)")

    def _check_start_and_target(self) -> None:
        """The explicit start ``a0``, ``V0`` and the ``target`` (normalized)."""
        if self.a0 is not None:
            self._put("a0", vector("a0", self.a0, self.n))
        if self.V0 is not None:
            self._put("V0", matrix("V0", self.V0, (self.d, self.n)))
        if self.target is not None:
            target = _normalized_target(self.loss, vector("target", self.target, self.d))
            self._put("target", FrozenArray(target))

    def _check_data(self, lim: dict[str, float]) -> None:
        """An explicit design ``X`` and its targets or labels ``y``."""
        if self.X is not None:
            if LOSSES[self.loss].data is None:
                raise ConfigError("X", f"applies to the {_losses_that('data')} only")
            if self.kappa is not None:
                raise ConfigError("X", "give either an explicit X or kappa, not both")
            most = min(lim["max_d"], lim["max_size"] // self.d)
            self._put("X", matrix("X", self.X, (None, self.d), most_rows=most))
        if self.y is not None:
            if self.rows is None:
                raise ConfigError("y", "needs a design: give X (or kappa for the square loss)")
            self._put("y", vector("y", self.y, self.rows))
            labels = LOSSES[self.loss].labels
            if labels is not None and not np.all(np.isin(self.y, labels)):
                raise ConfigError("y", f"labels of the {self.loss} loss must be "
                                  f"{' or '.join(f'{v:+g}' for v in labels)}")
        elif self.X is not None:
            raise ConfigError("y", f"{self.loss} loss on a data set X needs {LOSSES[self.loss].data}")

    # ---- drawing ----------------------------------------------------------------

    @property
    def rows(self) -> int | None:
        """Rows ``m`` of the design ``X``, or None when there is none (``X = I`` or kl)."""
        if self.X is not None:
            return len(self.X)
        if self.kappa is not None:
            return self.m or self.d
        return None

    def resolved(self) -> Experiment:
        """This experiment with every random array drawn and written in explicitly.

        Drawn once per object: later calls return the same (immutable) experiment.
        """
        cached = self.__dict__.get(_RESOLVED)
        if cached is None:
            changes = draw_missing(self)
            if changes:
                cached = dataclasses.replace(self, **changes)
                object.__setattr__(cached, _RESOLVED, _ITSELF)  # nothing is left to draw there
                object.__setattr__(cached, _SIGMA, self.sigma)  # the draws leave the normalizer as it is
            else:
                cached = _ITSELF
            object.__setattr__(self, _RESOLVED, cached)
        return self if cached is _ITSELF else cast(Experiment, cached)

    def __repr__(self) -> str:
        # Short, for notebooks: the settings that differ from the defaults (arrays by shape only).
        return notebook.experiment_repr(self)

    def _repr_html_(self) -> str:
        return notebook.experiment_html(self)

    @property
    def sigma(self) -> Normalizer:
        """The normalizer this experiment names (``normalizer``, ``temperature``, ``eps``), built once.

        Every layer asks the experiment for it (the engine's right-hand sides, the check of a start,
        the verdict's ``on_simplex``) rather than building its own from the name.
        """
        cached = self.__dict__.get(_SIGMA)
        if cached is None:
            cached = make_normalizer(self.normalizer, temperature=self.temperature, eps=self.eps)
            object.__setattr__(self, _SIGMA, cached)
        return cached

    def save_at(self, samples: int | None = None) -> SaveAt:
        """Where a run of this experiment is saved (``polarize.save_at``, its end rule there).

        Parameters
        ----------
        samples : int, optional
            At most this many saved times (default ``samples``); 2: the start and the end.

        Returns
        -------
        SaveAt
            ``t`` (K,), the saved times, and ``steps`` (K,), the whole steps of ``lr`` they are.
        """
        return save_at(self.horizon, self.lr, self.samples if samples is None else samples, self.method)

    def __getstate__(self) -> dict[str, Any]:
        # The memos of resolved() and sigma stay behind: a pickle (to a worker) carries the fields only.
        return {k: v for k, v in self.__dict__.items() if k not in (_RESOLVED, _SIGMA)}

    def varied(self, **changes: Any) -> Experiment:
        """This experiment with some fields changed, and its explicit arrays kept only where still valid.

        An explicit array (its own draw, or one given) is dropped, to be drawn
        afresh from the seed by the init fields, when a field it depends on
        changes: sizes, loss, model and seed concern every array; ``a_*`` fields
        ``a0``; ``V_*`` fields ``V0``; ``kappa`` and ``m`` the design ``X`` and
        ``y``. Arrays passed in ``changes`` are used as given.
        """
        # Only scalar fields decide what is dropped; arrays (numpy ones too) are never compared.
        changed = {k for k, v in changes.items() if k not in serialize.ARRAY_FIELDS and v != getattr(self, k)}
        drop: set[str] = set()
        if changed & {"n", "d", "loss", "seed", "model"}:
            drop.update(serialize.ARRAY_FIELDS)
        if any(k.startswith("a_") for k in changed):
            drop.add("a0")
        if any(k.startswith("V_") for k in changed):
            drop.add("V0")
        if changed & {"kappa", "m"}:
            drop.update({"X", "y"})
        cleared: dict[str, Any] = {k: None for k in drop if getattr(self, k) is not None and k not in changes}
        return dataclasses.replace(self, **cleared, **changes)

    # ---- serialization (polarize.serialize) ----------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (arrays as nested lists, unset ones omitted)."""
        return serialize.to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Experiment:
        """Build from a mapping such as ``to_dict()`` gives; unknown keys are errors."""
        return serialize.from_dict(cls, data)

    def to_json(self, **kwargs: Any) -> str:
        """``to_dict()`` as strict JSON text (``kwargs`` go to ``json.dumps``; its fields are finite)."""
        return serialize.strict_dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_json(cls, text: str) -> Experiment:
        """Build from JSON text such as ``to_json()`` gives."""
        return serialize.from_json(cls, text)


def _losses_that(fact: str) -> str:
    """The losses with ``fact`` set, in words: ``"square loss"``, ``"logistic and square losses"``."""
    names = [name for name, kind in LOSSES.items() if getattr(kind, fact)]
    return f"{' and '.join(names)} loss{'es' if len(names) > 1 else ''}"


def _normalized_target(loss: str, given: FrozenArray) -> np.ndarray:
    """The loss's target normalized (``LossKind.target``: ``p*`` summing to one, ``beta_*`` of unit
    length); a normalized input kept bit for bit."""
    target: np.ndarray = np.array(given)
    kind = LOSSES[loss].target
    if not kind.admits(target):
        raise ConfigError("target", f"must be {kind.needs} for the {loss} loss")
    size = kind.size
    with np.errstate(over="ignore", under="ignore"):
        if abs(size(target) - 1.0) <= 1e-12:
            return target
    # Scaled by the largest entry first, so that neither the sum nor the squares over- or underflow.
    target = target / np.max(np.abs(target))
    target = target / size(target)
    return target + 0.0

