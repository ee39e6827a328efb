"""Every ``POLARIZE_*`` environment variable, parsed strictly, in one place (``VARIABLES``).

Caps and the app's time limit must be positive finite numbers (a whole one for
counts) no larger than the most the code can honour; anything else (``inf``,
``nan``, ``0``, ``-1``, ``2.9`` for a count, ``1e18`` for a size, ``lots``) is a
``ConfigError`` naming the variable and saying what it accepts, never a cap
silently removed or truncated. Switches (``flag``) take ``1``/``0``,
``true``/``false``, ``yes``/``no`` or ``on``/``off`` in any case, and refuse
anything else. ``POLARIZE_DATA_DIR`` must name a folder that can be one (not a
file, a device, a path under ``/proc``, ``/sys`` or ``/dev``, or an over-long
name). An unset or empty variable means the default.

The defaults are sized for the hosted app. The command line runs on one's own
machine, inside ``local_caps()``, where an unset variable means ``LOCAL_CAPS``
instead: enough for every preset in full (``paper-kl`` by descent is the
notebook's 1e7 steps). A variable that is set is the cap everywhere.

``POLARIZE_HOSTED`` (a switch) says whether the app serves the public (the Dockerfile sets it
to 1). Private is the default: the app keeps visitors' decks on the server's disk, shared by
all, only where an operator asked for it (``shares_disk``): ``POLARIZE_HOSTED=0`` explicitly, or
``POLARIZE_DATA_DIR`` set without ``POLARIZE_HOSTED=1``. Otherwise no visitor sees another's
data or the server's paths.
``POLARIZE_APP_INPROCESS`` (a switch, unset: off) runs the app's runs in its own
process, without their time limit. ``POLARIZE_SCHEDULER`` (unset: this server's own worker
processes) sends them to a Dask scheduler's workers instead (``scheduler_address``).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from polarize.fields import ConfigError, shown

__all__ = ["CAPS", "FLOORS", "HOSTED", "LOCAL_CAPS", "VARIABLES", "data_dir", "data_dir_setting",
           "environment_problem", "flag", "hosted", "in_process", "limits", "local_caps", "max_starts",
           "positive_number", "shares_disk"]

HOSTED = "POLARIZE_HOSTED"
"""The variable that marks a public server: ``1`` or ``0``."""

CAPS = {
    "max_n": ("POLARIZE_MAX_N", 4096, 1 << 20),
    "max_d": ("POLARIZE_MAX_D", 4096, 1 << 20),
    # 2**28 entries: 2 GiB a matrix; the longest config text (serialize.max_text_bytes) stays an int
    # that a file read can take.
    "max_size": ("POLARIZE_MAX_SIZE", 1 << 20, 1 << 28),
    # 1e300: the closed logistic flow gets there in a second; beyond, horizon / lr leaves the floats.
    "max_horizon": ("POLARIZE_MAX_HORIZON", 1e300, 1e300),
    # Step counts are int64 (2**63 ~ 9e18) in the descent's save plan: 1e15 leaves room.
    "max_steps": ("POLARIZE_MAX_STEPS", 2_000_000, 10**15),
    "max_samples": ("POLARIZE_MAX_SAMPLES", 2000, 1_000_000),
}
"""Caps sized for a hosted demo: key of ``limits()`` -> (variable, default, most it may be set to).
An int default makes the cap a count, which must be a whole number."""

FLOORS = {"max_n": 2, "max_d": 1, "max_size": 2, "max_horizon": 1e-12, "max_steps": 1, "max_samples": 2}
"""The least each cap may be set to: what the least setting takes (n >= 2, d >= 1, n * d >= 2, a horizon
of ``config.MIN_TIME``, one descent step, two saved times). A cap below it would refuse every run, naming
the setting and not the variable."""

STARTS = ("POLARIZE_MAX_STARTS", 100_000, 10_000_000)
"""The cap on ``simulate_many``'s starts: (variable, default, most; 10**7 rows are already GBs)."""
TIMEOUT = ("POLARIZE_APP_TIMEOUT", 20.0, 1e300)
"""The app's hard time limit per run, in seconds: (variable, default, most). The runner waits for
any finite limit (in turns, past what select() takes), so the bound only keeps it a float."""
IN_PROCESS = "POLARIZE_APP_INPROCESS"
"""The switch that runs the app's runs in its own process (without a time limit)."""
SCHEDULER = "POLARIZE_SCHEDULER"
"""A Dask scheduler's address for the app's runs (``tcp://host:8786``); unset: the server's own workers."""
_SCHEMES = ("tcp", "tls")
DATA_DIR = "POLARIZE_DATA_DIR"
"""The folder of polarize's data (the deck store); unset: the user's data directory."""
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
_SYSTEM_TREES = (Path("/proc"), Path("/sys"), Path("/dev"))

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


