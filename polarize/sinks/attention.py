"""The attention variants compared in the paper's section 7 (JAX; import needs the extra).

Each maps queries, keys and values of shape (batch, heads, length, head_dim) to
outputs of the same shape and attention weights (batch, heads, length, length),
causal: a query never weighs a later key. Row normalization divides each row
by its sum (the raw variant by ``max(|sum|, 1)``, since its scores can be
negative or near zero); softmax is normalized by construction.
"""

from __future__ import annotations

from polarize.sinks.backend import jax
from polarize.sinks.config import ATTENTIONS

_jax = jax()
jnp = _jax.numpy

__all__ = ["attend", "attention_weights"]

_EPS = 1e-9


def _causal(length: int):
    return jnp.tril(jnp.ones((length, length), dtype=bool))


def attention_weights(q, k, kind: str, normalized: bool):
    """Causal attention weights of one variant.

    Parameters
    ----------
    q, k : jax.Array
        Shape (batch, heads, length, head_dim).
    kind : str
        ``softmax``, ``sigmoid``, ``linear`` (elu(x) + 1 kernel) or ``raw``.
    normalized : bool
        Divide each row by its sum (ignored for softmax).

    Returns
    -------
    jax.Array
        Shape (batch, heads, length, length); zero above the diagonal.
    """
    if kind not in _WEIGHTS:
        raise ValueError(f"unknown attention {kind!r}")
    mask = _causal(q.shape[-2])
    weights = _WEIGHTS[kind](q, k, 1.0 / jnp.sqrt(q.shape[-1]), mask)
    facts = ATTENTIONS[kind]
    if facts.self_normalized or not normalized:
        return weights
    total = weights.sum(axis=-1, keepdims=True)
    if facts.signed:  # a signed row's sum may be near zero or negative
        return weights / jnp.maximum(jnp.abs(total), 1.0)
    return weights / (total + _EPS)


def _softmax(q, k, scale, mask):
    return _jax.nn.softmax(jnp.where(mask, q @ jnp.swapaxes(k, -1, -2) * scale, -jnp.inf), axis=-1)


def _sigmoid(q, k, scale, mask):
    return jnp.where(mask, _jax.nn.sigmoid(q @ jnp.swapaxes(k, -1, -2) * scale), 0.0)


def _linear(q, k, scale, mask):
    return jnp.where(mask, (_jax.nn.elu(q) + 1.0) @ jnp.swapaxes(_jax.nn.elu(k) + 1.0, -1, -2), 0.0)


def _raw(q, k, scale, mask):
    return jnp.where(mask, q @ jnp.swapaxes(k, -1, -2) * scale, 0.0)


_WEIGHTS = {"softmax": _softmax, "sigmoid": _sigmoid, "linear": _linear, "raw": _raw}
"""Each attention's causal weights before row normalization (its facts are ``ATTENTIONS``'s)."""


def attend(q, k, v, kind: str, normalized: bool):
    """Outputs (batch, heads, length, head_dim) and weights (batch, heads, length, length)."""
    weights = attention_weights(q, k, kind, normalized)
    return weights @ v, weights
