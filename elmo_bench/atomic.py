"""Atomic writes: a reader sees either the old file or the whole new one, never half of it.

Everything that other code or other runs read later (results, caches, checkpoints, exported weights) goes through
here: write to a temporary file in the same directory, fsync, then ``os.replace`` onto the final name.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def atomic_path(final: str | Path, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path next to ``final``; on success it is renamed onto ``final``, on error removed."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{final.name}.", suffix=suffix + ".tmp", dir=final.parent)
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
