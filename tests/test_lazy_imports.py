"""An import of our own modules inside a function must defer a heavy dependency, and say which: ``# lazy: torch``.

Issue 28 item 2: function-level imports only where they defer a heavy optional dependency. Everything else imports
at module level, where a reader (and tests/test_import_graph.py) sees it. The comment is checked, not trusted: each
dependency it names must be one the imported module pulls in at import time (through our modules' module-level
imports) and one the importing module does not already pull in, else the import defers nothing.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.test_import_graph import modules

#: what is worth deferring: slow to import (torch alone is ~1 s) or optional. tqdm only counts for modules that
#: import nothing else heavy (``elmo-bench --help`` takes ~6 ms; tqdm would add ~20 ms)
HEAVY = {"torch", "transformers", "matplotlib", "datasets", "h5py", "wandb", "nltk", "hydra", "omegaconf", "tqdm"}
LAZY = re.compile(r"#\s*lazy:\s*([\w.]+(?:\s*,\s*[\w.]+)*)")


def _resolve(target: str, known: set[str]) -> str | None:
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def _targets(node: ast.Import | ast.ImportFrom, package: str, known: set[str]) -> list[str]:
    """The modules an import statement loads: project modules by name, third-party ones by top-level package."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, *([base] if base else [])])
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]


def module_level(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports that run when the module is imported (under if/try/with too; not in functions or TYPE_CHECKING)."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.append(node)
            elif isinstance(node, ast.ClassDef):
                visit(node.body)
            elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, (ast.Try, ast.With)):
                for part in ("body", "orelse", "finalbody"):
                    visit(getattr(node, part, []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return found


def function_level(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    inside: dict[int, ast.Import | ast.ImportFrom] = {}
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    inside[id(node)] = node
    return list(inside.values())


class Package:
    """Module-level import edges of the whole package, and which heavy libraries each module loads on import."""

    def __init__(self, sources: dict[str, Path]):
        self.sources = sources
        self.known = set(sources)
        self.trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in sources.items()}
        self.ours: dict[str, set[str]] = {}
        self.theirs: dict[str, set[str]] = {}
        for name, tree in self.trees.items():
            ours, theirs = set(), set()
            for node in module_level(tree):
                for target in _targets(node, self.package(name), self.known):
                    if target.split(".")[0] == "elmo_bench":
                        ours.update(self.with_parents(_resolve(target, self.known)))
                    elif target:
                        theirs.add(target.split(".")[0])
            self.ours[name], self.theirs[name] = ours, theirs

    def package(self, name: str) -> str:
        return name if self.sources[name].name == "__init__.py" else name.rpartition(".")[0]

    def with_parents(self, name: str | None) -> set[str]:
        """Importing a.b.c runs a/__init__ and a/b/__init__ first."""
        if not name:
            return set()
        parts = name.split(".")
        return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & self.known

    def heavy(self, name: str) -> set[str]:
        """The HEAVY libraries that ``import name`` loads."""
        seen: set[str] = set()
        stack = sorted(self.with_parents(name))
        found: set[str] = set()
        while stack:
            module = stack.pop()
            if module not in seen:
                seen.add(module)
                found |= self.theirs[module] & HEAVY
                stack.extend(self.ours[module])
        return found

    def problems(self) -> list[str]:
        """One line for each function-level import of our modules that lacks a true ``# lazy: ...`` comment."""
        out = []
        for name, tree in sorted(self.trees.items()):
            lines = self.sources[name].read_text(encoding="utf-8").splitlines()
            host = self.heavy(name)
            for node in sorted(function_level(tree), key=lambda node: node.lineno):
                targets = [_resolve(t, self.known) for t in _targets(node, self.package(name), self.known)
                           if t.split(".")[0] == "elmo_bench"]
                if not targets:
                    continue
                where = f"{self.sources[name].name} ({name}) line {node.lineno}"
                comment = LAZY.search(" ".join(lines[node.lineno - 1:node.end_lineno]))
                if comment is None:
                    out.append(f"{where}: import it at module level, or say what it defers (# lazy: torch)")
                    continue
                named = {dep.strip() for dep in comment.group(1).split(",")}
                loads = set().union(*(self.heavy(t) for t in targets if t))
                for dep in sorted(named):
                    if dep not in HEAVY:
                        out.append(f"{where}: {dep!r} is not a heavy dependency ({sorted(HEAVY)})")
                    elif dep not in loads:
                        out.append(f"{where}: the imported module does not load {dep} at import time")
                    elif dep in host:
                        out.append(f"{where}: {name} already loads {dep}; nothing is deferred")
        return out


def test_every_function_level_project_import_defers_a_heavy_dependency():
    problems = Package(modules()).problems()
    assert not problems, "function-level imports (tests/test_lazy_imports.py):\n" + "\n".join(problems)


def test_the_walk_sees_the_lazy_imports_and_their_libraries():
    package = Package(modules())
    assert "torch" in package.heavy("elmo_bench.engine.experiment")
    assert "h5py" in package.heavy("elmo_bench.bilm.weights")
    assert not package.heavy("elmo_bench.commands.main") & {"torch", "omegaconf", "h5py"}, "elmo-bench --help slowed"
    lazy = [node for node in function_level(package.trees["elmo_bench.commands.main"])
            if isinstance(node, ast.ImportFrom) and node.module == "elmo_bench.engine.experiment"]
    assert lazy, "commands/main.py imports the engine per subcommand"


def _package(tmp_path: Path, files: dict[str, str]) -> Package:
    sources = {}
    for name, text in files.items():
        path = tmp_path / (name.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        sources[name] = path
    return Package(sources)


def test_the_checker_catches_missing_false_and_idle_comments(tmp_path):
    files = {
        "elmo_bench.light": "def f():\n    from elmo_bench.heavy import x\n",
        "elmo_bench.heavy": "import torch\nx = 1\n",
        "elmo_bench.says": "def f():\n    from elmo_bench.heavy import x  # lazy: torch\n",
        "elmo_bench.lies": "def f():\n    from elmo_bench.light import f  # lazy: torch\n",
        "elmo_bench.idle": "import torch\n\n\ndef f():\n    from elmo_bench.heavy import x  # lazy: torch\n",
        "elmo_bench.light_lib": "def f():\n    from elmo_bench.heavy import x  # lazy: json\n",
    }
    problems = _package(tmp_path, files).problems()
    assert len(problems) == 4, problems
    assert any("(elmo_bench.light)" in p and "import it at module level" in p for p in problems)
    assert any("(elmo_bench.lies)" in p and "does not load torch" in p for p in problems)
    assert any("(elmo_bench.idle)" in p and "already loads torch" in p for p in problems)
    assert any("(elmo_bench.light_lib)" in p and "'json' is not a heavy dependency" in p for p in problems)
    assert not any("(elmo_bench.says)" in p for p in problems)
