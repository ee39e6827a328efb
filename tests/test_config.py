"""The experiment description: validation naming the field, round trips, limits, reruns, the CLI.

Validation is total: any value a config, a JSON text or a link brings (too large for a float, too deep,
a 0-d or masked array) is an experiment or a ``ConfigError`` naming the field; the JSON is strict. The
property-based tests draw configs and JSON texts from ``support.fuzz``; what is accepted round-trips."""

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.fuzz import assert_round_trips, build, configs, fuzz
from support.fuzz import json_text as _json_text
from support.inputs import field_of, strict_loads

from polarize import ConfigError, Experiment, simulate
from polarize.env import CAPS, LOCAL_CAPS, limits, local_caps
from polarize.presets import PRESETS
from polarize.web.links import read_link
from polarize.web.pages.explorer import EXPLORER

ROW = [0.0] * 8
BAD = [
    ("n", dict(n=1)),
    ("n", dict(n=10**9)),
    ("n", dict(n=2.5)),
    ("n", dict(n=True)),
    ("n", dict(n="8")),
    ("d", dict(d=0)),
    ("d", dict(d=-3)),
    ("d", dict(d=False)),
    ("d", dict(n=4096, d=4096)),  # n * d over the size cap
    ("model", dict(model="mlp")),
    ("loss", dict(loss="hinge")),
    ("normalizer", dict(normalizer="tanh")),
    ("temperature", dict(temperature=0.0)),
    ("temperature", dict(temperature=-1.0)),
    ("temperature", dict(temperature=math.nan)),
    ("temperature", dict(temperature=math.inf)),
    ("eps", dict(eps=-1e-12)),
    ("eps", dict(eps=1.0)),  # a guard against a zero sum, not a change of map
    ("eps", dict(eps=math.nan)),
    ("eps", dict(eps="1e-10")),
    ("eps", dict(eps=True)),
    ("temperature", dict(temperature="1")),
    ("temperature", dict(normalizer="sigmoid", temperature=2.0)),
    ("method", dict(method="adam")),
    ("lr", dict(lr=0.0)),
    ("lr", dict(lr=math.inf)),
    ("lr", dict(lr=-0.1)),
    ("lr", dict(lr=math.nan)),
    ("lr", dict(lr="0.1")),
    ("lr", dict(lr=True)),
    ("horizon", dict(horizon=0.0)),
    ("horizon", dict(horizon=-5.0)),
    ("horizon", dict(horizon=1e305)),
    ("horizon", dict(horizon=math.nan)),
    ("horizon", dict(method="gd", lr=1e-3, horizon=1e4)),  # 1e7 steps over the step cap
    ("horizon", dict(method="gd", lr=0.1, horizon=0.01)),  # not even one step
    ("samples", dict(samples=1)),
    ("samples", dict(samples=10**6)),
    ("samples", dict(samples=2.5)),
    ("samples", dict(samples=True)),
    ("seed", dict(seed=-1)),
    ("seed", dict(seed=2**32)),
    ("seed", dict(seed="1")),
    ("seed", dict(seed=True)),
    ("a_init", dict(a_init="x")),
    ("a_scale", dict(a_scale=-1.0)),
    ("a_shift", dict(a_shift=math.nan)),
    ("a_vertex", dict(a_vertex=8)),
    ("a_vertex", dict(a_vertex=-1)),
    ("V_init", dict(V_init="x")),
    ("V_scale", dict(V_scale=-0.1)),
    ("kappa", dict(kappa=2.0)),  # logistic loss
    ("kappa", dict(loss="kl", kappa=2.0)),
    ("kappa", dict(loss="square", kappa=0.5)),
    ("kappa", dict(loss="square", kappa="2")),
    ("m", dict(loss="square", m=3)),  # m without kappa
    ("m", dict(loss="square", kappa=2.0, m=0)),
    ("a0", dict(a0=[0.0] * 7)),
    ("a0", dict(a0=[0.0] * 7 + [math.nan])),
    ("a0", dict(a0=[[0.0] * 8])),
    ("a0", dict(a0=["a"] * 8)),
    ("V0", dict(V0=[[0.0] * 7] * 8)),
    ("V0", dict(V0=[[0.0] * 8] * 7)),
    ("V0", dict(V0=[[math.inf] * 8] * 8)),
    ("V0", dict(V0=[0.0] * 8)),
    ("target", dict(target=[0.0] * 8)),
    ("target", dict(target=[1.0] * 7)),
    ("target", dict(loss="kl", target=[0.5, -0.1] + [0.1] * 6)),
    ("target", dict(loss="kl", target=[0.0] * 8)),
    ("X", dict(loss="kl", X=[ROW], y=[1.0])),
    ("X", dict(loss="square", X=[[1.0] * 7], y=[1.0])),
    ("X", dict(loss="square", kappa=2.0, X=[ROW], y=[1.0])),
    ("y", dict(X=[[1.0, *ROW[1:]]], y=[0.5])),  # logistic labels must be +-1
    ("y", dict(X=[[1.0, *ROW[1:]], ROW], y=[1.0, 0.0])),
    ("y", dict(X=[[1.0, *ROW[1:]]])),  # logistic on data needs labels
    ("y", dict(loss="square", y=[1.0] * 8)),  # y without a design
    ("y", dict(loss="square", X=[ROW, ROW], y=[1.0])),
    ("d", dict(model="tied", n=5, d=4)),
]


