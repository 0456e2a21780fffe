"""Run identity: a run directory remembers what made it, so a re-run never returns another configuration's numbers.

``run.json`` (written when a run starts) holds the resolved config and its *identity*: every key that can change a
number, flattened to ``dotted.key: value`` — the whole resolved config except keys that only change speed or
logging (``progress``, ``threads``, ``logger``, ``paths``, Hydra's ``choices``), with the biLM files replaced by
their content hash, every data path by a fingerprint of its content (files: sha256; directories: names and sizes),
plus a hash of the task's code (``code.task``, elmo_bench.engine.code_identity: the task package and the task
code it reuses, as ASTs without docstrings and with imports in one order, so reformatting, a fixed comment or sorted
imports keep a run's identity; directories made with an earlier form of the hash still match while the code gives
the same numbers). A run without ELMo (``embedder.elmo: false``) leaves out
the ELMo settings (``task.elmo.*``, ``mix.*``): they cannot change its numbers, so choosing a task's ELMo default
later does not orphan its finished baseline runs. A run directory resumes or skips only when the identity
matches (ELMo settings compared as the values the run used: ``effective_elmo``); otherwise the run is refused with
one line naming the keys that differ. One exception: when only the
stopping rule changed (a raised epoch cap or patience) and replaying the new rule over the run's dev scores trains
every epoch it trained, the run continues from its checkpoint: exactly the run the new rule gives from scratch.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.paths import REPO
from elmo_bench.base.ranges import default_of
from elmo_bench.data.data_options import identity_free_keys
from elmo_bench.data.textio import read_text
from elmo_bench.engine.code_identity import code_hash, plugin_versions, source_bytes_hash
from elmo_bench.identity.history import ADDED_DEFAULTS, REMOVED_KEYS
from elmo_bench.identity.rules import (
    HOW_COMPUTED,
    STOPPING_RULE,
    differences,
    effective_elmo,
    flatten,
    matches,
    with_versions,
    without_elmo_only,
)
from elmo_bench.identity.rules import IGNORED as RULES_IGNORED
from elmo_bench.records.portable import absolute, portable_bases
from elmo_bench.records.run_record import RESULTS_FILE, RunRecord
from elmo_bench.tasks.registry import registered

if TYPE_CHECKING:
    from elmo_bench.engine.run_config import DataPart, RunConfig

log = logging.getLogger(__name__)
RUN_FILE = "run.json"
#: run.json's key for the base (repository or run directory) of each relative path in its config
RELATIVE_TO = "relative_to"
#: the keys a task run's identity leaves out (elmo_bench.identity.rules: where files are, speed, logging, how a
#: number was computed); a task's own data keys of that kind are declared (``identity: False`` on its data options)
IGNORED = RULES_IGNORED + HOW_COMPUTED
_fingerprints: dict[tuple[str, int, int], str] = {}


class IdentityMismatch(ConfigError):
    """A run directory made by another configuration or another version of the task's code: refused there (the
    engine tries a run's directory of the older naming scheme this way, elmo_bench.engine.experiment)."""


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


