"""Issue 54 item 3, "one place for history": every compatibility rule for records written by older versions of this
project lives in elmo_bench/identity/history.py. A scan of the package's source (``elmo_bench/``, ``tasks/``,
``run.py``) with ``ast`` finds, outside that module:

- a table of history: a module-level constant named as one of history's own (``ADDED_DEFAULTS``, ``LEGACY_CODE``,
  ``SAME_NUMBERS``, ...) or spelled like one (:data:`TABLE_WORDS`);
- a function or class named for an old form (``legacy_...``, ``older_...``);
- and anywhere, history included: a ``legacy`` parameter, a ``legacy=`` argument or a ``legacy`` field. A caller
  asks history's rule (a function it passes or calls), never switches a mode on.

``python tests/test_history_in_one_place.py`` prints every place found, one per line.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: the one module of compatibility rules
HISTORY = "elmo_bench/identity/history.py"
#: the source scanned (tests and docs may name old forms: they check the rules)
SCANNED = ("elmo_bench", "tasks", "run.py")
#: words that make a module-level constant a compatibility table (whole words of its name: not _PLACEHOLDER)
TABLE_WORDS = re.compile(r"(^|_)(LEGACY|OLDER|ADDED_DEFAULTS|REMOVED_KEYS|SAME_NUMBERS)(_|$)")
#: a function, class, parameter or field named for an old form
OLD_NAME = re.compile(r"^_?(legacy|older)_")


def _sources(root: Path) -> list[Path]:
    """Every Python file of :data:`SCANNED` below ``root`` (rglob does not follow the elmo_bench/tasks symlink)."""
    found: list[Path] = []
    for name in SCANNED:
        path = root / name
        found += sorted(path.rglob("*.py")) if path.is_dir() else [path] if path.is_file() else []
    return found


def history_names(root: Path = REPO) -> set[str]:
    """The module-level constants (upper-case names) history.py defines: its tables and rule constants."""
    tree = ast.parse((root / HISTORY).read_text(encoding="utf-8"))
    return {name for name, _ in _constants(tree)}


def _constants(tree: ast.Module) -> list[tuple[str, int]]:
    """(name, line) of every upper-case module-level assignment."""
    found = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        found += [(t.id, node.lineno) for t in targets if isinstance(t, ast.Name) and t.id.isupper()]
    return found


def _legacy_switches(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, what) of every ``legacy`` parameter, ``legacy=`` argument and ``legacy`` class field."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, *filter(None, (args.vararg, args.kwarg))]
            found += [(a.lineno, f"parameter {a.arg}") for a in every if "legacy" in a.arg.lower()]
        elif isinstance(node, ast.Call):
            found += [(node.lineno, f"argument {k.arg}=") for k in node.keywords if k.arg and "legacy" in k.arg]
        elif isinstance(node, ast.ClassDef):
            found += [(item.lineno, f"field {item.target.id}") for item in node.body if isinstance(item, ast.AnnAssign)
                      and isinstance(item.target, ast.Name) and "legacy" in item.target.id.lower()]
    return found


def _old_forms(tree: ast.Module, tables: set[str]) -> list[tuple[int, str]]:
    """(line, what) of every history table or old-form name defined in a module other than history."""
    found = [(line, f"table {name}") for name, line in _constants(tree)
             if name in tables or TABLE_WORDS.search(name)]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and OLD_NAME.match(
                node.name.lower()):
            found.append((node.lineno, f"definition {node.name}"))
    return found


def places(root: Path = REPO) -> list[str]:
    """``path:line: what`` for every compatibility rule or mode found outside history.py (and every ``legacy``
    switch anywhere), in file order."""
    tables = history_names(root)
    out = []
    for source in _sources(root):
        rel = source.relative_to(root).as_posix()
        tree = ast.parse(source.read_text(encoding="utf-8"))
        hits = _legacy_switches(tree) + ([] if rel == HISTORY else _old_forms(tree, tables))
        out += [f"{rel}:{line}: {what}" for line, what in sorted(hits)]
    return out


def test_every_compatibility_rule_is_in_history():
    assert places() == []


def test_history_holds_the_tables():
    assert {"ADDED_DEFAULTS", "REMOVED_KEYS", "LEGACY_CODE", "SAME_NUMBERS", "LEGACY_KIND",
            "OLDER_RESULTS_SKIP"} <= history_names()


def test_the_scan_finds_each_kind_of_place(tmp_path):
    """A copy of history and a module with one of each: the scan is no empty loop."""
    (tmp_path / HISTORY).parent.mkdir(parents=True)
    (tmp_path / HISTORY).write_text("LEGACY_CODE = {}\nOLDER_SKIP = ()\n"
                                    "def older_rule(key: str) -> bool:\n    return False\n")
    (tmp_path / "run.py").write_text(
        "SAME_NUMBERS = {}\nOLDER_SKIP = ()\nMY_OLDER_FORMS: dict = {}\nPLACEHOLDER = 1\n"
        "def name(v, legacy=False):\n    return v\n"
        "def legacy_name(v):\n    return name(v, legacy=True)\n"
        "class Stored:\n    legacy: bool = False\n    fine: int = 0\n")
    assert places(tmp_path) == [
        "run.py:1: table SAME_NUMBERS", "run.py:2: table OLDER_SKIP", "run.py:3: table MY_OLDER_FORMS",
        "run.py:5: parameter legacy", "run.py:7: definition legacy_name", "run.py:8: argument legacy=",
        "run.py:10: field legacy"]


if __name__ == "__main__":
    print("\n".join(places()))
    sys.exit(0)
