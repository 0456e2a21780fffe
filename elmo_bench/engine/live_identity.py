"""A live task run's identity (elmo_bench.identity.rules states what is in one): its resolved config less the
ignored keys, each data path by a fingerprint of its content, the biLM's hash. Plug-in versions are added by the
engine (experiment._run_locked)."""
from __future__ import annotations

import hashlib
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from elmo_bench.base.ranges import default_of
from elmo_bench.data.data_options import identity_free_keys
from elmo_bench.identity.history import ADDED_DEFAULTS
from elmo_bench.identity.rules import HOW_COMPUTED, flatten, without_elmo_only
from elmo_bench.identity.rules import IGNORED as RULES_IGNORED
from elmo_bench.tasks.registry import registered

if TYPE_CHECKING:
    from elmo_bench.engine.run_config import RunConfig

#: the keys a task run's identity leaves out (elmo_bench.identity.rules: where files are, speed, logging, how a
#: number was computed); a task's own data keys of that kind are declared (``identity: False`` on its data options)
IGNORED = RULES_IGNORED + HOW_COMPUTED


_fingerprints: dict[tuple[str, int, int], str] = {}


def task_data_options(flat: Mapping[str, Any]) -> type | None:
    """The data options a flat identity's task declares (``task.name``), or None (no such task, or none declared)."""
    declared = registered().get(str(flat.get("task.name")))
    return None if declared is None else declared.data


def added_defaults(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``ADDED_DEFAULTS`` and the declared defaults of the run's task's own data keys (``data.<key>``)."""
    options = task_data_options(flat)
    own = {} if options is None else {f"data.{spec.name}": default_of(spec) for spec in fields(options)}
    return {**ADDED_DEFAULTS, **own}


def fingerprint(path: Path) -> str:
    """Content fingerprint of a data file (sha256) or directory (names and sizes of the files below it)."""
    stat = path.stat()
    memo = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if memo in _fingerprints:
        return _fingerprints[memo]
    digest = hashlib.sha256()
    if path.is_dir():
        for child in sorted(p for p in path.rglob("*") if p.is_file()):
            digest.update(f"{child.relative_to(path)}\0{child.stat().st_size}\n".encode())
        value = "dir:" + digest.hexdigest()[:16]
    else:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        value = "sha256:" + digest.hexdigest()[:16]
    _fingerprints[memo] = value
    return value


def is_data_fingerprint(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(("sha256:", "dir:"))


def identity(run: RunConfig, bilm_hash: str | None, code_hash: str | None) -> dict[str, Any]:
    """The flat identity of a run (see the module docstring): of its resolved config, ``run.config()``."""
    return flat_identity(flatten(run.config()), bilm_hash, code_hash)


def flat_identity(flat: Mapping[str, Any], bilm_hash: str | None, code_hash: str | None) -> dict[str, Any]:
    """The identity of a flattened resolved config (:func:`flatten`; a live run's, :func:`identity`, or one stored
    by an older results.json, :meth:`StoredRun.of`): the speed-only keys left out, each data path replaced by its
    content fingerprint, the biLM and task-code hashes added."""
    out: dict[str, Any] = {}
    ignored = IGNORED + tuple(f"data.{key}" for key in identity_free_keys(task_data_options(flat)))
    for key, value in flat.items():
        if any(key == p or key.startswith(p + ".") for p in ignored):
            continue
        if key.startswith("data.") and isinstance(value, str) and Path(value).is_absolute() and Path(value).exists():
            value = fingerprint(Path(value))
        out[key] = value
    if bilm_hash is not None:
        out["bilm.hash"] = bilm_hash
    if code_hash is not None:
        out["code.task"] = code_hash
    return without_elmo_only(out)
