"""The attention variants compared in the paper's section 7 (JAX; import needs the extra).

Each maps queries, keys and values of shape (batch, heads, length, head_dim) to
outputs of the same shape and attention weights (batch, heads, length, length),
causal: a query never weighs a later key. Row normalization divides each row
by its sum (the raw variant by ``max(|sum|, 1)``, since its scores can be
negative or near zero); softmax is normalized by construction.
"""

from __future__ import annotations

from polarize.sinks.backend import jax

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
    mask = _causal(q.shape[-2])
    scale = 1.0 / jnp.sqrt(q.shape[-1])
    if kind == "softmax":
        scores = jnp.where(mask, q @ jnp.swapaxes(k, -1, -2) * scale, -jnp.inf)
        return _jax.nn.softmax(scores, axis=-1)
    if kind == "sigmoid":
        weights = _jax.nn.sigmoid(q @ jnp.swapaxes(k, -1, -2) * scale)
    elif kind == "linear":
        weights = (_jax.nn.elu(q) + 1.0) @ jnp.swapaxes(_jax.nn.elu(k) + 1.0, -1, -2)
    elif kind == "raw":
        weights = q @ jnp.swapaxes(k, -1, -2) * scale
    else:
        raise ValueError(f"unknown attention {kind!r}")
    weights = jnp.where(mask, weights, 0.0)
    if not normalized:
        return weights
    total = weights.sum(axis=-1, keepdims=True)
    if kind == "raw":
        return weights / jnp.maximum(jnp.abs(total), 1.0)
    return weights / (total + _EPS)


def attend(q, k, v, kind: str, normalized: bool):
    """Outputs (batch, heads, length, head_dim) and weights (batch, heads, length, length)."""
    weights = attention_weights(q, k, kind, normalized)
    return weights @ v, weights
