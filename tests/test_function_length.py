"""No function in elmo_bench/ over 60 lines (docstring included): one that long does several jobs, and its parts
deserve names (and tests) of their own."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIMIT = 60


def long_functions(root: Path, limit: int = LIMIT, base: Path = REPO) -> list[str]:
    """'path:line name (n lines)' for each function or method over ``limit`` lines, longest first."""
    found = []
    for source in sorted(root.rglob("*.py")):
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
