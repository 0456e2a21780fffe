"""Atomic writes: a reader sees either the old file or the whole new one, never half of it.

Everything that other code or other runs read later (results, caches, checkpoints, exported weights) goes through
here: write to a temporary file in the same directory, fsync, then ``os.replace`` onto the final name.

No leftovers: a temporary name carries the writer's process id (``.<name>.<pid>.<random>.tmp``); an interrupted
write (``kill -9``) leaves it behind, and the next write next to it removes every temporary of a process that is
no longer alive (:func:`remove_stale`). SIGTERM and Ctrl-C remove the temporary at once (the CLIs turn SIGTERM
into SystemExit, see elmo_bench.commands.guard).
"""
from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Iterator

log = logging.getLogger(__name__)
#: a temporary without a process id in its name (older versions) counts as stale after this many seconds
UNOWNED_STALE_SECONDS = 3600


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def temp_prefix(name: str) -> str:
    """The start of this process's temporary names for ``name``: ``.<name>.<pid>.``."""
    return f".{name}.{os.getpid()}."


def remove_stale(directory: str | Path, name: str | None = None) -> list[Path]:
    """Remove temporaries (files or directories) in ``directory`` left by processes that are gone.

    ``name`` limits the sweep to the temporaries of one final name; None sweeps every temporary of the directory.
    Returns what was removed.
    """
    directory = Path(directory)
    if not directory.is_dir():
        return []
    removed = []
    for entry in directory.iterdir():
        if not entry.name.startswith("."):
            continue
        rest = entry.name[1:]
        if name is not None:
            if not rest.startswith(name + "."):
                continue
            owner = rest[len(name) + 1:].split(".", 1)[0]
        else:
            parts = rest.split(".")
            owner = next((p for p in parts[1:] if p.isdigit()), "")
            if not (entry.name.endswith(".tmp") or entry.is_dir()):
                continue
        try:
            stale = not _alive(int(owner)) if owner.isdigit() else (
                (entry.name.endswith(".tmp") or entry.is_dir())
                and time.time() - entry.stat().st_mtime > UNOWNED_STALE_SECONDS)
        except OSError:
            continue
        if stale:
            shutil.rmtree(entry, ignore_errors=True) if entry.is_dir() else entry.unlink(missing_ok=True)
            removed.append(entry)
    if removed:
        log.info("removed %d temporary files of interrupted writes in %s", len(removed), directory)
    return removed


@contextlib.contextmanager
def atomic_path(final: str | Path, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path next to ``final``; on success it is renamed onto ``final``, on error removed."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(final.parent, final.name)
    fd, tmp_name = tempfile.mkstemp(prefix=temp_prefix(final.name), suffix=suffix + ".tmp", dir=final.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(final: str | Path, text: str) -> None:
    with atomic_path(final) as tmp:
        tmp.write_text(text, encoding="utf-8")


def atomic_write_bytes(final: str | Path, data: bytes) -> None:
    with atomic_path(final) as tmp:
        tmp.write_bytes(data)
