"""Sweep kinds own their facts: a kind registered at run time, in this file only, runs as a sweep.

The README's recipe "a sweep kind": a ``SweepKind`` with its settings, axes, schema, cells and
fractions, registered with ``monkeypatch.setitem(KINDS, ...)`` and no other file changed, is read
from a sweep file (its settings validated, errors naming the field), run into a results folder,
summarized, and drawn by the Sweeps page. A results folder written before the kinds were a registry
(its manifest listing every kind's sections, under another digest) is resumed, not refused.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

import pytest

from polarize.fields import ConfigError, integer
from polarize.sweeps import load, read_sweep, run_sweep, store
from polarize.sweeps.kinds import KINDS, SweepKind, setting
from polarize.sweeps.summary import fraction_table


@dataclasses.dataclass(frozen=True, kw_only=True)
class CoinSettings:
    """``[coin] flips``: how many coins a cell tosses."""

    flips: int = setting(4, "coin")

    def __post_init__(self) -> None:
        object.__setattr__(self, "flips", integer("coin.flips", self.flips, 1, 100))


@dataclasses.dataclass(frozen=True)
class CoinConfig:
    bias: float
    seed: int

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))


class Coins(SweepKind):
    """Toss ``flips`` coins of ``bias`` at a seed; heads (a pure function of the cell) in one row."""

    name = "coins"
    label = "coin tosses"
    unit = "tosses"
    Settings = CoinSettings
    axes = frozenset({"bias", "seed"})
    schema: ClassVar[Mapping[str, str]] = MappingProxyType({"heads": "int64", "flips": "int64"})
    fractions: ClassVar[Mapping[str, tuple[str, str]]] = MappingProxyType(
        {"heads": ("heads", "the coin lands heads")})

    def check_base(self, key: str, value: Any) -> None:
        if key not in self.axes:
            super().check_base(key, value)

    def config(self, base, cell) -> CoinConfig:
        merged = {"bias": 0.5, "seed": 0, **base, **cell}
        if not 0 <= merged["bias"] <= 1:
            raise ConfigError("bias", f"must be in [0, 1]; got {merged['bias']}")
        return CoinConfig(bias=float(merged["bias"]), seed=int(merged["seed"]))

    def run_cell(self, cell, settings, base):
        config = json.loads(cell.config)
        heads = round(config["bias"] * settings.flips)  # a fair count, no randomness to compare
        return [{"status": "finished", "message": "", "heads": heads, "flips": settings.flips}], None

    def counts(self, ok, what):
        return ok, ok["heads"].astype(float), ok["flips"].astype(float)


@pytest.fixture
def coins(monkeypatch):
    monkeypatch.setitem(KINDS, Coins.name, Coins())
    return Coins.name


def _file(tmp_path, text: str):
    path = tmp_path / "coins.toml"
    path.write_text(text)
    return path


def test_a_kind_registered_at_run_time_runs_a_sweep_end_to_end(coins, tmp_path):
    pytest.importorskip("distributed")
    sweep = read_sweep(_file(tmp_path, 'kind = "coins"\n[grid]\nbias = [0.25, 1.0]\n[coin]\nflips = 8\n'))
    assert sweep.entry is KINDS["coins"] and sweep.settings == CoinSettings(flips=8)
    assert sweep.to_dict()["coin"] == {"flips": 8} and "options" not in sweep.to_dict()
    folder = tmp_path / "results"
    progress = run_sweep(sweep, folder)  # two tasks: both run here, as the sample, no cluster started
    assert (progress.done, progress.errors, progress.failed) == (2, 0, 0)
    frame = load(folder)
    assert sorted(frame["heads"]) == [2, 8] and set(frame["status"]) == {"finished"}
    table = fraction_table(frame, coins, "heads", ["bias"])
    assert table["share"].tolist() == [0.25, 1.0] and table["trials"].tolist() == [8, 8]
    assert store.manifest_sweep(store.read_manifest(folder)).digest() == sweep.digest()
    assert run_sweep(sweep, folder).skipped == 2  # resumed by hash: nothing run twice


def test_its_settings_and_axes_are_checked_naming_the_field(coins, tmp_path):
    cases = {'[coin]\nflips = 0\n': "coin.flips", '[coin]\nflips = "many"\n': "coin.flips",
             '[coin]\nsides = 2\n': "coin.sides", '[options]\ncells_per_task = 3\n': "options",
             '[grid]\nbias = [0.5, 2.0]\n': "grid.bias"}
    for extra, field in cases.items():
        grid = "" if "[grid]" in extra else "[grid]\nseed = [0]\n"
        with pytest.raises(ConfigError) as caught:
            read_sweep(_file(tmp_path, f'kind = "coins"\n{grid}{extra}'))
        assert caught.value.field == field, (extra, str(caught.value))
    with pytest.raises(ConfigError) as caught:
        read_sweep(_file(tmp_path, 'kind = "coins"\n[grid]\nn = [3]\n'))
    assert caught.value.field == "grid.n" and "coins sweep" in str(caught.value)


def test_the_sweeps_page_draws_it_through_the_kind(coins, tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    from polarize.web.pages import sweeps as page

    folder = tmp_path / "results"
    run_sweep(read_sweep(_file(tmp_path, 'kind = "coins"\n[grid]\nbias = [0.25, 1.0]\n')), folder)
    found = page.sources()
    monkeypatch.setattr(page, "sources", lambda: {**found, "data:coins": folder})
    values = page.PAGE.defaults(None) | {"sweep": "data:coins"}
    assert not any(c.enabled(values) for c in page.CONTROLS if c.key in ("fraction", "measure"))
    view = page.PAGE.view(tuple(sorted(values.items())))
    assert view.error is None, view.error
    (plot,) = view.plots()
    assert plot.caption.startswith("The share of tosses where the coin lands heads, by `bias`")


def test_a_folder_written_before_kinds_were_a_registry_is_resumed(tmp_path):
    """Its manifest lists every kind's sections at their defaults, under the digest of that form."""
    sweep = read_sweep(_file(tmp_path, 'kind = "runs"\n[base]\nhorizon = 10\n[grid]\nseed = [0, 1]\n'))
    old = sweep.to_dict() | {"ensemble": {"starts": 1000, "chunk": 100000, "rows": "cells", "scale": 1.0,
                                          "draw_seed": 0}}
    folder = tmp_path / "old"
    folder.mkdir()
    manifest = {"name": "old", "kind": "runs", "digest": "0123456789abcdef", "sweep": old}
    (folder / store.MANIFEST).write_text(json.dumps(manifest))
    store.write_manifest(folder, sweep)
    assert store.read_manifest(folder)["digest"] == sweep.digest()
    other = read_sweep(_file(tmp_path, 'kind = "runs"\n[base]\nhorizon = 20\n[grid]\nseed = [0, 1]\n'))
    with pytest.raises(ConfigError, match="another sweep"):
        store.write_manifest(folder, other)
