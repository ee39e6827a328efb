"""One control of a page: a widget in the sidebar and a key of the page's shareable link.

A ``Control`` says everything the renderer and the link reader need: its label
and help, its widget, its range or options, when it applies to the other
values, and (for a few) a value it must take given the others. ``parse``
reads one link value; ``format_value`` writes one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

__all__ = ["Control", "ControlKind", "format_value"]

Values = Mapping[str, Any]



class ControlKind(StrEnum):
    """The widget a control is drawn as (a ``str`` enum: a page may name it as text, ``"select"``)."""

    SLIDER = "slider"
    NUMBER = "number"
    SELECT = "select"
    RADIO = "radio"
    SELECT_SLIDER = "select_slider"
    MULTISELECT = "multiselect"

    @property
    def numeric(self) -> bool:
        """Whether the control holds a number of a range (a slider, a number box), not its options'."""
        return self in (ControlKind.SLIDER, ControlKind.NUMBER)


@dataclass(frozen=True)
class Control:
    """A control: its widget, its link key, and its rules.

    Attributes
    ----------
    key : str
        Link key, and the widget's key (after the page's name).
    label, help : str
    kind : ControlKind
        The widget (a page may give its value as text); ``multiselect`` holds a sorted tuple of options
        (``10,20,50`` in a link).
    low, high : float or None
        Inclusive range of a number.
    options : sequence
        The choices of a select, radio, select slider or multiselect (a registry's live ``names``
        view offers what is registered when the page is drawn).
    step : float or None
        Step of a number input (an int step makes the control hold ints).
    integer : bool
        Whether the value is a whole number.
    names : mapping
        Display names of options (others show as ``str``, or ``names_of`` when given).
    names_of : callable, optional
        Display name of any option (e.g. a time as ``1e12``).
    applies : callable, optional
        ``applies(values)``: whether the control matters for these values (its widget is disabled otherwise).
    derive : callable, optional
        ``derive(values)``: the value the control must take given the others, or None when it is free.
    off_help : str
        Appended to ``help`` while the control is disabled.
    most : int
        Largest number of items of a multiselect.
    group : str
        A heading drawn before the first control of the group.
    half : bool
        Two consecutive half controls share a row.
    caption : callable, optional
        ``caption(value)``: a line of text under the widget (e.g. a preset's description).
    """

    key: str
    label: str
    kind: ControlKind
    low: float | None = None
    high: float | None = None
    options: Sequence[Any] = ()
    step: float | None = None
    integer: bool = False
    help: str = ""
    names: Mapping[Any, str] = field(default_factory=dict)
    names_of: Callable[[Any], str] | None = None
    applies: Callable[[Values], bool] | None = None
    derive: Callable[[Values], Any] | None = None
    off_help: str = ""
    most: int = 6
    group: str = ""
    half: bool = False
    caption: Callable[[Any], str] | None = None

    def __post_init__(self) -> None:
        if self.kind not in set(ControlKind):
            raise ValueError(f"unknown control kind {self.kind!r}")
        object.__setattr__(self, "kind", ControlKind(self.kind))

    def name(self, option: Any) -> str:
        """The display name of an option (``format_func`` of a widget)."""
        if option in self.names:
            return self.names[option]
        if self.names_of is not None:
            return self.names_of(option)
        return f"{option:g}" if isinstance(option, float) else str(option)

    def enabled(self, values: Values) -> bool:
        """Whether the user may set this control now (it applies and is not derived from the others)."""
        if self.derive is not None and self.derive(values) is not None:
            return False
        return self.applies is None or bool(self.applies(values))

    def parse(self, raw: Any) -> Any:
        """A link value as a control value.

        Parameters
        ----------
        raw : str, or a list of them (the last one counts; a multiselect joins them)

        Returns
        -------
        int, float, str, or a sorted tuple of options for a multiselect

        Raises
        ------
        ValueError
            With the reason in words; the raw text is not repeated (the page shows it, safely).
        """
        if self.kind is ControlKind.MULTISELECT:
            return self._parse_list(raw)
        if isinstance(raw, (list, tuple)):
            if not raw:
                raise ValueError("has no value")
            raw = raw[-1]
        text = str(raw).strip()
        if self.options and not isinstance(self.options[0], (int, float)):
            return self._parse_choice(text)
        return self._parse_number(text)

    def _parse_choice(self, text: str) -> Any:
        """The option ``text`` names, as people type it: any case, spacing and punctuation, by its key or
        its display name (``L2``, ``Cross entropy``, ``relu``), when it names exactly one."""
        if text in self.options:
            return text
        typed = _plain(text)
        named = {o for o in self.options if typed and typed in (_plain(str(o)), _plain(self.name(o)))}
        if len(named) != 1:
            raise ValueError(f"must be one of {', '.join(map(str, self.options))}")
        return named.pop()

    def _parse_number(self, text: str) -> int | float:
        try:
            value = float(text)
        except ValueError:
            raise ValueError("must be a number") from None
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        if self.options:
            match = [o for o in self.options if math.isclose(value, o, rel_tol=1e-9)]
            if not match:
                raise ValueError(f"must be one of the offered values ({self.name(self.options[0])} to "
                                 f"{self.name(self.options[-1])})")
            return match[0]
        if self.integer:
            if not value.is_integer():
                raise ValueError("must be a whole number")
            value = int(value)
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            low, high = (f"{int(x)}" if self.integer else f"{x:g}" for x in (self.low, self.high))
            raise ValueError(f"must be between {low} and {high}")
        return value

    def _parse_list(self, raw: Any) -> tuple[Any, ...]:
        if isinstance(raw, (list, tuple)):
            raw = ",".join(map(str, raw))
        items = [part.strip() for part in str(raw).split(",") if part.strip()]
        if not items:
            raise ValueError("has no value")
        out = set()
        for item in items:
            try:
                value = float(item)
            except ValueError:
                raise ValueError("must be numbers separated by commas") from None
            match = [o for o in self.options if math.isclose(value, o, rel_tol=1e-9)]
            if not match:
                raise ValueError(f"must be among {', '.join(self.name(o) for o in self.options)}")
            out.add(match[0])
        if len(out) > self.most:
            raise ValueError(f"takes at most {self.most} values; got {len(out)}")
        return tuple(sorted(out))

    def fit(self, value: Any) -> Any:
        """A value from elsewhere (a selected point of a figure) as this control holds it, or None.

        A number is taken down to a multiple of the step (so that shares taken down still add up to
        at most 1), then clipped to the range; an option must be one of ``options``.
        """
        if self.options:
            match = [o for o in self.options if o == value]
            return match[0] if match else None
        try:
            value = float(value)
        except (TypeError, ValueError):
            return None
        if not math.isfinite(value):
            return None
        if self.step:
            value = round(math.floor(value / self.step + 1e-9) * self.step, 12)
        low = -math.inf if self.low is None else self.low
        value = min(max(value, low), math.inf if self.high is None else self.high)
        return round(value) if self.integer else value

    def to_text(self, value: Any) -> str:
        """The value as link text (lists as ``10,20,50``)."""
        if self.kind is ControlKind.MULTISELECT:
            return ",".join(format_value(v) for v in value)
        return format_value(value)


def format_value(value: Any) -> str:
    """The shortest exact text of a value for a URL (``1e12``, ``0.1``, ``8``, ``softmax``).

    Exponents are written without ``+`` (which a query string would read as a space).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    value = float(value)
    if value.is_integer() and abs(value) < 1e6:
        return str(int(value))
    plain = str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value).replace("e+", "e")
    for digits in range(17):
        text = f"{value:.{digits}e}"
        if float(text) == value:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}e{int(exponent)}"
            # Plain decimals unless the exponent form is clearly shorter (1e12, not 2e-3).
            return text if len(text) + 2 < len(plain) else plain
    return plain


def _plain(text: str) -> str:
    """``text`` as a choice is compared: lower case, letters and digits only."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())
