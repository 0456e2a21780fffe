"""A task's code in run identity (``code.task``): what of its source can change a number, so a reformatted file, a
fixed comment, a new docstring or imports sorted another way keep a run's identity, and a changed line of
behaviour does not. Run directories made by an earlier form of the identity (the files' bytes; the AST with imports
in file order; without the task packages it reuses) or by an earlier version of a task's code that gives the same
numbers still resume and skip:
``LEGACY_CODE`` and ``SAME_NUMBERS`` say which, each entry with why."""
from __future__ import annotations

import ast
import hashlib
import importlib.util
from pathlib import Path
from typing import Any, Mapping

from elmo_bench.base.errors import ConfigError

#: marks a task-code identity computed from the code's behaviour (code_hash), not its bytes (source_bytes_hash)
CODE_PREFIX = "ast:"
#: a task package's declaration module (elmo_bench.tasks.registry), left out of its code identity
DECLARATION_FILE = "config.py"
#: source-bytes hashes that run directories recorded before code_hash (each shipped task, and tests/tiny_task, at
#: git a076744, the last commit with the bytes hash) → the code_hash (as computed then, imports in file order) of
#: the task's code that behaves the same: such a run resumes and skips. Issue 35 changed no number of a task: it
#: added the declarations (config.py, outside the identity), split coref's and squad's longest reader functions
#: into helpers, moved SST's phrase rule into SstTask.own_text and made SquadTask's unreachable answer_offsets
#: fallback the run default (the readers' and engine tests hold). Followed on through ``SAME_NUMBERS``.
LEGACY_CODE: dict[str, str] = {
    "54535befcbd2d15c": "ast:b58427b2e7353bb3",  # tasks/coref
    "2c37de0ed42a45f1": "ast:7d823cc813fcbb83",  # tasks/ner
    "59b9a441091f06a1": "ast:813c6ef5c2d42c04",  # tasks/pos
    "61899abab67661af": "ast:7693022e1cf244c2",  # tasks/snli
    "13613dda9678d454": "ast:f43fa74c1e1217e2",  # tasks/squad
    "20d5ec9a154ff1c5": "ast:d373bfff1350ed2c",  # tasks/srl
    "4e305fb6db0afcaf": "ast:6b0841eb91ec838d",  # tasks/sst
    "9823499ed8b843fb": "ast:5bf96ebfecba8592",  # tests/tiny_task
}
#: code_hash values run directories recorded → the code_hash of a later version of the same task that gives the
#: same numbers; such a run resumes and skips (chains are followed: an old run reaches today's code).
#: - sst ``6b0841eb…`` → ``a3187b73…`` (git 49a838e, issue 34): SstTask.example_key counts only roots as text shared
#:   between splits: which runs the overlap check refuses, never a number (as data.max_overlap, left out of identity);
#: - every task at git c53501e → at git 559e30b (issue 35): the identity ignores the order of a block of
#:   imports (so sorting imports is cosmetic; every hash moved, no code changed), and pos, srl, sst and squad read
#:   their own data keys typed (DataOptions in their config.py, the same defaults, now in every composed config)
#:   where they wrote ``data_cfg.get(key, default)``, and coref pops ``use_genres`` with None for absent (falsy, as
#:   False was; every composed head holds the key). tests/test_code_identity.py recomputes each pair from the
#:   two commits.
#: - the six edge tasks at git 559e30b → with the task code they reuse in their hash (code_hash now hashes the
#:   task packages and shared modules beside them that a task imports: a changed pos reader or edge_probing.py makes
#:   edge_pos's runs stale); no code changed. Recomputed likewise.
SAME_NUMBERS: dict[str, str] = {
    "ast:6b0841eb91ec838d": "ast:a3187b7328d5d535",  # tasks/sst, issue 34's example_key
    # git c53501e → 559e30b, issue 35 (above)
    "ast:b58427b2e7353bb3": "ast:321c89a7a23d6ade",  # tasks/coref
    "ast:cfdf9ba9e0e50fef": "ast:8f3d53a119824ec0",  # tasks/edge_chunk
    "ast:ce038dab22dc353f": "ast:28cf2c95e789d8f1",  # tasks/edge_coref
    "ast:6ab59560ac08f64b": "ast:098beef51e081ae9",  # tasks/edge_dep
    "ast:2f494c5a2cdfce35": "ast:182e9b6bfa258a85",  # tasks/edge_ner
    "ast:d8bdfcdf9c7bf237": "ast:a7657fecefa5d364",  # tasks/edge_pos
    "ast:4fed835270e72da5": "ast:9961a79cc8f12629",  # tasks/edge_srl
    "ast:7d823cc813fcbb83": "ast:72110faaf87f9e68",  # tasks/ner
    "ast:813c6ef5c2d42c04": "ast:337868f8475f0870",  # tasks/pos
    "ast:7693022e1cf244c2": "ast:7dd1c7c413ce14d6",  # tasks/snli
    "ast:f43fa74c1e1217e2": "ast:e41630e993e456b9",  # tasks/squad
    "ast:d373bfff1350ed2c": "ast:befa330b98c1e479",  # tasks/srl
    "ast:a3187b7328d5d535": "ast:92b4d251ffa75e09",  # tasks/sst
    "ast:5bf96ebfecba8592": "ast:a257d0ef1081d820",  # tests/tiny_task
    # git 559e30b → the reused task code in the hash (above)
    "ast:8f3d53a119824ec0": "ast:69bc5f123b81b180",  # tasks/edge_chunk
    "ast:28cf2c95e789d8f1": "ast:7eb9a5dc800d7ff1",  # tasks/edge_coref
    "ast:098beef51e081ae9": "ast:15e217a9cf9096e3",  # tasks/edge_dep
    "ast:182e9b6bfa258a85": "ast:b420cde07317a013",  # tasks/edge_ner
    "ast:a7657fecefa5d364": "ast:379797db419435c3",  # tasks/edge_pos
    "ast:9961a79cc8f12629": "ast:a83067e999385081",  # tasks/edge_srl
}


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