def is_data_fingerprint(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(("sha256:", "dir:"))


def check_data_identity(run_dir: Path, stored: StoredRun, data: DataPart) -> None:
    """The one data-identity check (resume, skip, ``elmo-bench evaluate``): every data file the run recorded by
    content (``data.*`` keys of run.json's identity) must hold that content now, at the path ``data`` (the run's
    ``data`` group) names; else one ConfigError naming the file. A file that no longer exists is left to the reader
    ("file not found")."""
    for key, value in flatten(data.values, "data.").items():
        old = stored.identity.get(key)
        if not (is_data_fingerprint(old) and isinstance(value, str)):
            continue
        path = Path(value)
        if not (path.is_absolute() and path.exists()):
            continue
        now = fingerprint(path)
        if now != old:
            raise ConfigError(f"{path}: the {key} data changed since {run_dir} was trained on it ({old} then, {now} "
                              f"now); refusing to resume, reuse or evaluate the run on other data: restore the file "
                              f"or train a new run (hydra.run.dir=...)")


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


@dataclass(frozen=True)
class StoredRun:
    """What a run directory's record says made the run, read back from disk: run.json's identity and resolved
    config (:func:`read_run`), or, for a results.json of a version before run.json (``legacy``), the identity of
    the config it stored, computed as today's (:func:`read_results`)."""

    identity: Mapping[str, Any]
    config: Mapping[str, Any] | None = None   # the resolved config as stored (None: the record holds no object)
    git_commit: str | None = None             # the commit an older results.json records (legacy)
    legacy: bool = False

    @classmethod
    def of(cls, config: Mapping[str, Any] | None, identity: Mapping[str, Any] | None,
           bilm_hash: str | None = None, git_commit: str | None = None) -> "StoredRun":
        """A stored record's run (the reading of a file: a run.json or results.json this program wrote). With an
        ``identity`` (run.json), that identity as stored; without (an older results.json), its ``config``'s
        identity with the biLM hash it recorded, without a task-code hash (today's data fingerprints)."""
        if identity is not None:
            return cls(dict(identity), dict(config) if isinstance(config, Mapping) else None)
        return cls(flat_identity(flatten(config), bilm_hash, None), config, git_commit, legacy=True)


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
    """A results.json of a version before run.json, as a StoredRun (``legacy``: compared on the keys it shares
    with today's identity)."""
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




def _show(value: Any) -> str:
    return "(absent)" if value is _ABSENT else json.dumps(value, default=str)


def code_changed_since(commit: str | None, code_dir: Path | None) -> bool | None:
    """Did ``code_dir`` (a task package) change between git ``commit`` and the working tree? None: cannot tell."""
    if not commit or code_dir is None:
        return None
    try:
        done = subprocess.run(["git", "-C", str(code_dir), "diff", "--quiet", commit, "--", "."],
                              capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return {0: False, 1: True}.get(done.returncode)


def check_run_dir(run_dir: Path, current: Mapping[str, Any], run: RunConfig, code_dir: Path | None = None) -> bool:
    """Refuse (ConfigError, one line) when ``run_dir`` was made by a different identity than ``current`` (the
    identity of ``run``); else record this one.

    Returns True when the identities differ only in the stopping rule (``STOPPING_RULE``: a raised epoch cap or
    patience): then nothing is recorded yet; the caller replays the new rule over the run's dev scores
    (``elmo_bench.engine.experiment.apply_new_stopping_rule``) and records the new identity, or refuses.

    Only a directory holding a checkpoint or results is protected (one where a run failed before training simply
    takes the new identity). A results.json of an older version of this project, without ``run.json``, is
    compared on the keys its stored config shares with today's (its biLM hash included; data fingerprints are those
    of today), and refused when git says ``code_dir`` changed since the commit it records.
    """
    record = run_dir / RUN_FILE
    computed = (run_dir / RESULTS_FILE).exists() or (run_dir / "checkpoint.pt").exists()
    if (run_dir / RESULTS_FILE).exists():
        check_own_results(run_dir / RESULTS_FILE)
    stored: dict[str, Any] | None = None
    legacy = False
    if computed and record.exists():
        made = read_own_run(record)
        check_data_identity(run_dir, made, run.data)
        stored = without_elmo_only(made.identity)
    elif computed:
        results_path = run_dir / RESULTS_FILE
        if not results_path.exists():
            raise ConfigError(f"{run_dir}: holds a checkpoint from before run identity was recorded; delete the "
                              f"directory or choose another (hydra.run.dir=...)")
        made = read_results(results_path)
        stored = dict(made.identity)
        legacy = True  # keys added or removed since are not differences
        if code_changed_since(made.git_commit, code_dir):
            commit = str(made.git_commit)[:10]
            raise IdentityMismatch(f"{run_dir}: made by an earlier version of the task's code (git {commit}; "
                                   f"{code_dir} changed since); refusing to reuse it: choose another directory "
                                   f"(hydra.run.dir=...) or delete it")
    if stored is not None:
        diff = identity_differences(stored, current, code_dir, legacy)
        if diff and not legacy and (run_dir / "checkpoint.pt").exists() and all(
                line.split(":", 1)[0] in STOPPING_RULE for line in diff):
            return True
        if diff:
            shown = "; ".join(diff[:6]) + (f"; and {len(diff) - 6} more" if len(diff) > 6 else "")
            raise IdentityMismatch(f"{run_dir}: made by a different configuration ({shown}); refusing to resume or "
                                   f"reuse it: choose another directory (hydra.run.dir=...) or delete it")
    if not (computed and record.exists()):  # a directory where nothing was computed yet takes the new identity
        run_dir.mkdir(parents=True, exist_ok=True)
        record_identity(run_dir, current, run)
    return False


def identity_differences(stored: Mapping[str, Any], current: Mapping[str, Any], code_dir: Path | None,
                         legacy: bool = False) -> list[str]:
    """``key: old → new`` for each difference between a stored identity and a live one, compared in one form
    (elmo_bench.identity.rules): added defaults, removed and ignored keys, code hashes as versions, the ELMo
    settings as used. ``legacy`` (a results.json of a version before run.json): only the keys both hold, the
    task's code left to the git check."""
    stored = {**{k: v for k, v in added_defaults(current).items() if k in current},
              **{k: v for k, v in stored.items() if k not in REMOVED_KEYS and not matches(k, IGNORED)}}
    versions = stored_versions(current, code_dir)
    skip = ("code.task", "plugin.task") if legacy else ()
    return differences(effective_elmo(with_versions(stored, versions)),
                       effective_elmo(with_versions(current, versions)), skip, shared_only=legacy)


def stored_versions(current: Mapping[str, Any], code_dir: Path | None) -> dict[str, Any]:
    """What a code hash stored by a run directory (``code.task``, before versions) stands for: the task's
    committed versions and its live code as the version it declares (``current``'s ``plugin.task``)."""
    name, _, version = str(current.get("plugin.task", "")).partition("@")
    if not version.isdecimal() or code_dir is None:
        return {}
    return plugin_versions("task", name, int(version), [code_hash(code_dir), source_bytes_hash(code_dir)])


def computed_in(run_dir: Path) -> bool:
    """Something was computed in ``run_dir`` (a results.json or a checkpoint): a run there resumes or is skipped."""
    return (run_dir / RESULTS_FILE).exists() or (run_dir / "checkpoint.pt").exists()


def choose_run_dir(run_dir: Path, older: Path | None, current: Mapping[str, Any], run: RunConfig,
                   code_dir: Path | None = None) -> tuple[Path, bool]:
    """(the directory the run goes on in, :func:`check_run_dir`'s answer there). ``older``: the run's directory of
    the older naming scheme (elmo_bench.commands.hydra_setup.older_run_dir), given when something was computed
    there and nothing in ``run_dir``: the run resumes there when its identity matches (one log line), and starts in
    ``run_dir`` when that directory was made by another configuration (another model content at the same path,
    other task code: no duplicate of it); any other refusal stands."""
    if older is not None:
        try:
            extending = check_run_dir(older, current, run, code_dir)
        except IdentityMismatch as exc:
            log.info("%s (the older name of %s) is another run's (%s): this run starts in %s", older, run_dir.name,
                     str(exc).split(" (", 1)[0].split(": ", 1)[-1], run_dir)
        else:
            log.info("%s: resuming the run in its directory of the older naming scheme (named %s today)", older,
                     run_dir.name)
            return older, extending
    return run_dir, check_run_dir(run_dir, current, run, code_dir)


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
