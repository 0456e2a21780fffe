"""``weights.sha256`` beside a biLM: the known sizes and hashes of its files, checked when the biLM is loaded.

Any model directory may hold one (the shipped biLM does; ``scripts/write_bilm_sha256.py DIR`` or
:func:`write_checksums` writes it, and the pretraining export writes it for every model it exports). It is a record
of elmo_bench.base.integrity (the one integrity mechanism): ``sha256sum``'s format, ``<hex digest>  <file name>`` a
file, plus ``# size <bytes> <file name>`` comments, so ``sha256sum -c weights.sha256`` checks it too. Records
without sizes (the shipped one) are checked by sha256 alone. Each file is hashed once per process.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable

from elmo_bench.base import integrity

CHECKSUM_FILE = "weights.sha256"
#: the files of a model directory that are hashed when present
MODEL_FILES = ("options.json", "weights.hdf5", "vocab.txt")
sha256 = integrity.sha256
log = logging.getLogger(__name__)
_warned: set[str] = set()


def read_checksums(path: Path) -> dict[str, str]:
    """{file name: hex digest} of a record; DataError naming the line when malformed."""
    return {name: prints[-1].sha256 for name, prints in integrity.read_record(path).items()}


def verify_checksums(model_dir: Path, files: Iterable[Path]) -> None:
    """Check ``files`` against ``model_dir/weights.sha256`` when it exists (files it does not list are skipped).
    Without one, nothing says the files are the intended ones (finite garbage weights load and give numbers): a
    WARNING, once per directory and process, says the integrity was not checked."""
    record = Path(model_dir) / CHECKSUM_FILE
    if not record.exists():
        if str(record) not in _warned:
            _warned.add(str(record))
            log.warning("WARNING: %s: no %s beside the biLM: its integrity was NOT checked (corrupt or wrong weights "
                        "would load and give numbers); write one with scripts/write_bilm_sha256.py %s",
                        model_dir, CHECKSUM_FILE, model_dir)
        return
    files = [Path(p) for p in files if Path(p).parent.resolve() == record.parent.resolve() and Path(p).exists()]
    integrity.check_files(record, files, hint=f" (if replaced on purpose, rewrite it with "
                                              f"scripts/write_bilm_sha256.py {model_dir})")


def write_checksums(model_dir: Path, names: Iterable[str] = MODEL_FILES) -> Path:
    """Write ``model_dir/weights.sha256`` for those of ``names`` that exist there; returns its path."""
    return integrity.write_manifest(model_dir, names, CHECKSUM_FILE)
