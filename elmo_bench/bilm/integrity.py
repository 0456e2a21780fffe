"""``weights.sha256`` beside a biLM: the known hashes of its files, checked every time the biLM is loaded.

Any model directory may hold one (the shipped biLM does; ``scripts/write_bilm_sha256.py DIR`` or
:func:`write_checksums` writes it, and the pretraining export writes it for every model it exports). The format is
``sha256sum``'s: one ``<hex digest>  <file name>`` line per file, so ``sha256sum -c weights.sha256`` checks it too.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.errors import DataError

CHECKSUM_FILE = "weights.sha256"
#: the files of a model directory that are hashed when present
MODEL_FILES = ("options.json", "weights.hdf5", "vocab.txt")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_checksums(path: Path) -> dict[str, str]:
    """{file name: hex digest} from a ``sha256sum``-format file; DataError naming the line when malformed."""
    out: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        digest, _, name = line.partition("  ")
        if len(digest) != 64 or not name or any(c not in "0123456789abcdef" for c in digest.lower()):
            raise DataError(f"{path}: line {number}: expected '<64 hex digits>  <file name>', found {line!r}")
        out[name.strip().lstrip("*")] = digest.lower()
    return out


def verify_checksums(model_dir: Path, files: Iterable[Path]) -> None:
    """Check ``files`` against ``model_dir/weights.sha256`` when it exists (files it does not list are skipped)."""
    record = Path(model_dir) / CHECKSUM_FILE
    if not record.exists():
        return
    known = read_checksums(record)
    for path in files:
        path = Path(path)
        if path.parent.resolve() != record.parent.resolve() or path.name not in known or not path.exists():
            continue
        found = sha256(path)
        if found != known[path.name]:
            raise DataError(f"{path}: sha256 {found[:16]}... differs from {known[path.name][:16]}... recorded in "
                            f"{record}: the file is corrupt or was replaced (if replaced on purpose, rewrite it with "
                            f"scripts/write_bilm_sha256.py {model_dir})")


def write_checksums(model_dir: Path, names: Iterable[str] = MODEL_FILES) -> Path:
    """Write ``model_dir/weights.sha256`` for those of ``names`` that exist there; returns its path."""
    model_dir = Path(model_dir)
    lines = [f"{sha256(model_dir / name)}  {name}" for name in names if (model_dir / name).exists()]
    if not lines:
        raise DataError(f"{model_dir}: none of {list(names)} found; expected a biLM directory")
    record = model_dir / CHECKSUM_FILE
    atomic_write_text(record, "\n".join(lines) + "\n")
    return record
