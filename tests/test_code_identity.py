"""Issue 35 item 5: a task's code enters run identity as its behaviour (AST without docstrings), so reformatting,
comments and docstrings keep a run's identity and a changed line of behaviour does not; and run directories made
with the earlier identity (a hash of the files' bytes) still resume and skip while the code is unchanged."""
from __future__ import annotations

import ast
import hashlib
import json
import subprocess
import tarfile
from io import BytesIO
from pathlib import Path
from typing import Any, Callable

import pytest

from elmo_bench.base.errors import ConfigError
from elmo_bench.engine.code_identity import code_hash, reused_tasks, task_code_dir
from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.experiment import run_experiment
from elmo_bench.engine.run_records import RUN_FILE
from elmo_bench.identity.history import LEGACY_CODE, SAME_NUMBERS, source_bytes_hash, successors
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
    assert record["identity"].pop("plugin.task") == "tiny@1"                        # issue 54: the version
    record["identity"]["code.task"] = _bytes_hash(REPO / "tests" / "tiny_task")   # as the earlier version wrote it
    (run_dir / RUN_FILE).write_text(json.dumps(record))
    stamp = (run_dir / "results.json").stat().st_mtime_ns
    again = run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1")), run_dir)
    assert again["metrics"] == first["metrics"] and (run_dir / "results.json").stat().st_mtime_ns == stamp
    record["identity"]["code.task"] = "0123456789abcdef"                             # other code than today's
    (run_dir / RUN_FILE).write_text(json.dumps(record))
    with pytest.raises(ConfigError, match=r"code\.task: \"0123456789abcdef\" → \(absent\); plugin\.task: \(absent\) → \"tiny@1\""):
        run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1")), run_dir)


#: what a run of the tiny task recorded as code.task at git a076744 (before issue 35): the bytes hash of
#: tests/tiny_task as it was then (without the config.py declaration this branch adds)
TINY_AT_A076744 = "9823499ed8b843fb"


#: what a run of the tiny task recorded as code.task at git c53501e (that day's code_hash: imports in file order)
TINY_AT_C53501E = "ast:5bf96ebfecba8592"


@needs_fixtures
@pytest.mark.parametrize("recorded", [TINY_AT_A076744, TINY_AT_C53501E])
def test_a_run_directory_of_an_earlier_tiny_task_still_skips(tmp_path, monkeypatch, recorded):
    """The run directory as main wrote it at a076744 (code.task = the bytes hash of that day's tiny task, which
    lacked config.py: LEGACY_CODE) or at c53501e (that day's code_hash: SAME_NUMBERS): the task gives the same
    numbers, so it skips."""
    monkeypatch.setitem(registered(), "tiny", TINY)
    run_dir = tmp_path / "run"
    first = run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1")), run_dir)
    record = json.loads((run_dir / RUN_FILE).read_text())
    del record["identity"]["plugin.task"]                                          # before versions (issue 54)
    record["identity"]["code.task"] = recorded
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
    assert successors(TINY_AT_A076744)[-1] == code_hash(REPO / "tests" / "tiny_task")


IMPORTS = '''import os
from typing import Any
from pathlib import Path, PurePath
import json


def f(x: Any) -> Any:
    import re
    import math
    return os, Path, PurePath, json, re, math, x
'''
#: IMPORTS as an import sorter writes it: blocks reordered, names merged, split and reordered
SORTED = '''import json
import os
from pathlib import Path
from pathlib import PurePath
from typing import Any


def f(x: Any) -> Any:
    import math
    import re
    return os, Path, PurePath, json, re, math, x
'''


def test_the_order_of_imports_is_cosmetic_and_an_added_import_is_not(tmp_path):
    """Issue 35 item 6 sorts imports one way: that must not make a task's finished runs stale."""
    original = code_hash(_task(tmp_path, "a", IMPORTS))
    assert code_hash(_task(tmp_path, "b", SORTED)) == original
    assert code_hash(_task(tmp_path, "c", SORTED.replace("import json\n", "import json\nimport sys\n"))) != original
    assert code_hash(_task(tmp_path, "d", SORTED.replace("from typing import Any", "from typing import Any as A"))) \
        != original
    # an import after other code is a block of its own: moving it across a statement is a change of code
    moved = IMPORTS.replace("import json\n", "") + "import json\n"
    assert code_hash(_task(tmp_path, "e", moved)) != original


def _archive(commit: str, tmp_path: Path, *paths: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["git", "-C", str(REPO), "archive", commit, *paths], capture_output=True, timeout=60)
    if done.returncode != 0:
        pytest.skip(f"needs the git history (commit {commit})")
    tarfile.open(fileobj=BytesIO(done.stdout)).extractall(tmp_path)
    return tmp_path