@pytest.mark.parametrize(("field", "kwargs"), BAD, ids=[f"{f}-{i}" for i, (f, _) in enumerate(BAD)])
def test_invalid_field_raises_config_error_naming_it(field, kwargs):
    with pytest.raises(ConfigError) as info:
        Experiment(**kwargs)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("field", "data"),
    [
        ("nn", {"nn": 3}),
        ("Lr", {"n": 4, "Lr": 0.1}),
        ("config", [1, 2, 3]),
        ("config", "n=3"),
        ("n", {"n": 1}),
        ("a0", {"n": 2, "d": 2, "a0": [1, 2, 3]}),
    ],
)
def test_from_dict_errors_name_the_key(field, data):
    with pytest.raises(ConfigError) as info:
        Experiment.from_dict(data)
    assert info.value.field == field


@pytest.mark.parametrize(("field", "text"), [("config", "{n: 3"), ("config", ""), ("config", "[1, 2]"),
                                             ("loss", '{"loss": "hinge"}')])
def test_from_json_errors_name_the_key(field, text):
    with pytest.raises(ConfigError) as info:
        Experiment.from_json(text)
    assert info.value.field == field


def test_experiment_is_frozen_and_keyword_only():
    e = Experiment()
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.n = 3
    with pytest.raises(TypeError):
        Experiment(8)


def test_integral_floats_are_accepted_as_integers():
    e = Experiment(n=4.0, d=3.0, seed=7.0, samples=10.0)
    assert (e.n, e.d, e.seed, e.samples) == (4, 3, 7, 10)
    assert all(type(x) is int for x in (e.n, e.d, e.seed, e.samples))
    assert e == Experiment(n=4, d=3, seed=7, samples=10)


# ---- round trips ---------------------------------------------------------------------------------

