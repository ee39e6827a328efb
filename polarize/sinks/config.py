"""One attention-sink training run, described by a frozen, validated config.

The ``paper`` size follows section 7 of the paper (and its public code): width
128 split evenly between token and position embeddings (concatenated), 2 layers,
4 heads, GELU MLP of ratio 4, AdamW (lr 1e-3, PyTorch's default weight decay
0.01), batch 256, 10 epochs over 100,000 fixed training sequences (3,900 full
batches), loss at the last position plus 0.2 x the mean over earlier ones.
The ``classroom`` size (width 64, batch 64, lr 1e-3, 2,000 steps, 72-98 s of CPU
on a shared 2-core machine) was found by trying lr 1e-2, 3e-3 and 1e-3 (the paper's sweep has 1e-2, 1e-3
and 1e-4): at 1e-3 softmax learns the task and grows a layer-1 sink, and
unnormalized sigmoid learns it without one; at 3e-3 and 1e-2 most non-softmax
runs stay at chance. Unnormalized linear attention learned it at none of them
within the budget (evidence: the issue's closing note).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from polarize.fields import ConfigError, choice, integer, real
from polarize.registry import Registry

__all__ = ["ATTENTIONS", "SIZES", "VARIANTS", "Attention", "SinksConfig", "attention_of", "make_config",
           "variant_config"]


@dataclass(frozen=True, kw_only=True)
class Attention:
    """One kind of attention and its facts (its weights are ``polarize.sinks.attention``'s, under JAX).

    Attributes
    ----------
    name, label : str
        Its key (``SinksConfig.attention``) and its name for people.
    self_normalized : bool
        Its rows sum to 1 by construction (softmax): it has no unnormalized variant.
    signed : bool
        Its weights may be negative (raw ``qk / sqrt d``): a row is divided by ``max(|sum|, 1)``, and
        the share a head puts on BOS marks no sink.
    """

    name: str
    label: str
    self_normalized: bool = False
    signed: bool = False


ATTENTIONS: Registry[Attention] = Registry({a.name: a for a in (
    Attention(name="softmax", label="softmax", self_normalized=True),
    Attention(name="sigmoid", label="sigmoid(qk / sqrt d)"),
    Attention(name="linear", label="linear, elu(x) + 1 kernel"),
    Attention(name="raw", label="raw qk / sqrt d", signed=True),
)})
"""Every kind of attention, in the order tables list them."""

VARIANTS = tuple(a.name if a.self_normalized else f"{a.name}-{rows}" for a in ATTENTIONS.values()
                 for rows in (("",) if a.self_normalized else ("normalized", "unnormalized")))
"""Every variant by its short name (``SinksConfig.variant``): softmax, then the others normalized and not."""


@dataclass(frozen=True, kw_only=True)
class SinksConfig:
    """Everything that determines one run (with ``seed``, the run is reproducible on one machine).

    Parameters
    ----------
    attention : str
        A name in ``ATTENTIONS``.
    normalized : bool
        Divide each attention row by its sum (softmax is always normalized).
    width, layers, heads, mlp_ratio : int
        Transformer shape; ``width`` is split in half between token and position embeddings.
    vocab : int
        Base vocabulary including BOS (token 0); the query token is shifted by ``vocab``.
    distinct : int
        Number of distinct tokens after BOS (sequence length ``distinct + 2`` model inputs).
    batch, steps, train_size, eval_size : int
        Optimizer batch, optimizer steps, fixed training pool, evaluation sequences.
    lr, weight_decay, aux_weight : float
        AdamW learning rate and decoupled weight decay; weight of the earlier-position loss.
    checkpoints : int
        Number of evenly spaced evaluations after step 0 (the last is the final step).
    seed : int
        Seeds the data, the initialisation and the batch order.
    """

    attention: str = "softmax"
    normalized: bool = True
    width: int = 128
    layers: int = 2
    heads: int = 4
    mlp_ratio: int = 4
    vocab: int = 50
    distinct: int = 10
    batch: int = 256
    steps: int = 3900
    train_size: int = 100_000
    eval_size: int = 1000
    lr: float = 1e-3
    weight_decay: float = 0.01
    aux_weight: float = 0.2
    checkpoints: int = 10
    seed: int = 0

    def __post_init__(self) -> None:
        choice("attention", self.attention, tuple(ATTENTIONS))
        if not isinstance(self.normalized, bool):
            raise ConfigError("normalized", f"must be true or false, got {self.normalized!r}")
        if ATTENTIONS[self.attention].self_normalized and not self.normalized:
            raise ConfigError("normalized", f"{self.attention} attention is always normalized")
        for name, low, high in (("width", 4, 1024), ("layers", 1, 8), ("heads", 1, 16),
                                ("mlp_ratio", 1, 8), ("vocab", 4, 1000), ("batch", 1, 4096),
                                ("steps", 0, 1_000_000), ("train_size", 1, 10_000_000),
                                ("eval_size", 1, 100_000), ("checkpoints", 1, 1000),
                                ("seed", 0, 2**31 - 1)):
            integer(name, getattr(self, name), low, high)
        integer("distinct", self.distinct, 2, self.vocab - 1)
        if self.width % (2 * self.heads):
            raise ConfigError("width", f"must be a multiple of 2 x heads = {2 * self.heads}")
        real("lr", self.lr, 0.0, 1.0, open_low=True)
        real("weight_decay", self.weight_decay, 0.0, 1.0)
        real("aux_weight", self.aux_weight, 0.0, 10.0)

    @property
    def tokens(self) -> int:
        """Model vocabulary: base tokens and their shifted query copies."""
        return 2 * self.vocab

    @property
    def length(self) -> int:
        """Model input length: BOS, the distinct tokens, the query."""
        return self.distinct + 2

    @property
    def variant(self) -> str:
        """A short name such as ``softmax`` or ``sigmoid-unnormalized``."""
        if ATTENTIONS[self.attention].self_normalized:
            return self.attention
        return f"{self.attention}-{'normalized' if self.normalized else 'unnormalized'}"

    def to_dict(self) -> dict[str, Any]:
        """All fields, JSON-ready."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SinksConfig:
        """The inverse of ``to_dict``; unknown keys are a ``ConfigError``."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(unknown[0], "is not a field of a sinks run")
        return cls(**data)


#: Named sizes; ``make_config`` adds the attention variant and the seed.
SIZES: dict[str, dict[str, Any]] = {
    "paper": {},
    "classroom": {"width": 64, "batch": 64, "steps": 2000, "train_size": 20_000, "eval_size": 500,
                  "lr": 1e-3, "checkpoints": 16},
}


def make_config(size: str, attention: str, *, normalized: bool = True, seed: int = 0) -> SinksConfig:
    """The config of a named size for one variant and seed."""
    choice("size", size, tuple(SIZES))
    return SinksConfig(attention=attention, normalized=normalized, seed=seed, **SIZES[size])


def variant_config(size: str, variant: str, *, seed: int = 0) -> SinksConfig:
    """``make_config`` for a variant named as ``SinksConfig.variant`` (e.g. ``sigmoid-unnormalized``)."""
    choice("variant", variant, VARIANTS)
    attention, _, rows = variant.partition("-")
    return make_config(size, attention, normalized=rows != "unnormalized", seed=seed)


def attention_of(variant: str) -> Attention:
    """The attention of a variant named as ``SinksConfig.variant`` (``ValueError`` if it names none)."""
    name = variant.partition("-")[0]
    if name not in ATTENTIONS:
        raise ValueError(f"not a variant: {variant!r}")
    return ATTENTIONS[name]
