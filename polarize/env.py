"""The environment variables that set the caps and the app's time limit, parsed strictly.

Each must be a positive finite number (a whole one for counts); anything else
(``inf``, ``nan``, ``0``, ``-1``, ``2.9`` for a count, ``lots``) is a
``ConfigError`` naming the variable and saying what it accepts, never a cap
silently removed or truncated. An unset or empty variable means the default.

The defaults are sized for the hosted app. The command line runs on one's own
machine, inside ``local_caps()``, where an unset variable means ``LOCAL_CAPS``
instead: enough for every preset in full (``paper-kl`` by descent is the
notebook's 1e7 steps). A variable that is set is the cap everywhere.

``POLARIZE_HOSTED`` (``1`` or ``0``, unset: ``0``) says the app serves the public
(the Dockerfile sets it): then no visitor sees another's data or the server's paths.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from polarize.fields import ConfigError, shown

__all__ = ["CAPS", "HOSTED", "LOCAL_CAPS", "data_dir", "environment_problem", "hosted", "limits",
           "local_caps", "positive_number"]

HOSTED = "POLARIZE_HOSTED"
"""The variable that marks a public server: ``1`` or ``0``."""

CAPS = {
    "max_n": ("POLARIZE_MAX_N", 4096),
    "max_d": ("POLARIZE_MAX_D", 4096),
    "max_size": ("POLARIZE_MAX_SIZE", 1 << 20),
    "max_horizon": ("POLARIZE_MAX_HORIZON", 1e300),  # the closed logistic flow gets there in a second
    "max_steps": ("POLARIZE_MAX_STEPS", 2_000_000),
    "max_samples": ("POLARIZE_MAX_SAMPLES", 2000),
}
"""Caps sized for a hosted demo: key of ``limits()`` -> (variable, default). An int default
makes the cap a count, which must be a whole number."""

LOCAL_CAPS = {"max_steps": 100_000_000}
"""Defaults that replace those of ``CAPS`` inside ``local_caps()`` (the command line): ten times the
descent steps of the longest preset (``paper-kl``, 1e7), so a typo in ``lr`` is still refused."""

_LOCAL = contextvars.ContextVar("polarize_local_caps", default=False)


@contextlib.contextmanager
def local_caps() -> Iterator[None]:
    """Within this block, ``limits()`` takes ``LOCAL_CAPS`` for the variables that are not set.

    For the command line, which runs on the user's own machine: the app's caps
    protect a shared server, not a local run of a preset in full.
    """
    token = _LOCAL.set(True)
    try:
        yield
    finally:
        _LOCAL.reset(token)


def positive_number(var: str, default: float, *, whole: bool = False) -> float:
    """The value of environment variable ``var``: a positive finite number, or ``default`` when unset.

    Parameters
    ----------
    var : str
        The variable's name (it names the error).
    default : float
        Returned when the variable is unset or empty.
    whole : bool
        Require a whole number (``"1e7"`` and ``"4096"`` are whole) and return an ``int``.

    Raises
    ------
    ConfigError
        Naming ``var``, when the value is not a positive finite (whole) number.
    """
    raw = os.environ.get(var, "").strip()
    if not raw:
        return default
    kind = "a positive whole number" if whole else "a positive finite number"
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0 and (value.is_integer() or not whole)):
        raise ConfigError(var, f"environment variable must be {kind}, got {shown(raw)}")
    return int(value) if whole else value


def limits() -> dict[str, float]:
    """The caps in force now (read from the environment at each call; ``LOCAL_CAPS`` in ``local_caps()``).

    Returns
    -------
    dict
        ``max_n``, ``max_d``, ``max_size`` (n * d, and m * d of a design),
        ``max_horizon``, ``max_steps`` (gradient-descent steps) and ``max_samples``.

    Raises
    ------
    ConfigError
        Naming the variable whose value is not a positive finite (whole) number.
    """
    local = LOCAL_CAPS if _LOCAL.get() else {}
    return {key: positive_number(var, local.get(key, default), whole=isinstance(default, int))
            for key, (var, default) in CAPS.items()}


def hosted() -> bool:
    """Whether the app serves the public (``POLARIZE_HOSTED=1``): each visitor's decks stay theirs.

    Raises
    ------
    ConfigError
        Naming ``POLARIZE_HOSTED``, when it is set to anything but ``1`` or ``0``.
    """
    raw = os.environ.get(HOSTED, "").strip()
    if raw not in ("", "0", "1"):
        raise ConfigError(HOSTED, f"environment variable must be 1 or 0, got {shown(raw)}")
    return raw == "1"


def environment_problem() -> str | None:
    """What is wrong with the caps, ``POLARIZE_APP_TIMEOUT`` or ``POLARIZE_HOSTED``, in one line, or None.

    For entry points to check before anything else runs (the app, the command line).
    """
    try:
        limits()
        positive_number("POLARIZE_APP_TIMEOUT", 1.0)
        hosted()
    except ConfigError as exc:
        return str(exc)
    return None


def data_dir() -> Path:
    """Where polarize keeps its data: ``POLARIZE_DATA_DIR``, else the user's data directory."""
    if os.environ.get("POLARIZE_DATA_DIR"):
        return Path(os.environ["POLARIZE_DATA_DIR"])
    home = Path.home()
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", home / "AppData" / "Roaming")) / "polarize"
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "polarize"
    return Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share") / "polarize"