def positive_number(var: str, default: float, *, whole: bool = False, most: float = math.inf,
                    least: float = 0.0) -> float:
    """The value of environment variable ``var``: a positive finite number, or ``default`` when unset.

    Parameters
    ----------
    var : str
        The variable's name (it names the error).
    default : float
        Returned when the variable is unset or empty.
    whole : bool
        Require a whole number (``"1e7"`` and ``"4096"`` are whole) and return an ``int``.
    most : float
        The largest value accepted.
    least : float
        The smallest value accepted (above 0 in any case).

    Raises
    ------
    ConfigError
        Naming ``var``, when the value is not a positive finite (whole) number in ``[least, most]``.
    """
    raw = os.environ.get(var, "").strip()
    if not raw:
        return default
    kind = "a positive whole number" if whole else "a positive finite number"
    if least > 0:
        kind += f" from {int(least):,}" if whole else f" from {least:g}"
    if math.isfinite(most):
        kind += f" up to {int(most):,}" if whole else f" up to {most:g}"
    try:
        # ASCII only (float() also reads Arabic-Indic digits), and no 5,000-digit integers.
        value = float(raw) if len(raw) <= 100 and raw.isascii() else math.nan
    except ValueError:
        value = math.nan
    fits = math.isfinite(value) and 0 < value <= most and value >= least
    if not fits or not (value.is_integer() or not whole):
        raise ConfigError(var, f"environment variable must be {kind}, got {shown(raw)}")
    return int(value) if whole else value


def flag(var: str, default: bool = False) -> bool:
    """The switch ``var``: ``1``, ``true``, ``yes``, ``on`` or ``0``, ``false``, ``no``, ``off`` (any case).

    Raises
    ------
    ConfigError
        Naming ``var``, when it is set to anything else.
    """
    raw = os.environ.get(var, "").strip().lower()
    if not raw:
        return default
    if raw in _TRUE or raw in _FALSE:
        return raw in _TRUE
    raise ConfigError(var, f"environment variable must be one of {', '.join(_TRUE)} (on) or "
                      f"{', '.join(_FALSE)} (off), got {shown(os.environ[var].strip())}")


def data_dir_setting() -> Path | None:
    """``POLARIZE_DATA_DIR`` as a folder polarize can keep data in, or None when unset.

    Raises
    ------
    ConfigError
        Naming the variable, when the path is a file or device, lies under ``/proc``,
        ``/sys`` or ``/dev``, or has a name too long for the file system.
    """
    raw = os.environ.get(DATA_DIR, "")
    if not raw.strip():
        return None
    try:
        path = Path(raw).expanduser().absolute()
    except (RuntimeError, OSError, ValueError):  # "~someone" of no such user, or no home folder at all
        raise ConfigError(DATA_DIR, f"environment variable names {shown(raw)}, whose home folder is not "
                          "known here; set it to a full path") from None
    if any(path == tree or tree in path.parents for tree in _SYSTEM_TREES):
        raise ConfigError(DATA_DIR, f"environment variable names {shown(raw)}, under a system folder; "
                          "set it to a folder of your own")
    try:
        if len(os.fsencode(path)) > 4000 or any(len(os.fsencode(part)) > 255 for part in path.parts):
            raise ConfigError(DATA_DIR, "environment variable names a path too long for a file system; "
                              "set it to a shorter folder")
        existing = next(p for p in (path, *path.parents) if p.exists())
    except (OSError, ValueError, UnicodeError):
        raise ConfigError(DATA_DIR, f"environment variable names {shown(raw)}, which is not a usable path; "
                          "set it to a folder") from None
    if not existing.is_dir():
        what = "is" if existing == path else f"lies inside {shown(str(existing))}, which is"
        raise ConfigError(DATA_DIR, f"environment variable names {shown(raw)}, which {what} not a folder; "
                          "set it to a folder")
    return path


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
    return {key: positive_number(var, local.get(key, default), whole=isinstance(default, int), most=most,
                                 least=FLOORS[key]) for key, (var, default, most) in CAPS.items()}


def max_starts() -> int:
    """The cap on ``simulate_many``'s starts (``POLARIZE_MAX_STARTS``)."""
    var, default, most = STARTS
    return positive_number(var, default, whole=True, most=most)


