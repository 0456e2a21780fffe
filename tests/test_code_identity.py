"""Issue 35 item 5: a task's code enters run identity as its behaviour (AST without docstrings), so reformatting,
comments and docstrings keep a run's identity and a changed line of behaviour does not; and run directories made
with the earlier identity (a hash of the files' bytes) still resume and skip while the code is unchanged."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from elmo_bench.base.errors import ConfigError
from elmo_bench.engine.experiment import run_experiment
from elmo_bench.engine.run_identity import RUN_FILE, code_hash
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
    first = run_experiment(compose_run(tmp_path, "trainer.max_epochs=1"), run_dir)
    record = json.loads((run_dir / RUN_FILE).read_text())
    assert record["identity"]["code.task"].startswith("ast:")
    record["identity"]["code.task"] = _bytes_hash(REPO / "tests" / "tiny_task")   # as the earlier version wrote it
    (run_dir / RUN_FILE).write_text(json.dumps(record))
    stamp = (run_dir / "results.json").stat().st_mtime_ns
    again = run_experiment(compose_run(tmp_path, "trainer.max_epochs=1"), run_dir)
    assert again["metrics"] == first["metrics"] and (run_dir / "results.json").stat().st_mtime_ns == stamp
    record["identity"]["code.task"] = "0123456789abcdef"                             # other code than today's
    (run_dir / RUN_FILE).write_text(json.dumps(record))
    with pytest.raises(ConfigError, match=r"code\.task: \"0123456789abcdef\" → \"ast:"):
        run_experiment(compose_run(tmp_path, "trainer.max_epochs=1"), run_dir)
