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

import logging
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from elmo_bench.base.errors import ConfigError
from elmo_bench.engine.code_identity import code_hash
from elmo_bench.engine.live_identity import added_defaults, fingerprint, is_data_fingerprint
from elmo_bench.engine.plugin_code import plugin_versions
from elmo_bench.engine.run_records import (
    RUN_FILE,
    StoredRun,
    check_own_results,
    read_own_run,
    read_results,
    record_identity,
)
from elmo_bench.identity.history import older_results_compared, source_bytes_hash
from elmo_bench.identity.rules import (
    STOPPING_RULE,
    Narrowing,
    compared,
    flatten,
    without_elmo_only,
)
from elmo_bench.records.run_record import RESULTS_FILE

if TYPE_CHECKING:
    from elmo_bench.engine.run_config import DataPart, RunConfig

log = logging.getLogger(__name__)


class IdentityMismatch(ConfigError):
    """A run directory made by another configuration or another version of the task's code: refused there (the
    engine tries a run's directory of the older naming scheme this way, elmo_bench.engine.experiment)."""


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
    compared by elmo_bench.identity.history's rule for it (``older_results_compared``: its biLM hash included;
    data fingerprints are those of today), and refused when git says ``code_dir`` changed since the commit it
    records.
    """
    record = run_dir / RUN_FILE
    computed = (run_dir / RESULTS_FILE).exists() or (run_dir / "checkpoint.pt").exists()
    if (run_dir / RESULTS_FILE).exists():
        check_own_results(run_dir / RESULTS_FILE)
    stored: dict[str, Any] | None = None
    narrowed: Narrowing | None = None
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
        narrowed = older_results_compared if made.before_run_json else None
        if code_changed_since(made.git_commit, code_dir):
            commit = str(made.git_commit)[:10]
            raise IdentityMismatch(f"{run_dir}: made by an earlier version of the task's code (git {commit}; "
                                   f"{code_dir} changed since); refusing to reuse it: choose another directory "
                                   f"(hydra.run.dir=...) or delete it")
    if stored is not None:
        diff = identity_differences(stored, current, code_dir, narrowed)
        if diff and narrowed is None and (run_dir / "checkpoint.pt").exists() and all(
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
                         narrowed: Narrowing | None = None) -> list[str]:
    """``key: old → new`` for each difference between a stored identity and a live one, compared in one form
    (elmo_bench.identity.rules): added defaults, removed and ignored keys, code hashes as versions, the ELMo
    settings as used (elmo_bench.identity.rules.compared, as a probe run's). ``narrowed``: a rule of
    elmo_bench.identity.history for a record that cannot be compared key by key (a results.json written before
    run.json: ``older_results_compared``)."""
    versions = stored_versions(current, code_dir)
    return compared(stored, current, versions, declared=added_defaults(current), narrowed=narrowed)


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
    the older naming scheme (elmo_bench.identity.history.older_run_dir), given when something was computed
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