def _task_files(root: Path) -> list[Path]:
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
    that runs in turn: task packages (an edge probe reads with another task's reader: ``from
    elmo_bench.tasks.pos.reader import read_conllu``) and shared modules (``elmo_bench.tasks.edge_probing``), but
    the framework's (``FRAMEWORK_MODULES``); sorted by name."""
    tasks_dir = installed_tasks_dir() if tasks_dir is None else tasks_dir
    found: set[Path] = set()
    todo = [root]
    while todo:
        for path in _task_files(todo.pop()):
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
    """``CODE_PREFIX`` + sha256 of the behaviour of every file of task package ``root`` (``_task_files``), then of
    the task code it reuses from ``tasks_dir`` (``reused_tasks``, each file named ``uses:<package>/<path>``): a
    changed reader makes stale the runs of every task that reads with it. A task that reuses none hashes as before."""
    digest = hashlib.sha256()
    for base, label in [(root, ""), *((other, f"uses:{other.name}/") for other in reused_tasks(root, tasks_dir))]:
        for source in _task_files(base):
            text = behaviour(source.read_text(encoding="utf-8"))
            name = source.name if base.is_file() else str(source.relative_to(base))
            digest.update((label + name).encode() + b"\0" + text.encode())
    return CODE_PREFIX + digest.hexdigest()[:16]


def source_bytes_hash(root: Path) -> str:
    """The task-code hash of run directories made before ``code_hash`` (sha256 of the files' bytes): still
    accepted for them while the code is byte for byte what they ran (``legacy_code_matches``)."""
    digest = hashlib.sha256()
    for source in sorted(root.rglob("*.py")):
        digest.update(str(source.relative_to(root)).encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:16]


