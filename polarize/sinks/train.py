"""Train one attention-sink run with AdamW (JAX and optax; import needs the extra).

The loss is the paper's: cross-entropy at the last (induction) position plus
``aux_weight`` x the mean cross-entropy over the earlier positions. Batches are
drawn without replacement from a fixed training pool, reshuffled every epoch,
incomplete tail batches dropped. Steps run in jitted chunks of ``CHUNK`` under
``lax.scan`` so that a small model is not dominated by Python dispatch.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy as np

from polarize.sinks.backend import jax
from polarize.sinks.config import SinksConfig
from polarize.sinks.metrics import induction_accuracy, sink_scores
from polarize.sinks.model import forward, init_params
from polarize.sinks.task import make_sequences, split_inputs

_jax = jax()
jnp = _jax.numpy

import optax  # noqa: E402  (after the thread cap that backend.jax() sets)

__all__ = ["CHUNK", "batch_order", "loss_fn", "train"]

CHUNK = 10
MAP_SEQUENCES = 2
MAP_DECIMALS = 2  # enough for a heatmap; keeps the shipped runs small (package data)


def loss_fn(params: dict, inputs, targets, config: SinksConfig):
    """Last-position cross-entropy + aux_weight x mean over earlier positions (a scalar)."""
    logits, _, _ = forward(params, inputs, config)
    logp = _jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
    return nll[:, -1].mean() + config.aux_weight * nll[:, :-1].mean()


def batch_order(config: SinksConfig, rng: np.random.Generator) -> np.ndarray:
    """Indices into the training pool, shape (steps, batch): epochs of shuffled full batches."""
    per_epoch = config.train_size // config.batch
    if per_epoch == 0:
        return rng.integers(0, config.train_size, size=(config.steps, config.batch))
    epochs = -(-config.steps // per_epoch)
    order = [rng.permutation(config.train_size)[:per_epoch * config.batch] for _ in range(epochs)]
    return np.concatenate(order).reshape(-1, config.batch)[:config.steps]


def _evaluate(params, config: SinksConfig, inputs, targets, evaluate_fn) -> dict:
    logits, weights, norms = (np.asarray(a) for a in evaluate_fn(params, inputs))
    # float64 before rounding: a rounded float32 prints as 0.8399999737739563 in JSON.
    weights, norms = weights.astype(float), norms.astype(float)
    logp = logits - logits.max(axis=-1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(axis=-1, keepdims=True))
    nll = -np.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
    loss = nll[:, -1].mean() + config.aux_weight * nll[:, :-1].mean()
    return {"loss": float(loss), "accuracy": induction_accuracy(logits, targets),
            "sink_scores": sink_scores(weights).round(5).tolist(),
            "bos_norms": norms.mean(axis=1).round(4).tolist(),
            "maps": weights[:, :MAP_SEQUENCES].transpose(1, 0, 2, 3, 4).round(MAP_DECIMALS).tolist()}


def _checkpoint_steps(config: SinksConfig) -> list[int]:
    marks = np.linspace(0, config.steps, config.checkpoints + 1).round().astype(int)
    return sorted(set(marks.tolist()))


def train(config: SinksConfig, *, progress: Callable[[int, int], None] | None = None) -> dict:
    """Train one run and return its record (JSON-ready; ``polarize.sinks.runs`` reads it back).

    Parameters
    ----------
    config : SinksConfig
        The run.
    progress : callable, optional
        Called as ``progress(step, steps)`` after every chunk of steps.

    Returns
    -------
    dict
        ``config``, ``accuracy``, ``sink_scores`` (layers x heads), ``bos_norms`` (layers),
        ``history`` (per checkpoint: step, loss, accuracy, sink_scores, bos_norms),
        ``maps`` (per checkpoint: attention of ``MAP_SEQUENCES`` evaluation sequences, shape
        (sequences, layers, heads, length, length)), ``map_tokens`` and ``timing``.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    rng = np.random.default_rng(config.seed)
    pool = make_sequences(config.train_size, vocab=config.vocab, distinct=config.distinct, rng=rng)
    held = make_sequences(config.eval_size, vocab=config.vocab, distinct=config.distinct, rng=rng)
    order = batch_order(config, rng)
    train_x, train_y = split_inputs(pool)
    eval_x, eval_y = split_inputs(held)
    params = init_params(config, np.random.default_rng([config.seed, 1]))
    optimizer = optax.adamw(config.lr, b1=0.9, b2=0.999, eps=1e-8, weight_decay=config.weight_decay)
    state = optimizer.init(params)

    def step(carry, batch):
        params, state = carry
        loss, grads = _jax.value_and_grad(loss_fn)(params, batch[0], batch[1], config)
        updates, state = optimizer.update(grads, state, params)
        return (optax.apply_updates(params, updates), state), loss

    run_chunk = _jax.jit(lambda carry, xs, ys: _jax.lax.scan(step, carry, (xs, ys)))
    evaluate_fn = _jax.jit(lambda params, x: forward(params, x, config))
    marks = _checkpoint_steps(config)
    history, maps = [], []
    done, carry = 0, (params, state)
    for mark in marks:
        while done < mark:
            size = min(CHUNK, mark - done)
            idx = order[done:done + size]
            carry, _ = run_chunk(carry, jnp.asarray(train_x[idx]), jnp.asarray(train_y[idx]))
            done += size
            if progress is not None:
                _jax.block_until_ready(carry)  # so that the bar shows finished steps, not queued ones
                progress(done, config.steps)
        record = _evaluate(carry[0], config, eval_x, eval_y, evaluate_fn)
        maps.append({"step": mark, "weights": record.pop("maps")})
        history.append({"step": mark, **record})
    final = history[-1]
    return {"config": config.to_dict(), "variant": config.variant, "accuracy": final["accuracy"],
            "sink_scores": final["sink_scores"], "bos_norms": final["bos_norms"],
            "history": history, "maps": maps, "map_tokens": eval_x[:MAP_SEQUENCES].tolist(),
            "timing": {"seconds": time.perf_counter() - wall,
                       "cpu_seconds": time.process_time() - cpu,
                       "load_average": list(os.getloadavg()), "jax": _jax.__version__}}