EXAMPLES = {
    "default": Experiment(),
    "kl": Experiment(loss="kl", n=5, d=3, a_init="gaussian", seed=11),
    "square-kappa": Experiment(loss="square", n=6, d=8, kappa=3.0, m=4, seed=2, a_init="shifted"),
    "tied": Experiment(model="tied", n=5, d=5, V_init="identity", V_scale=1.0, a_init="vertex", a_vertex=3),
    "logistic-data": Experiment(n=3, d=2, X=[[1.0, 2.0], [0.5, -1.0], [0.0, 1.0]], y=[1, -1, 1]),
    "explicit": Experiment(n=3, d=2, a0=[0.1, -0.2, 0.3], V0=[[1, 2, 3], [4, 5, 6]], target=[3.0, 4.0],
                           normalizer="softmax", temperature=0.7, method="gd", lr=0.01, horizon=3.0),
    "sparsemax": Experiment(normalizer="sparsemax", a_init="gaussian", samples=17, horizon=123.0),
    "paper-logistic": PRESETS["paper-logistic"].experiment,
    "paper-kl": PRESETS["paper-kl"].experiment,
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_json_round_trip(name):
    e = EXAMPLES[name]
    for x in (e, e.resolved()):
        data = x.to_dict()
        assert json.loads(json.dumps(data)) == data  # JSON-ready
        assert Experiment.from_dict(data) == x
        assert Experiment.from_dict(json.loads(json.dumps(data))) == x
        assert Experiment.from_json(x.to_json()) == x


@pytest.mark.parametrize("loss", ["logistic", "square", "kl"])
def test_resolved_round_trip_is_bit_exact_for_many_seeds(loss):
    """Normalizing an already-normalized target must not move it by an ulp (else reruns drift)."""
    for seed in range(60):
        r = Experiment(loss=loss, seed=seed, n=5, d=7).resolved()
        again = Experiment.from_json(r.to_json())
        assert again == r, seed
        np.testing.assert_array_equal(np.asarray(again.target), np.asarray(r.target))


def test_resolved_is_idempotent_and_explicit():
    e = Experiment(loss="square", n=6, d=8, kappa=3.0, m=4, seed=2)
    r = e.resolved()
    assert r.resolved() == r
    assert r.kappa is None and r.m is None
    assert np.asarray(r.X).shape == (4, 8) and np.asarray(r.y).shape == (4,)
    assert np.allclose(np.linalg.svd(np.asarray(r.X), compute_uv=False), np.linspace(1, 1 / 3, 4))
    for key in ("a0", "V0", "target", "X", "y"):
        assert getattr(r, key) is not None


def test_draws_follow_the_documented_order_whatever_the_modes():
    seed, n, d = 5, 4, 3
    rng = np.random.RandomState(seed)
    V, a, t = rng.randn(d, n), rng.randn(n), rng.randn(d)
    for a_init in ("zeros", "gaussian", "shifted", "vertex"):
        r = Experiment(n=n, d=d, seed=seed, a_init=a_init, a_scale=0.5, a_shift=2.0, a_vertex=1).resolved()
        np.testing.assert_array_equal(np.asarray(r.V0), 0.1 * V)
        np.testing.assert_allclose(np.asarray(r.target), t / np.linalg.norm(t), rtol=1e-15)
        want = {"zeros": 0 * a, "gaussian": 0.5 * a, "shifted": 2.0 + 0.5 * a,
                "vertex": 0.5 * a + 2.0 * np.eye(n)[1]}[a_init]
        np.testing.assert_allclose(np.asarray(r.a0), want, rtol=1e-15)
    r = Experiment(n=n, d=d, seed=seed, V_init="zeros").resolved()
    np.testing.assert_array_equal(np.asarray(r.V0), np.zeros((d, n)))
    np.testing.assert_array_equal(np.asarray(r.a0), np.zeros(n))
    r = Experiment(n=n, d=d, seed=seed, V_init="identity", V_scale=2.0).resolved()
    np.testing.assert_array_equal(np.asarray(r.V0), 2.0 * np.eye(d, n))


def test_targets_are_normalized():
    e = Experiment(n=3, d=2, target=[3.0, 4.0])
    np.testing.assert_allclose(np.asarray(e.target), [0.6, 0.8], rtol=1e-15)
    e = Experiment(n=3, d=4, loss="kl", target=[1.0, 1.0, 2.0, 0.0])
    np.testing.assert_allclose(np.asarray(e.target), [0.25, 0.25, 0.5, 0.0], rtol=1e-15)


def test_hashable_and_equal_experiments_hash_equal():
    a = Experiment(n=5, d=3, seed=4, a0=[1.0, 2.0, 3.0, 4.0, 5.0])
    b = Experiment(n=5, d=3, seed=4.0, a0=np.array([1, 2, 3, 4, 5]))
    c = Experiment(n=5, d=3, seed=4, a0=[1.0, 2.0, 3.0, 4.0, 5.5])
    assert a == b and hash(a) == hash(b)
    assert a != c
    table = {a: "first", c: "second"}
    assert table[b] == "first"
    assert len({a, b, c}) == 2
    for e in EXAMPLES.values():
        assert hash(e.resolved()) == hash(Experiment.from_dict(e.resolved().to_dict()))



def test_an_experiment_from_another_process_equals_and_hashes_as_one_made_here():
    """A pickled ``FrozenArray`` carried its process's hash (Python's, salted per process): a resolved
    experiment sent from a replica to a worker was unequal there to the same experiment made there."""
    import os
    import pickle
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    code = ("import pickle, sys; from polarize import Experiment; "
            "sys.stdout.buffer.write(pickle.dumps(Experiment(n=5, seed=3).resolved()))")
    sent = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root), "PYTHONHASHSEED": "7"}).stdout
    here = Experiment(n=5, seed=3).resolved()
    there = pickle.loads(sent)
    assert there == here and hash(there) == hash(here) and len({there, here}) == 1
    assert there.a0 == here.a0 and hash(there.a0) == hash(here.a0)

