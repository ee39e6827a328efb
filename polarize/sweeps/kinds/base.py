"""What a sweep kind is: the one object that knows a kind's settings, cells, rows and pictures.

A kind is an entry of ``polarize.sweeps.kinds.KINDS`` (its ``name`` is what a sweep file's ``kind``
says). The spec reads a file's settings into the kind's ``Settings`` (a frozen, keyword-only
dataclass validated with ``polarize.fields``, each field in a section of the file: ``setting``), the
tasks build the kind's cells and run them on a worker, the rows take its ``schema``, and the Sweeps
page draws its fractions and figures. Nothing else asks which kind a sweep is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from polarize.fields import ConfigError
from polarize.sweeps.cell import Cell, digest

if TYPE_CHECKING:
    from polarize.sweeps.spec import Sweep

__all__ = ["NoSettings", "SweepKind", "setting"]

Words = Callable[[str], str]
"""An axis's key -> its name for people (the page's labels)."""


def setting(default: Any, section: str = "options") -> Any:
    """A field of a kind's ``Settings``, read from ``[section]`` of a sweep file (``section.name``)."""
    return dataclasses.field(default=default, metadata={"section": section})


@dataclasses.dataclass(frozen=True, kw_only=True)
class NoSettings:
    """The settings of a kind that has none."""


class SweepKind:
    """One kind of sweep: subclass it in a module of ``polarize/sweeps/kinds`` whose ``KIND`` is an
    instance, the module listed in ``_MODULES``.

    Attributes
    ----------
    name : str
        What a sweep file's ``kind`` says.
    label : str
        Its name for people.
    unit : str
        What one trial of its fractions is, in words ("runs", "starts").
    Settings : type
        A frozen keyword-only dataclass of its settings (fields made with ``setting``), validated in
        ``__post_init__`` with ``polarize.fields``, each error naming ``section.field``.
    axes : frozenset of str
        The keys its grid may vary.
    schema : mapping
        Its outcome's columns and their Arrow types (after ``polarize.sweeps.rows.COMMON``).
    fractions : mapping
        The shares the Sweeps page can show: column -> (short name, what it counts), the first its default.
    fraction_x : str or None
        The axis its fractions are drawn against (None: picked from the grid).
    seeds_cluster : bool
        Whether the trials of one seed share that seed's draws (their fractions' band is then between
        seeds, not Wilson's).
    measures : mapping
        Columns whose spread over seeds the page can draw -> their words.
    samples : bool
        Whether a few tasks are run in-process before the cluster starts to estimate the whole.
    """

    name: ClassVar[str]
    label: ClassVar[str]
    unit: ClassVar[str] = "runs"
    Settings: ClassVar[type] = NoSettings
    axes: ClassVar[frozenset[str]] = frozenset()
    schema: ClassVar[Mapping[str, str]] = MappingProxyType({})
    fractions: ClassVar[Mapping[str, tuple[str, str]]] = MappingProxyType({})
    fraction_x: ClassVar[str | None] = None
    seeds_cluster: ClassVar[bool] = False
    measures: ClassVar[Mapping[str, str]] = MappingProxyType({})
    samples: ClassVar[bool] = True

    def __repr__(self) -> str:
        return f"<sweep kind {self.name!r}>"

    # ---- the file -----------------------------------------------------------------------------------
    def sections(self) -> dict[str, dict[str, Any]]:
        """Section -> setting -> default, as a sweep file lays the kind's settings out."""
        out: dict[str, dict[str, Any]] = {}
        for f in dataclasses.fields(self.Settings):
            out.setdefault(f.metadata.get("section", "options"), {})[f.name] = f.default
        return out

    def check_base(self, key: str, value: Any) -> None:
        """Refuse a ``[base]`` key the kind does not take (``ConfigError`` naming ``base.key``)."""
        raise ConfigError(f"base.{key}", f"is not a field of a {self.name} cell")

    def config(self, base: Mapping[str, Any], cell: Mapping[str, Any]) -> Any:
        """The config of one cell (``to_dict``-able), or a ``ConfigError`` naming the field at fault."""
        raise NotImplementedError

    def config_json(self, config: Any) -> str:
        """A cell's config as the JSON its row records."""
        return config.to_json()

    def check_axis(self, key: str, value: Any) -> None:
        """Check one grid value that is no config field (an ensemble's ``scale``); default nothing."""

    def blamed(self, key: str) -> frozenset[str]:
        """The config fields whose error a value on axis ``key`` is blamed for (default: ``key``)."""
        return frozenset((key,))

    def check(self, sweep: Sweep, *, allow_large: bool) -> None:
        """Checks across settings and the grid, before any cell is built; default nothing."""

    # ---- cells and tasks ----------------------------------------------------------------------------
    def results_per_cell(self, settings: Any) -> int:
        """Result cells (tasks' units) of one grid cell."""
        return 1

    def cells_per_task(self, settings: Any) -> int:
        """Result cells run one after another in one task."""
        return 1

    def cells(self, sweep: Sweep) -> Iterator[Cell]:
        """Every result cell, its config built (and hashed) here, its failure kept in words."""
        for index, params in enumerate(sweep.cells()):
            try:
                config, error = self.config_json(self.config(sweep.base, params)), None
            except ConfigError as exc:
                config, error = None, str(exc)
            ident = config if config is not None else {"base": dict(sweep.base), "params": params}
            yield from self.split(index, params, config, error, ident, sweep.settings)

    def split(self, index: int, params: dict, config: str | None, error: str | None, ident: Any,
              settings: Any) -> Iterator[Cell]:
        """A grid cell's result cells (default: itself)."""
        yield Cell(index=index, params=params, hash=digest(self.name, ident), config=config, error=error)

    def preflight(self, *, here: bool) -> None:
        """Refuse to start when the cells cannot run (``here``: on this machine); default nothing."""

    def estimate(self, sweep: Sweep, cells: list[Cell]) -> tuple[float | None, str]:
        """Without sampling: the CPU seconds of ``cells`` and a line saying so, or ``(None, "")``."""
        return None, ""

    def run_cell(self, cell: Cell, settings: Any, base: Mapping[str, Any]) -> tuple[list[dict], dict | None]:
        """Run one cell on a worker: its rows (``schema``'s columns) and its saved series or None."""
        raise NotImplementedError

    # ---- the page -----------------------------------------------------------------------------------
    def fraction_words(self, what: str, settings: Any) -> tuple[str, str]:
        """The short name and the words of fraction ``what`` under these settings."""
        return self.fractions[what]

    def counts(self, ok, what: str):
        """Per row of ``ok`` (rows without error): the rows that are trials, their successes and trials."""
        ok = ok[ok[what].notna()]  # no prediction where it is not defined: not a trial
        return ok, ok[what].astype(float), np.ones(len(ok))

    def figures(self, frame, sweep: Sweep, choices: Mapping[str, Any], words: Words, *,
                narrow: bool = False) -> tuple[tuple[str, Any, str], ...]:
        """Figures beyond the fraction's, each ``(key, figure, caption)``; default none."""
        return ()
