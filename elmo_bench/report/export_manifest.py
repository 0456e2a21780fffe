"""What ``export-results`` wrote into DST, so that it never replaces a file it did not write.

``DST/export_manifest.json`` holds ``{"schema": 1, "files": {relative path: sha256}}`` of every file an export wrote
there. Before writing anything, each target that exists is checked: the same bytes as planned: nothing is lost;
recorded here with the sha256 it still has: ours, replaced; otherwise (a file the export did not write, or one edited
since) the export is refused with one line and nothing is written, unless ``--overwrite``.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Mapping

from elmo_bench.base.atomic import atomic_write_bytes, atomic_write_text
from elmo_bench.base.errors import DataError

MANIFEST = "export_manifest.json"
SCHEMA = 1


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_manifest(dst: Path) -> dict[str, str]:
    """Relative path → sha256 of the files earlier exports wrote into ``dst`` ({} when there is no manifest);
    DataError naming the file when it is not one of ours."""
    path = dst / MANIFEST
    if not path.exists():
        return {}
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
        files = found["files"] if isinstance(found, dict) and found.get("schema") == SCHEMA else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError) as exc:
        raise DataError(f"{path}: unreadable export manifest ({exc.__class__.__name__}); expected the record "
                        f"export-results keeps of what it wrote") from exc
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise DataError(f"{path}: not an export manifest of this version (expected {{\"schema\": {SCHEMA}, "
                        f"\"files\": {{path: sha256}}}})")
    return dict(files)


def check_targets(dst: Path, writes: Mapping[Path, bytes], manifest: Mapping[str, str], overwrite: bool) -> None:
    """DataError (one line) for the first target that exists and may not be replaced (module docstring)."""
    for target, data in sorted(writes.items()):
        if not target.exists() and not target.is_symlink():
            continue
        if target.is_symlink() or not target.is_file():
            raise DataError(f"{target}: exists and is not a regular file; export-results writes only files")
        current = sha256(target.read_bytes())
        if current == sha256(data) or overwrite:
            continue
        recorded = manifest.get(target.relative_to(dst).as_posix())
        why = ("was not written by export-results" if recorded is None
               else "changed since export-results wrote it")
        raise DataError(f"{target}: exists and {why} (see {dst / MANIFEST}); not replaced (--overwrite to "
                        f"replace it)")


def write_all(dst: Path, writes: Mapping[Path, bytes], manifest: Mapping[str, str]) -> None:
    """Every planned file, atomically, then the manifest with their sha256 added to the earlier entries."""
    recorded = dict(manifest)
    target = dst / MANIFEST
    try:
        for target, data in sorted(writes.items()):
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(target, data)
            recorded[target.relative_to(dst).as_posix()] = sha256(data)
        target = dst / MANIFEST
        dst.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, json.dumps({"schema": SCHEMA, "files": recorded}, indent=1, sort_keys=True) + "\n")
    except OSError as exc:
        raise DataError(f"{target}: cannot write it ({exc.strerror or exc}: a read-only directory?)") from exc