# ---- limits from the environment -------------------------------------------------------------------


def test_limits_are_overridable_by_environment(monkeypatch):
    monkeypatch.setenv("POLARIZE_MAX_N", "4")
    with pytest.raises(ConfigError) as info:
        Experiment(n=5, d=2)
    assert info.value.field == "n"
    assert Experiment(n=4, d=2).n == 4

    monkeypatch.setenv("POLARIZE_MAX_STEPS", "1e7")
    assert Experiment(n=4, method="gd", lr=1e-3, horizon=1e4).horizon == 1e4

    monkeypatch.setenv("POLARIZE_MAX_HORIZON", "1e20")
    assert Experiment(n=4, horizon=1e18).horizon == 1e18

    monkeypatch.setenv("POLARIZE_MAX_SAMPLES", "10")
    with pytest.raises(ConfigError) as info:
        Experiment(n=4, samples=11)
    assert info.value.field == "samples"

    monkeypatch.setenv("POLARIZE_MAX_SIZE", "100")
    with pytest.raises(ConfigError) as info:
        Experiment(n=4, d=26)
    assert info.value.field == "d"

    monkeypatch.setenv("POLARIZE_MAX_D", "3")
    with pytest.raises(ConfigError) as info:
        Experiment(n=4, d=4)
    assert info.value.field == "d"

    monkeypatch.setenv("POLARIZE_MAX_N", "lots")
    with pytest.raises(ConfigError) as info:
        Experiment(n=4, d=2)
    assert info.value.field == "POLARIZE_MAX_N"


def test_the_command_line_runs_every_preset_in_full_and_keeps_the_app_caps(monkeypatch):
    monkeypatch.delenv("POLARIZE_MAX_STEPS", raising=False)
    notebook = PRESETS["paper-kl"]  # the notebook's 1e7 descent steps
    with pytest.raises(ConfigError) as info:  # the hosted app's cap
        notebook.with_changes(method="gd")
    assert info.value.field == "horizon" and "POLARIZE_MAX_STEPS" in str(info.value)
    with local_caps():
        for preset in PRESETS.values():
            e = preset.with_changes(method="gd")
            assert e.method == "gd" and e.horizon == preset.experiment.horizon
        assert round(notebook.with_changes(method="gd").horizon / 0.1) == 10**7
        with pytest.raises(ConfigError) as info:  # still a cap: a mistyped lr is refused
            notebook.with_changes(method="gd", lr=1e-3)
        assert info.value.field == "horizon"
        assert limits()["max_n"] == CAPS["max_n"][1]  # only the step cap is the command line's own
        monkeypatch.setenv("POLARIZE_MAX_STEPS", "1000")  # a variable that is set is the cap everywhere
        with pytest.raises(ConfigError) as info:
            notebook.with_changes(method="gd")
        assert info.value.field == "horizon"
        monkeypatch.setenv("POLARIZE_MAX_STEPS", "0")
        with pytest.raises(ConfigError) as info:
            notebook.with_changes(method="gd")
        assert info.value.field == "POLARIZE_MAX_STEPS"
    monkeypatch.delenv("POLARIZE_MAX_STEPS")
    assert limits()["max_steps"] == CAPS["max_steps"][1] < LOCAL_CAPS["max_steps"]  # the block is over


def test_eps_round_trips_and_reaches_the_normalizer():
    e = Experiment(n=4, d=4, normalizer="l1", eps=1e-10, a_init="shifted")
    assert Experiment.from_json(e.to_json()) == e and json.loads(e.to_json())["eps"] == 1e-10
    exact = simulate(dataclasses.replace(e, eps=0.0, method="gd", horizon=1.0))
    guarded = simulate(dataclasses.replace(e, eps=1e-3, method="gd", horizon=1.0))
    assert abs(exact.s[0].sum() - 1.0) < 1e-15 and guarded.s[0].sum() < 1.0 - 1e-4


