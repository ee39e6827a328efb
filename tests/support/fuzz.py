"""Strategies for the property-based tests of the input contract (every config, link and environment
value gets a valid experiment or a ``ConfigError`` naming a field; what is accepted round-trips exactly
and simulates to finite numbers, or to a run that stopped early and says why), and their settings.

The examples are derandomized (the same every run, no example database), so the suite is
repeatable; ``POLARIZE_FUZZ_EXAMPLES=N`` runs N examples per test instead (N / 4 for the
simulating test), for a longer hunt.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st

from polarize import NORMALIZERS
from polarize.config import A_INITS, METHODS, MODELS, V_INITS, ConfigError, Experiment
from polarize.losses import LOSSES

__all__ = ["EXTREMES", "FIELDS", "LINK_VALUES", "assert_round_trips", "build", "configs",
           "environment_values", "fuzz", "hostile", "hostile_scalars", "json_text", "links", "numbers",
           "runnable"]


FIELDS = [f.name for f in dataclasses.fields(Experiment)]


_LARGER = int(os.environ.get("POLARIZE_FUZZ_EXAMPLES", "0") or 0)


def fuzz(examples: int, share: float = 1.0):
    """Settings of one fuzz test: ``examples`` derandomized examples (or ``share`` of the larger run's)."""
    count = max(1, int(share * _LARGER)) if _LARGER else examples
    return settings(max_examples=count, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large])


EXTREMES = [0.0, -0.0, 1.0, -1.0, 1e-160, 5e-324, 2.2250738585072014e-308, 1e155, 1e300, 1e308, -1e308,
            1.7976931348623157e308]


numbers = st.one_of(st.floats(-10, 10), st.sampled_from(EXTREMES), st.floats(allow_nan=False),
                    st.integers(-3, 3))


hostile_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(10**300, 10**400),
    st.just(5000).map(lambda digits: 10**digits), st.floats(),
    st.sampled_from([math.nan, math.inf, -math.inf]), st.text(max_size=12),
    st.sampled_from(["1", "0.1", "value", "softmax", "\n", "[1]"]),
)


hostile = st.recursive(hostile_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=3)), max_leaves=12)


def _plausible(name: str, n: int, d: int, m: int) -> st.SearchStrategy:
    """A value of field ``name`` near the valid range (the edges and just past them)."""
    options = {"model": MODELS, "loss": tuple(LOSSES), "normalizer": tuple(NORMALIZERS), "method": METHODS,
               "a_init": A_INITS, "V_init": V_INITS}
    if name in options:
        return st.sampled_from(options[name])
    if name in ("n", "d"):
        return st.just(n if name == "n" else d)
    if name in ("samples", "m", "a_vertex"):
        return st.integers(0, 12)
    if name == "seed":
        return st.one_of(st.integers(0, 10), st.sampled_from([2**32 - 1, 2**32, -1]))
    if name in ("lr", "horizon"):
        return st.one_of(st.floats(1e-3, 50.0), st.sampled_from([1e-12, 1e-13, 5e-324, 1e15, 1e16]))
    if name == "eps":
        return st.one_of(st.floats(-1e-3, 2e-3), st.sampled_from([0.0, 1e-10, 1e-3, -1e-300, 5e-324]))
    if name in ("temperature", "a_scale", "a_shift", "V_scale", "kappa"):
        return st.one_of(st.floats(-2.0, 20.0), st.sampled_from([0.0, 1.0, 1e3, 1e4, 1e-300]))
    rows, cols = {"a0": (None, n), "V0": (d, n), "target": (None, d), "X": (m, d), "y": (None, m)}[name]
    row = st.lists(numbers, min_size=cols, max_size=cols)
    return row if rows is None else st.lists(row, min_size=rows, max_size=rows)


@st.composite
def configs(draw, hostile_share: float = 0.3) -> dict:
    """A config mapping: a few fields, each plausible or (with ``hostile_share``) anything at all."""
    n, d, m = draw(st.integers(2, 5)), draw(st.integers(1, 5)), draw(st.integers(1, 4))
    out = {}
    for name in draw(st.lists(st.sampled_from(FIELDS), max_size=9, unique=True)):
        rogue = draw(st.floats(0, 1)) < hostile_share
        out[name] = draw(hostile if rogue else _plausible(name, n, d, m))
    if draw(st.floats(0, 1)) < 0.05:
        out[draw(st.text(max_size=6))] = draw(hostile_scalars)
    return out


