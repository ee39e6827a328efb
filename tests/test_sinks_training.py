"""Attention sinks with JAX: attention variants, gradients, a few training steps, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("optax")

from polarize.cli import main  # noqa: E402
from polarize.sinks.attention import attention_weights  # noqa: E402
from polarize.sinks.config import SIZES, SinksConfig  # noqa: E402
from polarize.sinks.model import forward, init_params  # noqa: E402
from polarize.sinks.train import batch_order, loss_fn, train  # noqa: E402

jnp = jax.numpy
VARIANTS = [("softmax", True)] + [(kind, norm) for kind in ("sigmoid", "linear", "raw")
                                  for norm in (True, False)]
TINY = {"width": 16, "layers": 2, "heads": 2, "mlp_ratio": 2, "vocab": 12, "distinct": 5}


def _tiny(kind: str, normalized: bool, **changes) -> SinksConfig:
    return SinksConfig(attention=kind, normalized=normalized, **{**TINY, **changes})


@pytest.mark.parametrize(("kind", "normalized"), VARIANTS)
def test_weights_are_causal_with_the_right_shape(kind, normalized):
    rng = np.random.default_rng(0)
    q, k = (jnp.asarray(rng.standard_normal((3, 2, 6, 4)), dtype=jnp.float32) for _ in range(2))
    w = np.asarray(attention_weights(q, k, kind, normalized))
    assert w.shape == (3, 2, 6, 6)
    assert np.all(np.triu(np.ones((6, 6)), 1)[None, None] * w == 0.0)
    if normalized and kind != "raw":
        np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-5)
    if kind in ("softmax", "sigmoid", "linear"):
        assert np.all(w >= 0.0)


@pytest.mark.parametrize(("kind", "normalized"), VARIANTS)
def test_model_outputs_do_not_see_the_future(kind, normalized):
    config = _tiny(kind, normalized)
    params = init_params(config, np.random.default_rng(1))
    run = jax.jit(lambda p, x: forward(p, x, config))
    tokens = np.random.default_rng(2).integers(0, config.tokens, size=(2, config.length))
    logits, weights, norms = run(params, jnp.asarray(tokens))
    assert logits.shape == (2, config.length, config.tokens)
    assert weights.shape == (config.layers, 2, config.heads, config.length, config.length)
    assert norms.shape == (config.layers, 2)
    changed = tokens.copy()
    changed[:, 4:] = (changed[:, 4:] + 1) % config.tokens  # rewrite the future from position 4 on
    again, _, norms_again = run(params, jnp.asarray(changed))
    np.testing.assert_allclose(np.asarray(again)[:, :4], np.asarray(logits)[:, :4], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(norms_again), np.asarray(norms), rtol=1e-6)  # BOS sees only BOS
    assert not np.allclose(np.asarray(again)[:, 4:], np.asarray(logits)[:, 4:])


@pytest.mark.parametrize(("kind", "normalized"), [("softmax", True), ("linear", False)])
def test_gradient_matches_finite_differences(kind, normalized):
    config = _tiny(kind, normalized, width=8, layers=1)
    rng = np.random.default_rng(3)
    tokens = rng.integers(0, config.tokens, size=(3, config.length + 1))
    with jax.enable_x64(True):
        params = jax.tree_util.tree_map(lambda a: jnp.asarray(a, dtype=jnp.float64),
                                        init_params(config, rng))
        x, y = jnp.asarray(tokens[:, :-1]), jnp.asarray(tokens[:, 1:])
        direction = jax.tree_util.tree_map(lambda a: jnp.asarray(rng.standard_normal(a.shape)), params)

        loss = jax.jit(loss_fn, static_argnums=3)  # compiled whole: op by op, float64 compiled ~250 kernels

        def along(t):
            moved = jax.tree_util.tree_map(lambda p, d: p + t * d, params, direction)
            return float(loss(moved, x, y, config))

        grad = jax.jit(jax.grad(loss_fn), static_argnums=3)(params, x, y, config)
        exact = sum(float(jnp.vdot(g, d)) for g, d in zip(jax.tree_util.tree_leaves(grad),
                                                           jax.tree_util.tree_leaves(direction), strict=True))
        h = 1e-5
        numeric = (along(h) - along(-h)) / (2 * h)
    assert exact == pytest.approx(numeric, rel=1e-6, abs=1e-9)


def test_batches_cover_each_epoch_once():
    config = SinksConfig(batch=4, steps=7, train_size=10)
    order = batch_order(config, np.random.default_rng(0))
    assert order.shape == (7, 4)
    assert len(set(order[:2].ravel().tolist())) == 8  # epoch one: two full batches, no repeats


def test_a_few_training_steps_lower_the_loss_and_record_the_run():
    config = _tiny("softmax", True, batch=32, steps=40, train_size=2000, eval_size=64, lr=3e-3,
                   checkpoints=2)
    seen = []
    record = train(config, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (40, 40)
    steps = [entry["step"] for entry in record["history"]]
    assert steps == [0, 20, 40]
    assert record["history"][-1]["loss"] < record["history"][0]["loss"] - 0.1
    assert np.asarray(record["sink_scores"]).shape == (2, 2)
    assert np.asarray(record["history"][0]["bos_norms"]).shape == (2,)
    assert np.asarray(record["maps"][0]["weights"]).shape == (2, 2, 2, config.length, config.length)
    assert 0.0 <= record["accuracy"] <= 1.0
    assert SinksConfig.from_dict(record["config"]) == config


def test_cli_trains_and_writes_the_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(SIZES, "tiny", {**TINY, "batch": 16, "steps": 10, "train_size": 500,
                                        "eval_size": 32, "checkpoints": 1})
    out = tmp_path / "run.json"
    assert main(["sinks", "train", "--attention", "sigmoid", "--unnormalized", "--size", "tiny",
                 "--seed", "2", "-o", str(out)]) == 0
    record = json.loads(out.read_text())
    for key in ("accuracy", "sink_scores", "history", "config"):
        assert key in record
    assert record["config"]["attention"] == "sigmoid" and record["config"]["normalized"] is False
    assert record["config"]["seed"] == 2 and record["size"] == "tiny"
    captured = capsys.readouterr()
    assert "10/10" in captured.err and "sigmoid-unnormalized" in captured.out


def test_a_shipped_run_is_reproduced_by_retraining_its_start():
    """The shipped runs come from ``train``: retraining the first checkpoint's steps gives its numbers.

    A run's first steps do not depend on its length (same data, batch order and optimizer), so
    100 steps reproduce the shipped step-100 checkpoint at CPU float32 precision.
    """
    from polarize.sinks.runs import read_run, shipped_runs

    runs = shipped_runs()
    if not runs:
        pytest.skip("no shipped runs in this checkout")
    name = next((n for n in runs if n.startswith("classroom-softmax")), next(iter(runs)))
    shipped = read_run(runs[name])
    first = shipped["history"][1]
    config = shipped["config"]
    short = SinksConfig.from_dict({**config.to_dict(), "steps": first["step"], "checkpoints": 1})
    again = train(short)["history"][-1]
    assert again["step"] == first["step"]
    assert again["loss"] == pytest.approx(first["loss"], rel=1e-3)
    np.testing.assert_allclose(again["sink_scores"], first["sink_scores"], atol=2e-3)
    np.testing.assert_allclose(again["bos_norms"], first["bos_norms"], rtol=1e-3)
    assert abs(again["accuracy"] - first["accuracy"]) <= 2 / config.eval_size


@pytest.mark.slow
def test_a_live_run_trains_in_a_child_and_reports_its_progress():
    from polarize.serve.training import train_live

    config = _tiny("softmax", True, batch=16, steps=20, train_size=400, eval_size=32, checkpoints=1)
    seen = []
    record = train_live(config, progress=lambda done, total: seen.append((done, total)), timeout=300)
    assert seen[-1] == (20, 20) and len(seen) == 2  # one line per chunk of CHUNK = 10 steps
    here = train(config)
    assert record["config"] == config.to_dict()
    assert record["history"][-1]["loss"] == pytest.approx(here["history"][-1]["loss"], rel=1e-4)


def test_a_live_run_over_its_time_limit_is_stopped():
    from polarize.serve.training import TrainingFailed, train_live

    with pytest.raises(TrainingFailed, match=r"longer than 0\.01 s"):
        train_live(_tiny("softmax", True, steps=1000), timeout=0.01)


def test_live_runs_wait_in_a_queue_that_refuses_when_full(monkeypatch):
    from polarize.serve.admission import ServerBusy
    from polarize.serve.training import TRAININGS, train_live

    monkeypatch.setattr(TRAININGS, "most_waiting", 0)
    with pytest.raises(ServerBusy):
        train_live(_tiny("softmax", True))