def task_code_hash(task_package: str) -> str:
    """The code identity of a task package (``elmo_bench.tasks.ner``): a changed head or metric is a new run, a
    reformatted file or a fixed comment is not."""
    return code_hash(task_code_dir(task_package))


def successors(recorded: str) -> list[str]:
    """The code identities that give the numbers of ``recorded`` (itself first), through ``LEGACY_CODE`` and
    ``SAME_NUMBERS``."""
    chain = [recorded]
    while (after := LEGACY_CODE.get(chain[-1]) or SAME_NUMBERS.get(chain[-1])) is not None and after not in chain:
        chain.append(after)
    return chain


def legacy_code_matches(stored: Mapping[str, Any], current: Mapping[str, Any], code_dir: Path | None) -> bool:
    """A stored ``code.task`` other than today's made by code that gives the numbers of the task's code now
    (``successors``), or a bytes hash of code byte for byte the code now: it resumes and skips as before."""
    old, new = stored.get("code.task"), current.get("code.task")
    if not (isinstance(old, str) and isinstance(new, str) and old != new):
        return False
    if new in successors(old):
        return True
    return not old.startswith(CODE_PREFIX) and code_dir is not None and old == source_bytes_hash(code_dir)


#: the probe framework's surface: its interface, registry, declaration type and shared settings (like the engine,
#: outside every probe's identity)
PROBE_FRAMEWORK = ("elmo_bench.probe.api", "elmo_bench.probe.registry", "elmo_bench.probe.declaration",
                   "elmo_bench.probe.settings", *(f"elmo_bench.tasks.{name}" for name in FRAMEWORK_MODULES))
#: the packages whose modules a probe's code identity follows (its own folder, the probe machinery, task readers)
PROBE_CODE = ("elmo_bench.probe.", "elmo_bench.probes.", "elmo_bench.tasks.")


def _module_file(name: str) -> Path | None:
    """The source file of module ``name`` (a package: its ``__init__.py``), found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin) if spec is not None and spec.origin and spec.origin.endswith(".py") else None


def _imported_modules(source: str) -> set[str]:
    """Every absolutely imported module (``from a.b import c``: ``a.b`` and ``a.b.c``) of a module's source."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def probe_code_files(package: str, target: str) -> list[tuple[str, Path]]:
    """The code a probe runs: its folder's modules but its declaration (its settings are in the config), then its
    run function's module (``target``, ``module:function``: another folder's, for a named setting such as
    mdl_mlp) and every module of the probe machinery, the probes and the tasks that they import, transitively (the
    framework surface, PROBE_FRAMEWORK, left out); (label, file), sorted."""
    root = task_code_dir(package)
    own = [(str(p.relative_to(root)), p) for p in _task_files(root)]
    found: dict[str, Path] = {}
    module = target.partition(":")[0]
    start = _module_file(module) if not module.startswith(package + ".") else None
    if start is not None:
        found[module] = start
    todo = [p for _, p in own] + ([start] if start is not None else [])
    while todo:
        for name in _imported_modules(todo.pop().read_text(encoding="utf-8")):
            if not name.startswith(PROBE_CODE) or name in PROBE_FRAMEWORK or name.startswith(package + ".") \
                    or name in found:
                continue
            path = _module_file(name)
            if path is not None and path.name != DECLARATION_FILE:
                found[name] = path
                todo.append(path)
    return own + sorted((f"uses:{name}", path) for name, path in found.items())


def probe_code_hash(package: str, target: str) -> str:
    """A probe's code identity (``code.probe``): the behaviour (ASTs without docstrings, imports in one order) of
    :func:`probe_code_files`: a changed metric or reader makes a finished probe run stale; a comment does not."""
    digest = hashlib.sha256()
    for label, path in probe_code_files(package, target):
        digest.update(label.encode() + b"\0" + behaviour(path.read_text(encoding="utf-8")).encode())
    return CODE_PREFIX + digest.hexdigest()[:16]