def test_default_limits_without_environment(monkeypatch):
    for var in ("POLARIZE_MAX_N", "POLARIZE_MAX_D", "POLARIZE_MAX_SIZE", "POLARIZE_MAX_HORIZON",
                "POLARIZE_MAX_STEPS", "POLARIZE_MAX_SAMPLES"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ConfigError):
        Experiment(n=10**9)
    assert Experiment(horizon=1e15).horizon == 1e15


# ---- the saved config reproduces the run ----------------------------------------------------------

RERUNS = {
    "logistic-closed": Experiment(n=5, d=4, seed=3, horizon=1e6, samples=30),
    "square-reduced": Experiment(loss="square", n=5, d=6, kappa=2.0, m=3, seed=1, a_init="gaussian",
                                 horizon=50.0, samples=20),
    "kl": Experiment(loss="kl", n=4, d=3, seed=9, a_init="gaussian", horizon=20.0, samples=20),
    "gd": Experiment(loss="square", n=4, d=4, seed=2, method="gd", lr=0.05, horizon=5.0, samples=20),
    "tied": Experiment(model="tied", n=4, d=4, V_init="identity", V_scale=1.0, a_init="shifted",
                       horizon=20.0, samples=15),
}

FIELDS = ("t", "s", "a", "u", "loss", "entropy", "ratio", "grad_norm_V", "grad_norm_a",
          "singular_values", "column_norms", "V_final")


@pytest.mark.parametrize("name", sorted(RERUNS))
def test_saved_config_reproduces_the_result_exactly(name, tmp_path):
    first = simulate(RERUNS[name])
    path = tmp_path / "config.json"
    path.write_text(json.dumps(first.experiment.to_dict()))
    again = simulate(Experiment.from_json(path.read_text()))
    assert again.experiment == first.experiment
    for key in FIELDS:
        np.testing.assert_array_equal(getattr(again, key), getattr(first, key), err_msg=key)
    assert again.status == first.status
    # The result's config is complete: nothing is left to the seed.
    for key in ("a0", "V0", "target"):
        assert getattr(first.experiment, key) is not None


def test_result_to_dict_is_json_with_config():
    r = simulate(Experiment(n=3, d=2, horizon=10.0, samples=5))
    data = json.loads(json.dumps(r.to_dict()))
    assert Experiment.from_dict(data["config"]) == r.experiment
    assert np.array_equal(np.array(data["s"]), r.s)
    assert data["status"] == "finished"


def test_resolved_draws_once_per_object_and_the_memo_stays_private():
    import copy
    import pickle

    e = Experiment(loss="square", n=5, d=6, kappa=2.0, m=3, seed=4)
    r = e.resolved()
    assert e.resolved() is r and r.resolved() is r  # drawn once; a resolved experiment is its own
    fresh = Experiment(loss="square", n=5, d=6, kappa=2.0, m=3, seed=4)
    assert fresh == e and hash(fresh) == hash(e) and repr(fresh) == repr(e)  # the memo is not a field
    for clone in (pickle.loads(pickle.dumps(e)), copy.copy(e), copy.deepcopy(e)):
        assert clone == e and "_resolved" not in vars(clone)
        assert clone.resolved() == r
    assert len(pickle.dumps(e)) == len(pickle.dumps(fresh))  # workers receive the fields only
    assert dataclasses.replace(e, seed=5).resolved() != r


# ---- validation is total: any value a config, JSON text or link brings ------------------------------


DEEP = "[" * 1000 + "]" * 1000


