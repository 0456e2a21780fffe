"""The report reads run records only (issue 28): no module of elmo_bench/report imports a task package or the engine,
directly or through another module, at the top or inside a function, and building the committed report loads
neither them nor torch. (A task's knowledge reaches the report only through what the engine recorded.)"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "elmo_bench"
#: the engine: experiment assembly, training, the task API and what calls tasks' methods (a future
#: elmo_bench.engine subpackage counts too)
ENGINE = ("elmo_bench.engine", "elmo_bench.engine.experiment", "elmo_bench.engine.loop", "elmo_bench.engine.evaluate",
          "elmo_bench.tasks.api", "elmo_bench.engine.run_outputs", "elmo_bench.engine.record_migration", "elmo_bench.engine.collate",
          "elmo_bench.modules.token_embedders", "elmo_bench.encoders.cache", "elmo_bench.engine.run_identity")
TASKS = ("tasks", "elmo_bench.tasks")


def _imports(path: Path, module: str) -> set[str]:
    """Every module name an import statement anywhere in the file names (``from a import b``: a and a.b)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:                                   # relative: resolve against this module's package
                parent = module.rsplit(".", node.level)[0]
                base = f"{parent}.{base}" if base else parent
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _file(module: str) -> Path | None:
    if not module.startswith("elmo_bench"):
        return None
    path = REPO.joinpath(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _closure(start: list[str]) -> dict[str, str]:
    """module → the elmo_bench module that first imported it, over every import reachable from ``start``."""
    seen: dict[str, str] = {m: "" for m in start}
    todo = list(start)
    while todo:
        module = todo.pop()
        path = _file(module)
        if path is None:
            continue
        for name in _imports(path, module if path.name != "__init__.py" else f"{module}.__init__"):
            if name not in seen:
                seen[name] = module
                todo.append(name)
    return seen


def _report_modules() -> list[str]:
    return [f"elmo_bench.report.{p.stem}" for p in sorted((PACKAGE / "report").glob("*.py")) if p.stem != "__init__"]


def _hits(names: dict[str, str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(f"{n} (imported by {by})" for n, by in names.items()
                  if any(n == p or n.startswith(p + ".") for p in prefixes))


def test_no_report_module_imports_tasks_the_engine_or_torch_even_indirectly():
    reached = _closure(_report_modules())
    assert len(_report_modules()) >= 10 and "elmo_bench.records.run_record" in reached
    assert _hits(reached, TASKS) == []
    assert _hits(reached, ENGINE) == []
    assert _hits(reached, ("torch",)) == []


def test_the_walk_sees_imports_inside_functions(tmp_path):
    """The check above would catch the report's old ``_gold`` (an import of the engine inside a function)."""
    path = tmp_path / "old_bootstrap.py"
    path.write_text("def _gold():\n    from elmo_bench.engine.experiment import load_task\n    from tasks import TASKS\n")
    names = _imports(path, "elmo_bench.report.old_bootstrap")
    assert {"elmo_bench.engine.experiment", "tasks"} <= names
    assert _hits({n: "x" for n in names}, ENGINE) and _hits({n: "x" for n in names}, TASKS)


def test_building_the_committed_report_loads_no_task_engine_or_torch(tmp_path):
    code = ("import sys\n"
            "from elmo_bench.commands.report import report_main\n"
            f"assert report_main(['{REPO / 'docs' / 'results'}', '--out', '{tmp_path}', '--format', 'json',"
            " '--bootstrap-samples', '50']) == 0\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('tasks', 'torch') or m in "
            f"{ENGINE!r})\n"
            "print('LOADED', bad)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "LOADED []" in done.stdout
    assert (tmp_path / "report.json").exists()
