"""How a user-fixable error reaches the terminal: ``error: <one line>`` on stderr and exit code 2, no traceback.

Shared by ``run.py`` and every ``elmo-bench`` command. ``--debug`` (or ``HYDRA_FULL_ERROR=1``, Hydra's own switch)
re-raises instead, so the traceback is there when a developer wants it.
"""
from __future__ import annotations

import argparse
import errno
import os
import re
import signal
import sys
from typing import Any, Callable, NoReturn, TypeVar

from elmo_bench.base.errors import EXIT_USER_ERROR, UserError
from elmo_bench.encoders.settings import check_kind_keys
from elmo_bench.probe.registry import probe_problem
from elmo_bench.tasks.registry import problem as task_problem

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


#: file-system refusals a user fixes by choosing another place (not bugs): one line, exit 2, like a UserError
ENVIRONMENT_ERRNOS = {errno.EACCES: "a read-only directory, or not yours",
                      errno.EPERM: "a read-only directory, or not yours",
                      errno.EROFS: "on a read-only file system",
                      errno.ENAMETOOLONG: "a name too long for the file system",
                      errno.ENOSPC: "no space left on the device",
                      errno.EDQUOT: "over the disk quota"}


def environment_error(exc: BaseException) -> bool:
    """An OSError the user fixes by choosing another directory: permissions, read-only, name too long, disk full."""
    return isinstance(exc, OSError) and exc.errno in ENVIRONMENT_ERRNOS


def _environment_line(exc: OSError) -> str:
    where = exc.filename if exc.filename is not None else "a file"
    return (f"{where}: {exc.strerror or exc} ({ENVIRONMENT_ERRNOS[exc.errno]}): choose another location "
            f"(run.py: paths.results_dir=..., hydra.run.dir=..., paths.cache_dir=...; a command: its output flag)")


def _lexer_hint(exc: BaseException, text: str) -> str:
    """Hydra's lexer refuses an unquoted value with characters outside its grammar (non-ASCII, spaces, ...): the
    quoting that works."""
    override = str(getattr(exc, "override", "") or text.split(":", 1)[-1]).strip()
    if "LexerNoViableAlt" not in text or "=" not in override:
        return ""
    key, value = override.split("=", 1)
    return f" (quote the value: {key}='{value}', in a shell \"{key}='{value}'\")"


#: Hydra's struct refusal of an override the group lacks quotes it: "To append to your config use +KEY=VALUE"
_APPEND = re.compile(r"^To append to your config use \+(encoder\.[^=\s]+)=(.*)$", re.MULTILINE)


def encoder_key_line(exc: BaseException) -> str | None:
    """Hydra's "not in struct" for an ``encoder.<key>`` another encoder kind reads (``encoder.layers=[0,1]`` on the
    biLM, ``encoder.erase.concept=upos`` on hdf5): the line the door gives for it (check_kind_keys), from the
    encoder group Hydra was composing (the error's node) with the override its message quotes; None otherwise."""
    match, cause = _APPEND.search(str(exc)), exc.__cause__
    full_key = str(getattr(cause, "full_key", "") or "")
    if match is None or not (full_key.startswith("encoder.") and full_key.count(".") == 1):
        return None
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf

    group = getattr(cause, "parent_node", None)
    if not OmegaConf.is_dict(group):
        return None
    try:
        spec = OmegaConf.to_container(group, resolve=False)
        value = OverridesParser.create().parse_override(f"{match[1]}={match[2]}").value()
    except user_error_types():  # a value this cannot read: Hydra's own line stays
        return None
    node: Any = spec
    *path, last = match[1].split(".")[1:]
    for part in path:
        node = node.setdefault(part, {}) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        return None
    node[last] = value
    try:
        check_kind_keys(spec)
    except UserError as refused:
        return str(refused)
    return None


def one_line(exc: BaseException) -> str:
    """One line: the message's first line, plus the parts of the rest that matter (OmegaConf's ``full_key``,
    Hydra's list of available options, the cause of a wrapped config error)."""
    if environment_error(exc):
        return _environment_line(exc)  # type: ignore[arg-type]
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    unregistered = task_problem(lines[0]) or probe_problem(lines[0]) or encoder_key_line(exc)  # Hydra's "Could not find 'task/NAME'" or
    #                                                                   'probe/NAME': why NAME is not registered
    if unregistered is not None:
        return unregistered
    text = lines[0] + _lexer_hint(exc, lines[0])
    key = next((line for line in lines[1:] if line.startswith("full_key:")), None)
    if key and key.split(":", 1)[1].strip():
        text += f" ({key})"
    if any(line.startswith("Available options in") for line in lines):
        start = next(i for i, line in enumerate(lines) if line.startswith("Available options in")) + 1
        options = [line for line in lines[start:] if not line.startswith(("Config search path", "provider="))]
        text += f" (available: {', '.join(options)})"
    cause = exc.__cause__
    if cause is not None and isinstance(cause, user_error_types()) and str(cause).strip():
        text += f" ({str(cause).strip().splitlines()[0]})"
    return text


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
    except OSError as exc:
        if debug or not environment_error(exc):
            raise
        report(exc)


def exit_code(stop: SystemExit) -> int:
    """The exit code of a SystemExit, its text (``raise SystemExit("...")``) printed as the one error line: a
    SystemExit with a message is a user error (exit 2), never a silent exit 1."""
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    text = " ".join(str(stop.code).split())
    if text:
        print(f"error: {text}", file=sys.stderr, flush=True)
    return EXIT_USER_ERROR


def report_hydra_errors(debug: bool) -> None:
    """Make Hydra's own error path (config composition, bad overrides) print user errors as one line, exit 2.

    Hydra reports exceptions raised before the task function through ``hydra._internal.utils.run_and_report``
    (multi-line, exit code 1); this wraps it. Other exceptions keep Hydra's reporting.
    """
    import hydra._internal.utils as hydra_utils

    original = hydra_utils.run_and_report
    if getattr(original, "_elmo_bench", False):
        return

    def run_and_report(func: Callable[[], T]) -> T:
        def call() -> T:
            try:
                return func()
            except user_error_types() as exc:
                if debug:
                    raise
                report(exc)
            except OSError as exc:  # Hydra's own mkdir of a run directory: read-only, name too long
                if debug or not environment_error(exc):
                    raise
                report(exc)
        return original(call)

    run_and_report._elmo_bench = True  # type: ignore[attr-defined]
    hydra_utils.run_and_report = run_and_report


def exit_cleanly_on_sigterm() -> None:
    """SIGTERM raises SystemExit, so ``finally``/``except BaseException`` blocks remove temporary files."""
    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    if hasattr(signal, "SIGTERM"):
        try:
            signal.signal(signal.SIGTERM, handler)
        except ValueError:  # not the main thread
            pass


__all__ = ["exit_code", "guarded", "debug_requested", "report", "one_line", "exit_cleanly_on_sigterm", "report_hydra_errors"]