@st.composite
def runnable(draw) -> dict:
    """A config meant to be valid and cheap to run, with extreme numbers in its explicit arrays."""
    n, d = draw(st.integers(2, 5)), draw(st.integers(1, 5))
    loss, normalizer = draw(st.sampled_from(tuple(LOSSES))), draw(st.sampled_from(sorted(NORMALIZERS)))
    out = dict(n=n, d=d, loss=loss, normalizer=normalizer, method=draw(st.sampled_from(METHODS)),
               samples=draw(st.integers(2, 8)), seed=draw(st.integers(0, 2**32 - 1)),
               a_init=draw(st.sampled_from(A_INITS)), a_scale=draw(st.floats(0, 1e3)),
               a_shift=draw(st.floats(-1e3, 1e3)), a_vertex=draw(st.integers(0, n - 1)),
               V_init=draw(st.sampled_from(V_INITS)), V_scale=draw(st.floats(0, 1e3)),
               lr=draw(st.one_of(st.floats(1e-3, 1.0), st.sampled_from([1e-12, 1e3]))),
               horizon=draw(st.one_of(st.floats(1e-3, 50.0), st.sampled_from([1e-12, 1e-3]))))
    if draw(st.booleans()) and n == d:
        out["model"] = "tied"
    if normalizer == "softmax":
        out["temperature"] = draw(st.one_of(st.just(1.0), st.floats(1e-3, 1e3)))
    explicit = draw(st.sets(st.sampled_from(["a0", "V0", "target", "X"])))
    if "a0" in explicit:
        out["a0"] = draw(st.lists(numbers, min_size=n, max_size=n))
    if "V0" in explicit:
        out["V0"] = draw(st.lists(st.lists(numbers, min_size=n, max_size=n), min_size=d, max_size=d))
    if "target" in explicit:
        entries = numbers.map(abs) if loss == "kl" else numbers
        out["target"] = draw(st.lists(entries, min_size=d, max_size=d))
    if "X" in explicit and loss != "kl":
        m = draw(st.integers(1, 4))
        out["X"] = draw(st.lists(st.lists(numbers, min_size=d, max_size=d), min_size=m, max_size=m))
        labels = st.sampled_from([-1.0, 1.0]) if loss == "logistic" else numbers
        out["y"] = draw(st.lists(labels, min_size=m, max_size=m))
    elif loss == "square" and draw(st.booleans()):
        out.update(kappa=draw(st.floats(1.0, 1e6)), m=draw(st.integers(1, 4)))
    return out


def json_text(config: dict) -> str:
    try:
        return json.dumps(config, default=str)
    except ValueError:  # an integer too long for Python to print: the reader's own limit is tested
        return '{"n": ' + "9" * 5000 + "}"


def _as_link_value(value) -> str:
    try:
        return value if isinstance(value, str) else json.dumps(value)
    except (TypeError, ValueError):
        return "?"


links = st.one_of(
    configs().map(lambda c: {str(k): _as_link_value(v) for k, v in c.items()}),
    st.dictionaries(st.sampled_from([*FIELDS, "utm_source"]), st.one_of(
        st.text(max_size=20), st.sampled_from(["[" * 1000 + "]" * 1000, "9" * 5000, "1e400", "nan", "-0",
                                               "[[1e308, 1e308]]", "[true, false]", "[1, [2]]", " 3 "])),
        max_size=6),
)


environment_values = st.one_of(
    st.sampled_from(["", "inf", "-inf", "nan", "1e400", "0", "-1", "2.9", "lots", "1e7", "4096", " 12 ",
                     "0x10", "1_000", "1e-320"]),
    st.floats().map(repr), st.integers(-10, 10**20).map(str),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=8))


LINK_VALUES = st.one_of(st.text(max_size=12), st.sampled_from(
    ["[" * 1000 + "]" * 1000, "9" * 5000, "1e400", "nan", "inf", "-0", "1e-320", "5e-324", "[[1e308]]",
     "[true]", "", " ", "\n", "-1", "0", "2.5", "1e15", "4096", "100000", "softmax", "gd", "tied"]))


def assert_round_trips(e: Experiment) -> None:
    """An accepted experiment comes back equal through every form it is written in."""
    text = json.dumps(e.to_dict(), allow_nan=False)  # no NaN or infinity reaches the JSON
    assert Experiment.from_json(text) == e
    assert Experiment.from_dict(e.to_dict()) == e
    assert Experiment.from_dict(e.to_dict()).to_dict() == e.to_dict()


def build(config: dict) -> Experiment | None:
    """``Experiment.from_dict(config)``, or None when it is refused (by a ConfigError, nothing else)."""
    try:
        e = Experiment.from_dict(config)
    except ConfigError as exc:
        assert exc.field and "\n" not in str(exc)
        event("refused")
        return None
    assert_round_trips(e)
    event("accepted")
    return e
