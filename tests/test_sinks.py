"""Attention sinks without JAX: the induction task, the sink metric, configs and run files."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from polarize.cli import main
from polarize.fields import ConfigError
from polarize.sinks.config import VARIANTS, SinksConfig, make_config, variant_config
from polarize.sinks.metrics import induction_accuracy, sink_heads, sink_scores
from polarize.sinks.runs import read_run, run_info, write_run
from polarize.sinks.task import BOS, make_sequences, split_inputs


def test_sequences_have_the_papers_format():
    seqs = make_sequences(500, vocab=50, distinct=10, rng=np.random.default_rng(0))
    assert seqs.shape == (500, 13)
    assert np.all(seqs[:, 0] == BOS)
    body = seqs[:, 1:11]
    assert body.min() >= 1 and body.max() <= 49
    assert all(len(set(row)) == 10 for row in body.tolist())
    query = seqs[:, 11]
    assert np.all((query >= 50) & (query <= 99))
    # the query is one of the distinct tokens, shifted by the base vocabulary
    assert all(q - 50 in row for q, row in zip(query.tolist(), body.tolist(), strict=True))


def test_target_is_the_successor_of_the_queried_token():
    seqs = make_sequences(2000, vocab=50, distinct=10, rng=np.random.default_rng(1))
    for row in seqs.tolist():
        body, query, answer = row[1:11], row[11], row[12]
        where = body.index(query - 50)
        expected = body[where + 1] if where < 9 else query  # the last token is followed by the query
        assert answer == expected
    where = [row[1:11].index(row[11] - 50) for row in seqs.tolist()]
    assert set(where) == set(range(10))  # every position gets queried


def test_inputs_and_targets_are_shifted_by_one():
    seqs = make_sequences(3, vocab=20, distinct=5, rng=np.random.default_rng(2))
    inputs, targets = split_inputs(seqs)
    assert inputs.shape == targets.shape == (3, 7)
    np.testing.assert_array_equal(inputs[:, 1:], targets[:, :-1])


def _maps(bos_share: float, layers=2, sequences=3, heads=2, length=12) -> np.ndarray:
    """Normalized causal maps putting ``bos_share`` on BOS and the rest evenly on the other keys."""
    w = np.zeros((layers, sequences, heads, length, length))
    w[..., 0, 0] = 1.0
    for i in range(1, length):
        w[..., i, 0] = bos_share
        w[..., i, 1:i + 1] = (1 - bos_share) / i
    return w


def test_sink_score_of_hand_made_maps():
    np.testing.assert_allclose(sink_scores(_maps(1.0)), 1.0, atol=1e-8)
    np.testing.assert_allclose(sink_scores(_maps(0.3)), 0.3, atol=1e-8)
    uniform = np.tril(np.ones((12, 12)))
    uniform = np.broadcast_to(uniform / uniform.sum(1, keepdims=True), (1, 4, 1, 12, 12))
    expected = np.mean([1 / (i + 1) for i in range(1, 10)])  # queries 1..9 only
    np.testing.assert_allclose(sink_scores(uniform), expected, rtol=1e-8)


def test_sink_score_is_a_share_so_unnormalized_rows_count_alike():
    scaled = _maps(0.5) * 7.0
    np.testing.assert_allclose(sink_scores(scaled), 0.5, atol=1e-8)


def test_sink_score_ignores_queries_outside_1_to_9():
    w = _maps(0.2)
    w[..., 0, 0] = 1.0
    w[..., 10:, :] = 0.0
    w[..., 10:, 0] = 1.0  # the last two queries all on BOS: not counted
    np.testing.assert_allclose(sink_scores(w), 0.2, atol=1e-8)


def test_one_head_sinks_and_only_at_high_accuracy():
    w = _maps(0.1)
    w[1, :, 0] = _maps(0.95)[1, :, 0]
    scores = sink_scores(w)
    assert sink_heads(scores, 0.99).tolist() == [[False, False], [True, False]]
    assert not sink_heads(scores, 0.95).any()


def test_induction_accuracy_reads_the_last_position():
    logits = np.zeros((4, 3, 5))
    targets = np.array([[0, 0, 1], [0, 0, 2], [0, 0, 3], [0, 0, 4]])
    logits[np.arange(4), -1, [1, 2, 0, 4]] = 1.0
    logits[:, 0, 4] = 9.0  # earlier positions do not count
    assert induction_accuracy(logits, targets) == 0.75


@pytest.mark.parametrize(("field", "changes"), [
    ("attention", {"attention": "relu"}),
    ("normalized", {"attention": "softmax", "normalized": False}),
    ("width", {"width": 30, "heads": 4}),
    ("lr", {"lr": 0.0}),
    ("distinct", {"vocab": 10, "distinct": 10}),
])
def test_bad_configs_name_the_field(field, changes):
    with pytest.raises(ConfigError) as info:
        SinksConfig(**changes)
    assert info.value.field == field


def test_paper_size_follows_section_7():
    c = make_config("paper", "sigmoid", normalized=False, seed=3)
    assert (c.width, c.layers, c.heads, c.batch, c.lr, c.aux_weight) == (128, 2, 4, 256, 1e-3, 0.2)
    assert c.tokens == 100 and c.length == 12 and c.variant == "sigmoid-unnormalized"
    assert SinksConfig.from_dict(c.to_dict()) == c
    with pytest.raises(ConfigError, match="size"):
        make_config("huge", "softmax")


def test_every_variant_is_named_as_its_config_names_it():
    assert len(VARIANTS) == 7
    for variant in VARIANTS:
        assert variant_config("classroom", variant, seed=2).variant == variant
    with pytest.raises(ConfigError) as info:
        variant_config("classroom", "softmax-unnormalized")
    assert info.value.field == "variant"


def _record(accuracy: float, top: float) -> dict:
    config = make_config("classroom", "softmax", seed=4)
    scores = [[0.1, top], [0.2, 0.3]]
    return {"size": "classroom", "config": config.to_dict(), "accuracy": accuracy, "sink_scores": scores,
            "bos_norms": [1.0, 2.0], "history": [], "maps": [], "map_tokens": []}


def test_run_files_round_trip_and_summarise(tmp_path):
    path = tmp_path / "run.json"
    write_run(_record(0.99, 0.97), path)
    info = run_info("run", read_run(path))
    assert (info.variant, info.seed, info.sinks, info.top_sink) == ("softmax", 4, 1, 0.97)
    assert run_info("run", {**read_run(path), "accuracy": 0.5}).sinks == 0


def test_a_run_file_without_scores_is_refused(tmp_path):
    record = _record(0.99, 0.97)
    del record["sink_scores"]
    (tmp_path / "bad.json").write_text(json.dumps(record))
    with pytest.raises(ConfigError, match="sink_scores"):
        read_run(tmp_path / "bad.json")


def test_cli_lists_runs(capsys):
    assert main(["sinks", "runs"]) == 0
    assert capsys.readouterr().out.strip()


def test_cli_refuses_unnormalized_softmax(tmp_path, capsys):
    out = str(tmp_path / "r.json")
    code = main(["sinks", "train", "--attention", "softmax", "--unnormalized", "-o", out])
    assert code == 2
    assert "normalized" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_importing_polarize_and_its_cli_does_not_import_jax():
    code = "import sys, polarize, polarize.cli, polarize.sinks.runs; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
