"""A task's code in run identity (``code.task``): what of its source can change a number, so a reformatted file, a
fixed comment, a new docstring or imports sorted another way keep a run's identity, and a changed line of
behaviour does not. Run directories made by an earlier form of the identity (the files' bytes; the AST with imports
in file order; without the task packages it reuses) or by an earlier version of a task's code that gives the same
numbers still resume and skip: elmo_bench.identity.history says which, each rule with why."""
from __future__ import annotations

import ast
import hashlib
import importlib.util
from pathlib import Path

from elmo_bench.base.errors import ConfigError

#: marks a task-code identity computed from the code's behaviour (code_hash), not its bytes (the form older run
#: directories recorded: elmo_bench.identity.history.source_bytes_hash)
CODE_PREFIX = "ast:"
#: a task package's declaration module (elmo_bench.tasks.registry), left out of its code identity
DECLARATION_FILE = "config.py"


def task_code_dir(task_package: str) -> Path:
    """The directory of a task package (``elmo_bench.tasks.ner`` → .../tasks/ner), found without importing it."""
    spec = importlib.util.find_spec(task_package)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"task package {task_package!r} not found")
    return Path(next(iter(spec.submodule_search_locations)))


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return body[1:] or [ast.Pass()]
    return body


def _one_per_name(statement: ast.Import | ast.ImportFrom) -> list[ast.stmt]:
    """``from a import b, c`` → ``from a import b`` and ``from a import c`` (likewise ``import a, b``)."""
    if isinstance(statement, ast.Import):
        return [ast.Import(names=[alias]) for alias in statement.names]
    return [ast.ImportFrom(module=statement.module, names=[alias], level=statement.level)
            for alias in statement.names]


def _imports_in_one_order(body: list[ast.stmt]) -> list[ast.stmt]:
    """Each run of consecutive import statements as one import per name, sorted and without repeats: how a
    linter orders, groups or merges them never shows."""
    out: list[ast.stmt] = []
    run: dict[str, ast.stmt] = {}
    for statement in [*body, None]:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            run.update({ast.dump(one): one for one in _one_per_name(statement)})
            continue
        out.extend(run[key] for key in sorted(run))
        run = {}
        if statement is not None:
            out.append(statement)
    return out


def behaviour(source: str) -> str:
    """What of a module's source can change a number: its AST without docstrings (module, class and function
    ones), without positions, and with each block of imports in one order. Formatting, comments, docstrings and
    the order of imports leave it unchanged; any change of code does not (a changed constant, call or branch, an
    import added or removed gives another dump)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not (isinstance(body, list) and body and isinstance(body[0], ast.stmt)):
                continue
            if field == "body" and isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                                      ast.AsyncFunctionDef)):
                body = _without_docstring(body)
            setattr(node, field, _imports_in_one_order(body))
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


#: the modules beside the task packages that are the framework's surface, not a task's code (like the engine,
#: outside every task's identity): the Task interface, the registry and the declaration type
FRAMEWORK_MODULES = ("api", "registry", "declaration")


def task_files(root: Path) -> list[Path]:
    """A task package's ``.py`` files but its declaration (``DECLARATION_FILE``: types, defaults that the composed
    config carries, ranges and the paper's numbers); a shared module beside the packages is its one file."""
    if root.is_file():
        return [root]
    return [path for path in sorted(root.rglob("*.py")) if path.relative_to(root) != Path(DECLARATION_FILE)]


def installed_tasks_dir() -> Path:
    """Where ``elmo_bench.tasks`` is (the shipped tasks' folder), found without importing it."""
    return task_code_dir("elmo_bench.tasks")


def reused_tasks(root: Path, tasks_dir: Path | None = None) -> list[Path]:
    """The task code in ``tasks_dir`` (default: ``installed_tasks_dir``, where ``elmo_bench.tasks.X`` resolves,
    wherever ``root`` itself lies: a task of another distribution too) that task package ``root`` runs, and what
    that runs in turn: task packages (a task that imports another task's module: ``from
    elmo_bench.tasks.pos.reader import read_splits``) and shared modules (``elmo_bench.tasks.edge_probing``), but
    the framework's (``FRAMEWORK_MODULES``); sorted by name."""
    tasks_dir = installed_tasks_dir() if tasks_dir is None else tasks_dir
    found: set[Path] = set()
    todo = [root]
    while todo:
        for path in task_files(todo.pop()):
            for name in _imported_tasks(path.read_text(encoding="utf-8")) - set(FRAMEWORK_MODULES):
                reused = next((p for p in (tasks_dir / name, tasks_dir / f"{name}.py")
                               if (p / "__init__.py").is_file() or p.suffix == ".py" and p.is_file()), None)
                if reused is not None and reused != root and reused not in found:
                    found.add(reused)
                    todo.append(reused)
    return sorted(found)


def _imported_tasks(source: str) -> set[str]:
    """``X`` of every absolute import of ``elmo_bench.tasks.X[...]`` in a module's source."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            modules = [node.module or ""]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        found |= {parts[2] for parts in (m.split(".") for m in modules) if parts[:2] == ["elmo_bench", "tasks"]
                  and len(parts) > 2}
    return found


def code_hash(root: Path, tasks_dir: Path | None = None) -> str:
    """``CODE_PREFIX`` + sha256 of the behaviour of every file of task package ``root`` (``task_files``), then of
    the task code it reuses from ``tasks_dir`` (``reused_tasks``, each file named ``uses:<package>/<path>``): a
    changed reader makes stale the runs of every task that reads with it. A task that reuses none hashes as before."""
    digest = hashlib.sha256()
    for base, label in [(root, ""), *((other, f"uses:{other.name}/") for other in reused_tasks(root, tasks_dir))]:
        for source in task_files(base):
            text = behaviour(source.read_text(encoding="utf-8"))
            name = source.name if base.is_file() else str(source.relative_to(base))
            digest.update((label + name).encode() + b"\0" + text.encode())
    return CODE_PREFIX + digest.hexdigest()[:16]


def task_code_hash(task_package: str) -> str:
    """The code identity of a task package (``elmo_bench.tasks.ner``): a changed head or metric is a new run, a
    reformatted file or a fixed comment is not."""
    return code_hash(task_code_dir(task_package))
