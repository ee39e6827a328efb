"""Pre-LayerNorm causal transformer of the paper's section 7 (JAX; import needs the extra).

Token and learned position embeddings, each ``width / 2`` wide, are
concatenated (the paper's code uses ``positional_type: concat``). Each block is
``x + Attn(LN(x))`` then ``x + MLP(LN(x))`` with a GELU MLP; a final LayerNorm
and a linear read-out give next-token logits. Initialisation follows PyTorch's
defaults (embeddings N(0, 1), linear layers U(-1/sqrt(fan_in), 1/sqrt(fan_in))),
so that the dynamics start where the paper's start.
"""

from __future__ import annotations

import numpy as np

from polarize.sinks.attention import attend
from polarize.sinks.backend import jax
from polarize.sinks.config import SinksConfig

_jax = jax()
jnp = _jax.numpy

__all__ = ["forward", "init_params"]


def _linear(rng: np.random.Generator, fan_in: int, fan_out: int) -> dict:
    bound = 1.0 / fan_in**0.5
    return {"w": rng.uniform(-bound, bound, (fan_in, fan_out)), "b": rng.uniform(-bound, bound, fan_out)}


def _norm(width: int) -> dict:
    return {"g": np.ones(width), "b": np.zeros(width)}


def init_params(config: SinksConfig, rng: np.random.Generator) -> dict:
    """Initial float32 parameters as a nested dict of JAX arrays (a pytree), drawn from ``rng``.

    NumPy draws them: op-by-op JAX random calls would each compile, costing seconds.
    """
    d, hidden = config.width, config.width * config.mlp_ratio
    params = {"tok": rng.standard_normal((config.tokens, d // 2)),
              "pos": rng.standard_normal((config.length, d // 2)), "blocks": [], "ln_f": _norm(d)}
    for _ in range(config.layers):
        params["blocks"].append({
            "ln1": _norm(d), "q": _linear(rng, d, d), "k": _linear(rng, d, d),
            "v": _linear(rng, d, d), "o": _linear(rng, d, d), "ln2": _norm(d),
            "up": _linear(rng, d, hidden), "down": _linear(rng, hidden, d)})
    params["out"] = _linear(rng, d, config.tokens)
    return _jax.tree_util.tree_map(lambda a: jnp.asarray(a, dtype=jnp.float32), params)


def _layer_norm(p: dict, x):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5) * p["g"] + p["b"]


def _apply(p: dict, x):
    return x @ p["w"] + p["b"]


def _heads(x, heads: int):
    batch, length, width = x.shape
    return x.reshape(batch, length, heads, width // heads).transpose(0, 2, 1, 3)


def _block(p: dict, x, config: SinksConfig):
    h = _layer_norm(p["ln1"], x)
    q, k, v = (_heads(_apply(p[name], h), config.heads) for name in ("q", "k", "v"))
    out, weights = attend(q, k, v, config.attention, config.normalized)
    batch, length, width = x.shape
    x = x + _apply(p["o"], out.transpose(0, 2, 1, 3).reshape(batch, length, width))
    h = _layer_norm(p["ln2"], x)
    x = x + _apply(p["down"], _jax.nn.gelu(_apply(p["up"], h), approximate=False))
    return x, weights


def forward(params: dict, tokens, config: SinksConfig):
    """Run the model.

    Parameters
    ----------
    params : dict
        From ``init_params``.
    tokens : array of int
        Shape (batch, length) with ``length <= config.length``.
    config : SinksConfig
        Shape and attention variant.

    Returns
    -------
    logits : jax.Array
        Shape (batch, length, 2 vocab).
    weights : jax.Array
        Attention weights, shape (layers, batch, heads, length, length).
    bos_norms : jax.Array
        Residual-stream norm at BOS after each block, shape (layers, batch).
    """
    length = tokens.shape[1]
    tok = params["tok"][tokens]
    pos = jnp.broadcast_to(params["pos"][:length], tok.shape)
    x = jnp.concatenate([tok, pos], axis=-1)
    all_weights, norms = [], []
    for p in params["blocks"]:
        x, weights = _block(p, x, config)
        all_weights.append(weights)
        norms.append(jnp.linalg.norm(x[:, 0], axis=-1))
    logits = _apply(params["out"], _layer_norm(params["ln_f"], x))
    return logits, jnp.stack(all_weights), jnp.stack(norms)
