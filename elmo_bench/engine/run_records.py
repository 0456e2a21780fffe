"""What a run directory records about the run that made it, and how it is read back: ``run.json`` (written when
a run starts: its identity and resolved config, paths relative), or for a results.json of a version before run.json
the identity of the config it stored (a StoredRun either way); and the check that a results.json is this
program's."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.paths import REPO
from elmo_bench.data.textio import read_text
from elmo_bench.engine.live_identity import flat_identity
from elmo_bench.identity.rules import flatten
from elmo_bench.records.portable import absolute, portable_bases
from elmo_bench.records.run_record import RESULTS_FILE, RunRecord

if TYPE_CHECKING:
    from elmo_bench.engine.run_config import RunConfig

RUN_FILE = "run.json"
#: results.json's record of the plug-in code hashes a run was made with (elmo_bench.engine.plugin_code): a
#: diagnostic beside ``plugins`` (the versions), never part of the identity
CODE = "code"


#: run.json's key for the base (repository or run directory) of each relative path in its config
RELATIVE_TO = "relative_to"


def read_record(path: Path) -> dict[str, Any]:
    """A JSON record this program wrote (run.json, results.json), or one ConfigError line naming the file when it
    is truncated or not a JSON object (a copy cut short, a disk filled up, another program's file)."""
    try:
        record = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: truncated or malformed JSON ({exc.msg} at line {exc.lineno}); expected a "
                          f"{path.name} written by this program: restore it or delete the run directory") from None
    if not isinstance(record, dict):
        raise ConfigError(f"{path}: expected a JSON object, found {type(record).__name__}")
    return record


@dataclass(frozen=True)
class StoredRun:
    """What a run directory's record says made the run, read back from disk: run.json's identity and resolved
    config (:func:`read_run`), or, for a results.json of a version before run.json (``before_run_json``), the
    identity of the config it stored, computed as today's (:func:`read_results`; compared by
    elmo_bench.identity.history's rule for such records)."""

    identity: Mapping[str, Any]
    config: Mapping[str, Any] | None = None   # the resolved config as stored (None: the record holds no object)
    git_commit: str | None = None             # the commit a results.json written before run.json records
    before_run_json: bool = False             # read from such a results.json: no identity was stored

    @classmethod
    def of(cls, config: Mapping[str, Any] | None, identity: Mapping[str, Any] | None,
           bilm_hash: str | None = None, git_commit: str | None = None) -> "StoredRun":
        """A stored record's run (the reading of a file: a run.json or results.json this program wrote). With an
        ``identity`` (run.json), that identity as stored; without (an older results.json), its ``config``'s
        identity with the biLM hash it recorded, without a task-code hash (today's data fingerprints)."""
        if identity is not None:
            return cls(dict(identity), dict(config) if isinstance(config, Mapping) else None)
        return cls(flat_identity(flatten(config), bilm_hash, None), config, git_commit, before_run_json=True)


def read_run(path: Path) -> StoredRun:
    """run.json (written by :func:`record_identity`) as a StoredRun; an identity it lacks is empty; its config's
    relative paths made absolute again (``relative_to``: the base each was written against)."""
    record = read_record(path)
    config, bases = record.get("config"), record.get(RELATIVE_TO)
    if isinstance(config, Mapping) and isinstance(bases, Mapping):
        config = absolute(config, bases, path.parent)
    return StoredRun.of(config, record.get("identity") or {})


def read_own_run(path: Path) -> StoredRun:
    """:func:`read_run` of a run.json that must be this program's: one without an identity is another program's
    file (its directory is no run of ours), not "a different configuration" listing every key as absent."""
    made = read_run(path)
    if not made.identity:
        raise ConfigError(f"{path}: holds no run identity, so it is no {RUN_FILE} written by run.py (another "
                          f"program's directory?); refusing to resume or reuse {path.parent}: choose another "
                          f"directory (hydra.run.dir=...) or move it away")
    return made


def read_results(path: Path) -> StoredRun:
    """A results.json of a version before run.json, as a StoredRun (``before_run_json``: compared by
    elmo_bench.identity.history.older_results_compared)."""
    old = read_record(path)
    config = old.get("config", {})
    if isinstance(config, Mapping) and isinstance(config.get("data"), Mapping):  # relative since issue 45
        config = {**config, "data": {k: found_path(v, path.parent) for k, v in config["data"].items()}}
    return StoredRun.of(config, None, (old.get("bilm") or {}).get("hash"), old.get("git_commit"))


def found_path(value: Any, run_dir: Path) -> Any:
    """A results.json's relative data path (elmo_bench.records.portable: to the repository, else to the run
    directory) as the absolute path that exists, so its content is fingerprinted; any other value as it is."""
    if not isinstance(value, str) or not value or Path(value).is_absolute():
        return value
    for base in (REPO, run_dir):
        if (base / value).exists():
            return os.path.normpath(base / value)
    return value


def check_own_results(path: Path) -> None:
    """A results.json this program wrote (every key a run record has), else one ConfigError line: a run never
    skips as "already done" over, or resumes beside, a file another program put there."""
    try:
        RunRecord.from_dict(read_record(path), str(path))
    except ValueError as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{exc}; expected a results.json written by this program: refusing to reuse {path.parent}"
                          f" (choose another directory, hydra.run.dir=..., or move the file away)") from None


def record_identity(run_dir: Path, current: Mapping[str, Any], run: RunConfig) -> None:
    """Write ``run.json`` (atomically) with this identity and the run's resolved config, its paths relative
    (elmo_bench.records.portable) with the base of each under ``relative_to`` (read_run undoes it)."""
    config, bases = portable_bases(run.config(), run_dir)
    atomic_write_text(run_dir / RUN_FILE, json.dumps({"identity": dict(current), "config": config,
                                                      RELATIVE_TO: bases}, indent=1, default=str))


def record_extension(run_dir: Path, current: Mapping[str, Any], run: RunConfig) -> None:
    """Give a run whose stopping rule changed its new identity and drop its old results, in that order: a run
    killed while it continues then resumes from its checkpoint instead of returning the old, shorter results."""
    record_identity(run_dir, current, run)
    (run_dir / RESULTS_FILE).unlink(missing_ok=True)
