"""A registry: names to the entries that carry their own facts (a label first of all).

``NORMALIZERS`` and ``LOSSES`` are registries. A ``Registry`` is a ``dict`` (name -> entry), so
an entry can be added at run time (``register``, or ``monkeypatch.setitem`` in a test) and
everything that lists the registry sees it: menus, tables, the command line. ``names`` and
``labels`` are live views (the names in order; name -> ``entry.label``) for a menu's options and
display names: a menu built once, at import, still offers an entry registered later.
"""

from __future__ import annotations

from collections import UserList
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar, cast

__all__ = ["LiveList", "Registry"]

T = TypeVar("T")


class Registry(dict[str, T], Generic[T]):
    """Names to entries; each entry has a ``name`` and a ``label`` (its name for people)."""

    def register(self, entry: T) -> T:
        """Add ``entry`` under its ``name`` (usable as a class decorator); returns it."""
        self[cast(Any, entry).name] = entry
        return entry

    @property
    def names(self) -> Sequence[str]:
        """The names in order, read from the registry as it is when asked (a live view)."""
        return LiveList(lambda: self)

    @property
    def labels(self) -> Mapping[str, str]:
        """Name -> label of every entry, read from the registry as it is when asked (a live view)."""
        return _Labels(self)


class LiveList(UserList):
    """A list read afresh from ``source()`` at each use (a ``UserList``, which widgets take as a list:
    Streamlit copies it when the menu is drawn): a registry's names, the results folders on disk."""

    def __init__(self, source: Callable[[], Iterable[Any]]) -> None:  # no list of its own to fill
        self._source = source

    @property  # type: ignore[override]
    def data(self) -> list[Any]:
        return list(self._source())


class _Labels(Mapping[str, str]):
    def __init__(self, registry: Mapping[str, Any]) -> None:
        self._registry = registry

    def __getitem__(self, name: str) -> str:
        return self._registry[name].label

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry)

    def __len__(self) -> int:
        return len(self._registry)