def timeout() -> float:
    """The app's hard time limit per run, in seconds (``POLARIZE_APP_TIMEOUT``)."""
    var, default, most = TIMEOUT
    return positive_number(var, default, most=most)


def in_process() -> bool:
    """Whether the app runs its runs in its own process, without a time limit (``POLARIZE_APP_INPROCESS``)."""
    return flag(IN_PROCESS)


def hosted() -> bool:
    """Whether the app serves the public (``POLARIZE_HOSTED`` on): each visitor's decks stay theirs.

    Raises
    ------
    ConfigError
        Naming ``POLARIZE_HOSTED``, when it is not a switch's value (``flag``).
    """
    return flag(HOSTED)


def shares_disk() -> bool:
    """Whether the app shares the server's disk (decks, results folders) with every visitor.

    Only where an operator asked for it: ``POLARIZE_HOSTED`` set to off, or ``POLARIZE_DATA_DIR``
    set while ``POLARIZE_HOSTED`` is not on. A host that sets neither (Streamlit Community Cloud
    sets nothing) keeps each visitor's decks in their session: being safe does not depend on an
    operator remembering a variable.

    Raises
    ------
    ConfigError
        Naming the variable, when ``POLARIZE_HOSTED`` or ``POLARIZE_DATA_DIR`` cannot be used.
    """
    if os.environ.get(HOSTED, "").strip():
        return not hosted()
    return data_dir_setting() is not None


def scheduler_address(text: str, *, field: str = "scheduler") -> str:
    """A Dask scheduler's address, checked before anything connects: ``tcp://host:port`` or ``tls://...``.

    Parameters
    ----------
    text : str
        As given (a bare ``host:port`` means ``tcp://host:port``).
    field : str
        The setting's name, for the error.

    Raises
    ------
    ConfigError
        Naming ``field``, when the scheme is not tcp or tls, the host is missing or the port is
        not a whole number in 1..65535.
    """
    raw = text.strip()
    scheme, sep, rest = raw.partition("://")
    if not sep:
        scheme, rest = "tcp", raw
    host, colon, port = rest.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")  # [::1]:8786
    shaped = colon and host and "/" not in rest and not any(c.isspace() for c in rest)
    problem = (f"scheme must be {' or '.join(s + '://' for s in _SCHEMES)}" if scheme not in _SCHEMES
               else "must be host:port" if not shaped
               else "port must be a whole number in 1..65535"
               if not (port.isascii() and port.isdigit() and 0 < int(port) < 65536) else None)
    if problem:
        raise ConfigError(field, f"{problem}, got {shown(raw)}")
    return f"{scheme}://{rest}"


def scheduler() -> str | None:
    """The Dask scheduler the app's runs go to (``POLARIZE_SCHEDULER``), or None: the server's own workers.

    Raises
    ------
    ConfigError
        Naming ``POLARIZE_SCHEDULER``, when it is not an address (``scheduler_address``).
    """
    raw = os.environ.get(SCHEDULER, "").strip()
    return scheduler_address(raw, field=SCHEDULER) if raw else None


def _cap(var: str) -> Callable[[], object]:
    key = next(key for key, (name, *_) in CAPS.items() if name == var)
    return lambda: limits()[key]


VARIABLES: dict[str, Callable[[], object]] = {
    **{var: _cap(var) for var, *_ in CAPS.values()},
    STARTS[0]: max_starts,
    TIMEOUT[0]: timeout,
    HOSTED: hosted,
    IN_PROCESS: in_process,
    SCHEDULER: scheduler,
    DATA_DIR: data_dir_setting,
}
"""Every ``POLARIZE_*`` variable polarize reads -> the function that reads it (and raises ``ConfigError``
naming it when its value cannot be used). Nothing reads a ``POLARIZE_*`` variable but these."""


def environment_problem() -> str | None:
    """What is wrong with the first bad ``POLARIZE_*`` variable (``VARIABLES``), in one line, or None.

    For entry points to check before anything else runs (the app, the command line).
    """
    try:
        for read in VARIABLES.values():
            read()
    except ConfigError as exc:
        return str(exc)
    return None


def data_dir() -> Path:
    """Where polarize keeps its data: ``POLARIZE_DATA_DIR`` (``ConfigError`` if it cannot be a folder), else
    the user's data directory."""
    chosen = data_dir_setting()
    if chosen is not None:
        return chosen
    try:
        home = Path.home()
    except (RuntimeError, OSError, KeyError):
        raise ConfigError(DATA_DIR, "environment variable is unset and this user has no home folder; "
                          "set it to a folder") from None
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", home / "AppData" / "Roaming")) / "polarize"
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "polarize"
    return Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share") / "polarize"
