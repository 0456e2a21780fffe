"""Integrity records: the size and sha256 of every file this program writes and later reads back, checked on first
use in a process, so changed bytes (a disk error, a partial copy, another tool) never pass for a clean artefact.

One record format, ``sha256sum``'s plus size comments (``sha256sum -c`` skips lines starting with ``#``)::

    # size 1048576 layers.f16
    3f1c...e9  layers.f16

Where records live:

- a directory written as a whole (an activation cache entry, an exported biLM): one record beside the files
  (``integrity.sha256`` in a cache entry, ``weights.sha256`` in a biLM directory), written before the directory is
  published or after its files; :func:`write_manifest`, :func:`check_files`;
- a single file replaced in place (``checkpoint.pt``, ``best.pt``): a sidecar ``<name>.sha256``, see
  :func:`recorded_write`. A replace is two renames (record, file), so in between the record lists both the old and
  the new file; a ``kill -9`` at any moment leaves a file its record accepts.

Cost: a file is hashed once per process (memo keyed by device, inode, size and mtime, so a rewritten file is
hashed again); a size that differs from the record is caught by ``stat`` alone.
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from elmo_bench.base.atomic import atomic_path, atomic_write_text
from elmo_bench.base.errors import DataError

log = logging.getLogger(__name__)
SIDECAR_SUFFIX = ".sha256"
_BLOCK = 1 << 22
#: (device, inode, size, mtime_ns) → sha256 of files hashed (or written) by this process
_HASHED: dict[tuple[int, int, int, int], str] = {}


class IntegrityError(DataError):
    """A file's size or sha256 differs from its integrity record: corrupt, truncated or replaced."""


@dataclass(frozen=True)
class Fingerprint:
    size: int | None  # None: the record predates sizes (sha256sum lines only)
    sha256: str


def _key(path: Path) -> tuple[int, int, int, int]:
    st = path.stat()
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def sha256(path: str | Path) -> str:
    """The file's sha256 hex digest; once per process for an unchanged file."""
    path = Path(path)
    key = _key(path)
    if key not in _HASHED:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(_BLOCK), b""):
                digest.update(block)
        _HASHED[key] = digest.hexdigest()
    return _HASHED[key]


def fingerprint(path: str | Path) -> Fingerprint:
    return Fingerprint(Path(path).stat().st_size, sha256(path))


def format_record(entries: Iterable[tuple[str, Fingerprint]]) -> str:
    lines = []
    for name, print_ in entries:
        if print_.size is not None:
            lines.append(f"# size {print_.size} {name}")
        lines.append(f"{print_.sha256}  {name}")
    return "\n".join(lines) + "\n"


def read_record(path: str | Path) -> dict[str, list[Fingerprint]]:
    """{file name: accepted fingerprints}; IntegrityError naming the line when the record itself is damaged."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise IntegrityError(f"{path}: integrity record cannot be read ({exc})") from None
    sizes: dict[str, int] = {}
    out: dict[str, list[Fingerprint]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if line.startswith("#"):
            parts = line[1:].strip().split(" ", 2)
            if len(parts) == 3 and parts[0] == "size" and parts[1].isdigit():
                sizes[parts[2]] = int(parts[1])
            continue
        digest, _, name = line.partition("  ")
        name = name.strip().lstrip("*")
        if len(digest) != 64 or not name or any(c not in "0123456789abcdef" for c in digest.lower()):
            raise IntegrityError(f"{path}: line {number}: expected '<64 hex digits>  <file name>', found {line!r}")
        out.setdefault(name, []).append(Fingerprint(sizes.pop(name, None), digest.lower()))
    return out


def check_files(record: str | Path, files: Iterable[str | Path], hint: str = "",
                require_listed: bool = False) -> None:
    """Check each of ``files`` (beside ``record``) against it: size first (a stat), then sha256 (once a process).

    IntegrityError naming the first file that differs (``hint`` appended); a file the record does not list is
    skipped, or an error with ``require_listed``.
    """
    record = Path(record)
    known = read_record(record)
    for path in map(Path, files):
        accepted = known.get(path.name)
        if not accepted:
            if require_listed:
                raise IntegrityError(f"{path}: not listed in its integrity record {record}{hint}")
            continue
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise IntegrityError(f"{path}: listed in {record} but cannot be read ({exc.strerror}){hint}") from None
        sizes = [f.size for f in accepted if f.size is not None]
        if sizes and size not in sizes:
            raise IntegrityError(f"{path}: {size} bytes, {sizes[-1]} recorded in {record}: the file is truncated, "
                                 f"corrupt or was replaced{hint}")
        found = sha256(path)
        if found not in {f.sha256 for f in accepted}:
            raise IntegrityError(f"{path}: sha256 {found[:16]}... differs from {accepted[-1].sha256[:16]}... "
                                 f"recorded in {record}: the file is corrupt or was replaced{hint}")


def write_manifest(directory: str | Path, names: Iterable[str], record_name: str) -> Path:
    """Write ``directory/record_name`` for those of ``names`` that exist there; returns its path."""
    directory = Path(directory)
    present = [name for name in names if (directory / name).exists()]
    if not present:
        raise DataError(f"{directory}: none of {list(names)} found to record")
    record = directory / record_name
    atomic_write_text(record, format_record((name, fingerprint(directory / name)) for name in present))
    return record


def sidecar(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + SIDECAR_SUFFIX)


@contextlib.contextmanager
def recorded_write(final: str | Path, suffix: str = "") -> Iterator[Path]:
    """:func:`elmo_bench.base.atomic.atomic_path` that also keeps ``<final>.sha256`` (the sidecar) true.

    Order: the temporary is written; the sidecar is replaced by one listing the new and the current file; the file
    is replaced; the sidecar is replaced by one listing the new file only. Whenever a ``kill -9`` lands, the file
    on disk is one its sidecar lists.
    """
    final = Path(final)
    record = sidecar(final)
    with atomic_path(final, suffix=suffix) as tmp:
        yield tmp
        new = fingerprint(tmp)
        entries = [(final.name, new)]
        if final.exists():
            with contextlib.suppress(OSError):
                entries.append((final.name, Fingerprint(final.stat().st_size, sha256(final))))
        atomic_write_text(record, format_record(entries))
    atomic_write_text(record, format_record([(final.name, new)]))


def check_recorded(path: str | Path, hint: str = "") -> bool:
    """Check a file written by :func:`recorded_write` against its sidecar: True when checked, False when it has
    none (written before records existed); IntegrityError when it differs."""
    path = Path(path)
    record = sidecar(path)
    if not record.exists():
        return False
    check_files(record, [path], hint=hint, require_listed=True)
    return True
