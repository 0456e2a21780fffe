"""How a user-fixable error reaches the terminal: ``error: <one line>`` on stderr and exit code 2, no traceback.

Shared by ``run.py`` and every ``elmo-bench`` command. ``--debug`` (or ``HYDRA_FULL_ERROR=1``, Hydra's own switch)
re-raises instead, so the traceback is there when a developer wants it.
"""
from __future__ import annotations

import os
import signal
import sys
from typing import Callable, NoReturn, Sequence, TypeVar

from elmo_bench.errors import UserError

EXIT_USER_ERROR = 2
T = TypeVar("T")


def user_error_types() -> tuple[type[BaseException], ...]:
    """UserError plus the config libraries' errors (bad override values, missing keys, interpolation errors)."""
    kinds: list[type[BaseException]] = [UserError]
    try:
        from omegaconf.errors import OmegaConfBaseException

        kinds.append(OmegaConfBaseException)
    except ImportError:  # pragma: no cover - omegaconf is a dependency
        pass
    try:
        from hydra.errors import HydraException

        kinds.append(HydraException)
    except ImportError:  # pragma: no cover
        pass
    return tuple(kinds)


def one_line(exc: BaseException) -> str:
    """The first line of the message (OmegaConf appends ``full_key: ...`` detail lines; keep the key)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    key = next((line for line in lines[1:] if line.startswith("full_key:")), None)
    return lines[0] + (f" ({key})" if key and key.split(":", 1)[1].strip() else "")


def debug_requested(argv: list[str]) -> bool:
    """True (and ``--debug`` removed from argv) when the user asked for tracebacks."""
    wanted = "--debug" in argv
    while "--debug" in argv:
        argv.remove("--debug")
    return wanted or os.environ.get("HYDRA_FULL_ERROR") == "1"


def report(exc: BaseException) -> NoReturn:
    print(f"error: {one_line(exc)}", file=sys.stderr, flush=True)
    raise SystemExit(EXIT_USER_ERROR)


def guarded(function: Callable[[], T], debug: bool) -> T:
    """``function()``, with user errors turned into one line on stderr and exit code 2 (unless ``debug``)."""
    try:
        return function()
    except user_error_types() as exc:
        if debug:
            raise
        report(exc)


def exit_cleanly_on_sigterm() -> None:
    """SIGTERM raises SystemExit, so ``finally``/``except BaseException`` blocks remove temporary files."""
    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    if hasattr(signal, "SIGTERM"):
        try:
            signal.signal(signal.SIGTERM, handler)
        except ValueError:  # not the main thread
            pass


__all__: Sequence[str] = ("guarded", "debug_requested", "report", "one_line", "exit_cleanly_on_sigterm")
