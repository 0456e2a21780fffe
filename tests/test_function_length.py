"""No function in elmo_bench/ over 60 lines (docstring included): one that long does several jobs, and its parts
deserve names (and tests) of their own. The walk follows links, so tasks/ (elmo_bench/tasks) is measured too."""
from __future__ import annotations

import ast
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIMIT = 60


def python_files(root: Path) -> list[Path]:
    """Every ``.py`` file below ``root``, through links to folders (``Path.rglob`` does not follow them)."""
    return sorted(Path(folder) / name for folder, _, names in os.walk(root, followlinks=True)
                  for name in names if name.endswith(".py"))


def long_functions(root: Path, limit: int = LIMIT, base: Path = REPO) -> list[str]:
    """'path:line name (n lines)' for each function or method over ``limit`` lines, longest first."""
    found = []
    for source in python_files(root):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > limit:
                    found.append((lines, f"{source.relative_to(base)}:{node.lineno} {node.name} ({lines} lines)"))
    return [text for _, text in sorted(found, reverse=True)]


def test_no_function_over_the_limit():
    offenders = long_functions(REPO / "elmo_bench")
    assert not offenders, f"functions over {LIMIT} lines; split them:\n" + "\n".join(offenders)


def test_the_measure_counts_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    (tmp_path / "m.py").write_text(f"def short():\n    pass\n\n\ndef long():\n{body}\n")
    assert long_functions(tmp_path, base=tmp_path) == [f"m.py:5 long ({LIMIT + 1} lines)"]


def test_the_walk_goes_through_the_tasks_link(tmp_path):
    """A long function planted in tasks/ is found through elmo_bench/tasks, as the repository links it."""
    (tmp_path / "tasks").mkdir()
    (tmp_path / "elmo_bench").mkdir()
    (tmp_path / "elmo_bench" / "tasks").symlink_to("../tasks")
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    (tmp_path / "tasks" / "planted.py").write_text(f"def planted():\n{body}\n")
    found = long_functions(tmp_path / "elmo_bench", base=tmp_path)
    assert found == [f"elmo_bench/tasks/planted.py:1 planted ({LIMIT + 1} lines)"]
    assert any(p.name == "reader.py" and p.parent.name == "ner" for p in python_files(REPO / "elmo_bench"))
