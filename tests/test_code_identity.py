"""Issue 35 item 5: a task's code enters run identity as its behaviour (AST without docstrings), so reformatting,
comments and docstrings keep a run's identity and a changed line of behaviour does not; and run directories made
with the earlier identity (a hash of the files' bytes) still resume and skip while the code is unchanged."""
from __future__ import annotations

import hashlib
import json
import subprocess
import tarfile
from io import BytesIO
from pathlib import Path

import pytest

from elmo_bench.base.errors import ConfigError
from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.experiment import run_experiment
from elmo_bench.engine.run_identity import LEGACY_CODE, RUN_FILE, code_hash, source_bytes_hash
from elmo_bench.tasks.registry import registered
from tests.conftest import REPO, needs_fixtures
from tests.engine_helpers import TINY, compose_run

ORIGINAL = '''"""A head."""
def scale(x, factor=2):
    """Twice x."""
    return x * factor
'''
REFORMATTED = '''"""A head, documented anew."""


def scale(x,
          factor=2):  # a comment
    """Twice x, said otherwise."""

    return (x *
            factor)
'''
CHANGED = ORIGINAL.replace("factor=2", "factor=3")


def _task(tmp_path: Path, name: str, source: str) -> Path:
    root = tmp_path / name
    root.mkdir()
    (root / "model.py").write_text(source)
    return root


def test_reformatting_keeps_the_code_identity_and_a_changed_line_does_not(tmp_path):
    original = code_hash(_task(tmp_path, "a", ORIGINAL))
    assert code_hash(_task(tmp_path, "b", REFORMATTED)) == original
    assert code_hash(_task(tmp_path, "c", CHANGED)) != original
    assert code_hash(_task(tmp_path, "d", ORIGINAL + "print(1)\n")) != original
    assert code_hash(_task(tmp_path, "e", ORIGINAL.replace('    """Twice x."""\n', ""))) == original  # no docstring
    # a string statement after the first one is no docstring: it stays
    assert code_hash(_task(tmp_path, "f", ORIGINAL.replace("    return", '    "note"\n    return'))) != original


def _bytes_hash(root: Path) -> str:
    """The identity run directories recorded before issue 35 (elmo_bench.engine.run_identity at 4d2e673)."""
    digest = hashlib.sha256()
    for source in sorted(root.rglob("*.py")):
        digest.update(str(source.relative_to(root)).encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:16]


@needs_fixtures
def test_a_run_directory_with_the_earlier_code_identity_still_skips(tmp_path, monkeypatch):
    monkeypatch.setitem(registered(), "tiny", TINY)
    run_dir = tmp_path / "run"
    first = run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1")), run_dir)
    record = json.loads((run_dir / RUN_FILE).read_text())
    assert record["identity"]["code.task"].startswith("ast:")
    record["identity"]["code.task"] = _bytes_hash(REPO / "tests" / "tiny_task")   # as the earlier version wrote it
    (run_dir / RUN_FILE).write_text(json.dumps(record))
    stamp = (run_dir / "results.json").stat().st_mtime_ns
    again = run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1")), run_dir)
    assert again["metrics"] == first["metrics"] and (run_dir / "results.json").stat().st_mtime_ns == stamp
    record["identity"]["code.task"] = "0123456789abcdef"                             # other code than today's
    (run_dir / RUN_FILE).write_text(json.dumps(record))
    with pytest.raises(ConfigError, match=r"code\.task: \"0123456789abcdef\" → \"ast:"):
        run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1")), run_dir)


#: what a run of the tiny task recorded as code.task at git a076744 (before issue 35): the bytes hash of
#: tests/tiny_task as it was then (without the config.py declaration this branch adds)
TINY_AT_A076744 = "9823499ed8b843fb"


@needs_fixtures
def test_a_run_directory_made_before_the_declarations_still_skips(tmp_path, monkeypatch):
    """The run directory as main wrote it (code.task = the bytes hash of that day's tiny task, which lacked
    config.py): the task behaves the same, so it skips (LEGACY_CODE)."""
    monkeypatch.setitem(registered(), "tiny", TINY)
    run_dir = tmp_path / "run"
    first = run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1")), run_dir)
    record = json.loads((run_dir / RUN_FILE).read_text())
    record["identity"]["code.task"] = TINY_AT_A076744
    (run_dir / RUN_FILE).write_text(json.dumps(record))
    stamp = (run_dir / "results.json").stat().st_mtime_ns
    assert run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1")), run_dir)["metrics"] == first["metrics"]
    assert (run_dir / "results.json").stat().st_mtime_ns == stamp


def test_the_legacy_table_holds_the_hashes_main_recorded(tmp_path):
    """Each LEGACY_CODE key is the bytes hash of a task package at git a076744 (checked where the history is)."""
    done = subprocess.run(["git", "-C", str(REPO), "archive", "a076744", "tasks", "tests/tiny_task"],
                          capture_output=True, timeout=60)
    if done.returncode != 0:
        pytest.skip("needs the git history (commit a076744)")
    tarfile.open(fileobj=BytesIO(done.stdout)).extractall(tmp_path)
    old = {source_bytes_hash(d) for d in [*tmp_path.glob("tasks/*/"), tmp_path / "tests" / "tiny_task"]
           if (d / "__init__.py").exists()}
    assert set(LEGACY_CODE) == old and TINY_AT_A076744 in old
    assert LEGACY_CODE[TINY_AT_A076744] == code_hash(REPO / "tests" / "tiny_task")