@pytest.mark.parametrize(("config", "field"), [
    ({"a_scale": 10**400}, "a_scale"),
    ({"seed": 10**400}, "seed"),
    ({"n": 2, "d": 1, "a0": [10**400, 1]}, "a0"),
    ({"n": 2, "d": 1, "V0": [[1, 10**400]]}, "V0"),
    ({"method": "gd", "lr": 5e-324, "horizon": 1}, "lr"),
    ({"lr": 1e-300}, "lr"),
    ({"model": None}, "model"),
    ({"n": 2, "d": 1, "a0": [True, False]}, "a0"),
    ({"n": 2, "d": 1, "a0": ["1", "2"]}, "a0"),
    ({"a_scale": True}, "a_scale"),
    ({"loss": "square", "n": 2, "d": 2, "X": [[1, 0], [0, 1]]}, "y"),
    ({"loss": "square", "d": 3000, "n": 2, "kappa": 2.0}, "kappa"),
])
def test_hostile_fields_are_config_errors_naming_them(config, field):
    assert field_of(lambda: Experiment.from_dict(config)) == field


def test_hostile_json_and_links_are_config_errors():
    assert field_of(lambda: Experiment.from_json('{"n": ' + "9" * 5000 + "}")) == "config"
    assert field_of(lambda: Experiment.from_json(DEEP)) == "config"
    assert field_of(lambda: Experiment.from_dict({"bad\nkey": 1})) == "'bad\\nkey'"
    values, ignored = read_link(EXPLORER, {"seed": DEEP, "n": "9" * 5000, "d": "2", "horizon": "50"})
    assert set(ignored) == {"seed", "n"} and (values["d"], values["horizon"]) == (2, 50.0)


def test_link_integers_are_read_exactly():
    values, ignored = read_link(EXPLORER, {"seed": str(2**32 - 1)})
    assert values["seed"] == 2**32 - 1 and not ignored
    assert set(read_link(EXPLORER, {"seed": str(2**32)})[1]) == {"seed"}


@pytest.mark.parametrize(("loss", "target", "expected"), [
    ("logistic", [1e155], [1.0]),
    ("kl", [1e308, 1e308], [0.5, 0.5]),
    ("logistic", [1e-160, 1e-160], [2**-0.5, 2**-0.5]),
    ("square", [-1e308, 1e308], [-(2**-0.5), 2**-0.5]),
])
def test_targets_are_normalized_without_overflow_and_round_trip(loss, target, expected):
    e = Experiment(n=2, d=len(target), loss=loss, target=target)
    np.testing.assert_allclose(np.asarray(e.target), expected, rtol=1e-15)
    assert Experiment.from_dict(e.to_dict()) == e


def test_negative_zero_in_an_array_is_zero():
    plus, minus = Experiment(n=2, d=1, a0=[0.0, 1.0]), Experiment(n=2, d=1, a0=[-0.0, 1.0])
    assert plus == minus and hash(plus) == hash(minus)


def test_an_unset_optional_field_round_trips():
    e = Experiment.from_dict({"kappa": None, "m": None, "a0": None})
    assert e == Experiment() and Experiment.from_dict(e.to_dict()) == e


def test_the_experiment_json_is_strict():
    text = Experiment(n=3, d=3).resolved().to_json()
    assert Experiment.from_json(text) == Experiment(n=3, d=3).resolved()
    strict_loads(text)


@pytest.mark.parametrize("field", ["eps", "n", "seed", "horizon", "temperature", "a0", "V0", "target"])
@pytest.mark.parametrize("value", [np.array(3.0), np.array(1e-4), np.ma.masked,
                                   np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0])])
def test_zero_d_and_masked_arrays_are_config_errors(field, value):
    with pytest.raises(ConfigError) as info:
        Experiment(**{"n": 3, "d": 3, field: value})
    assert info.value.field == field


# ---- property-based: every config and JSON text an experiment or a ConfigError ---------------------


@fuzz(200)
@given(configs())
def test_every_config_is_an_experiment_or_a_config_error(config):
    build(config)


@fuzz(100)
@given(configs(hostile_share=0.0))
def test_plausible_configs_round_trip_when_accepted(config):
    build(config)


@fuzz(200)
@given(st.one_of(st.text(max_size=60), configs().map(_json_text),
                 st.sampled_from(["[" * 1000 + "]" * 1000, '{"n": ' + "9" * 5000 + "}", "\xff", "null",
                                  '{"a0": [1e400, 1]}', '{"n": 4, "d": 2, "target": [NaN, 1]}'])))
def test_every_json_text_is_an_experiment_or_a_config_error(text):
    try:
        e = Experiment.from_json(text)
    except ConfigError as exc:
        assert "\n" not in str(exc)
        return
    assert_round_trips(e)
