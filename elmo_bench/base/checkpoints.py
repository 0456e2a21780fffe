"""Saving and loading the ``.pt`` files a run reads back (``checkpoint.pt``, ``best.pt``, the pretraining
checkpoint) with their integrity record (elmo_bench.base.integrity: a ``<name>.sha256`` sidecar).

A file that differs from its record, or that torch cannot read (truncated, not a checkpoint), is a DataError: one
line naming the file and what to do, never a traceback and never a silently different model. A file written before
records existed is loaded with a warning that it could not be checked.
"""
from __future__ import annotations

import io
import logging
import pickle
import zipfile
from pathlib import Path
from typing import Any

import torch

from elmo_bench.base.errors import DataError
from elmo_bench.base.integrity import check_recorded, recorded_write

log = logging.getLogger(__name__)


def save(path: str | Path, state: dict[str, Any]) -> None:
    """``torch.save`` atomically, with the sidecar record. Serialised in memory first: torch's own file writer
    reports a full disk as ``RuntimeError: ... unexpected pos``, Python's write as OSError(ENOSPC), which
    atomic_path names with ``path`` (the one no-space line, elmo_bench.commands.guard)."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    with recorded_write(path, suffix=".pt") as tmp:
        Path(tmp).write_bytes(buffer.getbuffer())


def load(path: str | Path, map_location: Any = "cpu", advice: str = "") -> dict[str, Any]:
    """``torch.load(weights_only=True)`` after the integrity check; DataError naming ``path`` (+ ``advice``)."""
    path = Path(path)
    hint = f"; {advice}" if advice else ""
    if not check_recorded(path, hint=hint):
        log.warning("%s has no integrity record (%s, written before records existed): loaded without a check",
                    path, path.name + ".sha256")
    try:
        return torch.load(path, weights_only=True, map_location=map_location)
    except (RuntimeError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile, ValueError, KeyError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0].split(". ")[0].rstrip(".")
        raise DataError(f"{path}: cannot be read as a checkpoint ({first}){hint}") from None