def _code_hash_at(commit: str, module: str = "elmo_bench/engine/run_identity.py") -> Callable[[Path], str]:
    """code_hash as ``module`` computed it at ``commit`` (its functions, run as they were)."""
    done = subprocess.run(["git", "-C", str(REPO), "show", f"{commit}:{module}"],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        pytest.skip(f"needs the git history (commit {commit})")
    space: dict[str, Any] = {"ast": ast, "hashlib": hashlib, "Path": Path, "CODE_PREFIX": "ast:",
                             "DECLARATION_FILE": "config.py"}
    for node in ast.parse(done.stdout).body:
        if isinstance(node, ast.FunctionDef):
            exec(compile(ast.Module([node], []), commit, "exec"), space)
    return space["code_hash"]


def _packages(root: Path) -> list[Path]:
    return [d for d in [*sorted(root.glob("tasks/*/")), root / "tests" / "tiny_task"] if (d / "__init__.py").exists()]


def test_each_task_at_c53501e_reaches_its_code_at_559e30b(tmp_path):
    """SAME_NUMBERS' issue-35 entries: every task package (and the tiny test task) as git c53501e had it, hashed by
    that day's code_hash, leads to the code_hash of the same package at git 559e30b (the change that listed them:
    typed data options, imports sorted); and nothing else is listed. A later change of a task's code makes its
    runs stale unless it adds an entry of its own."""
    old_hash = _code_hash_at("c53501e")
    before = _packages(_archive("c53501e", tmp_path / "before", "tasks", "tests/tiny_task"))
    after = {p.name: p for p in _packages(_archive("559e30b", tmp_path / "after", "tasks", "tests/tiny_task"))}
    assert sorted(after) == sorted(p.name for p in before)
    for package in before:
        assert successors(old_hash(package))[-1] == code_hash(after[package.name], after[package.name].parent), package.name
    at_559e30b = _code_hash_at("559e30b", "elmo_bench/engine/code_identity.py")
    edge = {at_559e30b(after[name]) for name in after if name.startswith("edge_")}
    assert set(SAME_NUMBERS) == {old_hash(p) for p in before} | {"ast:6b0841eb91ec838d"} | edge


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_task_that_reads_with_another_tasks_reader_is_stale_when_that_reader_changes(tmp_path):
    """An edge probe reads with another task's reader and runs a shared module beside the packages: both are its
    code. The framework's modules (api) are not; a task that reuses nothing hashes as it always did."""
    tasks = tmp_path / "tasks"
    _write(tasks, {"api.py": "class Task: pass\n", "shared.py": "def tidy(x):\n    return x\n",
                   "pos/__init__.py": "", "pos/reader.py": ORIGINAL,
                   "edge/__init__.py": "", "edge/config.py": "from elmo_bench.tasks.ner import nothing\n",
                   "edge/task.py": "from elmo_bench.tasks.api import Task\nfrom elmo_bench.tasks.pos.reader import scale\n"
                                   "import elmo_bench.tasks.shared\n"})
    assert [p.name for p in reused_tasks(tasks / "edge", tasks)] == ["pos", "shared.py"]   # config.py's: not code
    assert reused_tasks(tasks / "pos", tasks) == []
    alone = code_hash(tasks / "pos", tasks)
    before = code_hash(tasks / "edge", tasks)
    (tasks / "pos" / "reader.py").write_text(CHANGED)
    assert code_hash(tasks / "edge", tasks) != before and code_hash(tasks / "pos", tasks) != alone
    (tasks / "pos" / "reader.py").write_text(REFORMATTED)
    assert code_hash(tasks / "edge", tasks) == before                               # cosmetic there too
    (tasks / "shared.py").write_text("def tidy(x):\n    return x + 1\n")
    assert code_hash(tasks / "edge", tasks) != before
    (tasks / "shared.py").write_text("def tidy(x):\n    return x\n")
    (tasks / "api.py").write_text("class Task:\n    name = 'changed'\n")
    assert code_hash(tasks / "edge", tasks) == before
    # without reuse, the hash is the package's own, wherever it lies (what every non-edge task recorded)
    _write(tmp_path / "elsewhere", {"pos/__init__.py": "", "pos/reader.py": ORIGINAL})
    assert code_hash(tmp_path / "elsewhere" / "pos") == alone


def test_a_task_of_another_distribution_reuses_the_installed_tasks(tmp_path):
    """``elmo_bench.tasks.X`` resolves to the installed tasks folder, wherever the importing task lies: a
    third-party task that reads with the shipped pos reader has it in its code identity."""
    _write(tmp_path, {"third/__init__.py": "", "third/task.py": "from elmo_bench.tasks.pos.reader import read_splits\n"})
    assert reused_tasks(tmp_path / "third") == [task_code_dir("elmo_bench.tasks.pos")]
