"""The task registry, found rather than written: every package under ``tasks/`` (installed as
``elmo_bench.tasks``) whose ``config`` module holds ``TASK = TaskDeclaration(...)``, and every declaration a
third-party distribution offers in the ``elmo_bench.tasks`` entry-point group (``name = "pkg.config:TASK"``).

Adding a task is a new folder (``__init__.py``, ``config.py`` with ``TASK``, the Task class, and its YAML under
``conf/`` found by Hydra through hydra_plugins.elmo_bench_tasks); no list anywhere names it. The scan imports only
the torch-free ``config`` modules: composing a config or listing the tasks loads no model.
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import pkgutil
import re
import sys
from dataclasses import replace
from importlib.metadata import entry_points
from pathlib import Path

import elmo_bench.tasks as tasks_package
from elmo_bench.base.errors import ConfigError
from elmo_bench.tasks.declaration import TaskDeclaration

#: the entry-point group through which other distributions add tasks
ENTRY_POINT_GROUP = "elmo_bench.tasks"
#: the module of a task package that declares it, and the name of the declaration there
DECLARING_MODULE, DECLARATION = "config", "TASK"
#: Hydra's line for a task config it could not find or load (the task's name in group 1)
MISSING_TASK = re.compile(r"(?:find|load) '(?:task|task_schema|task_data)/(?:of_)?([^'/]+)'")


class Registry(dict):
    """Task name → its declaration, and ``problems``: what the scan could not register (a plug-in that fails to
    import or declares no TaskDeclaration, a folder without config.py, a name two packages declare), by the name a
    user would ask for (the folder's, the entry point's, the clashing task name) → one line saying why."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: dict[str, str] = {}


def _declared(package: str, where: Path) -> TaskDeclaration | None:
    """The declaration in ``package.config`` (None when the package declares no task); ConfigError (one line) for a
    config module that does not import or whose TASK is no TaskDeclaration: user code may fail in any way."""
    if not (where / f"{DECLARING_MODULE}.py").is_file() and not (where / DECLARING_MODULE).is_dir():
        raise ConfigError(f"{where}: a task folder without {DECLARING_MODULE}.py (expected {DECLARING_MODULE}.py "
                          f"with {DECLARATION} = TaskDeclaration(...), elmo_bench.tasks.declaration)")
    try:
        module = importlib.import_module(f"{package}.{DECLARING_MODULE}")  # checked: a package this scan found
    except Exception as broken:  # noqa: BLE001 - a user's plug-in: any failure is reported, never a traceback
        raise ConfigError(f"{where / DECLARING_MODULE}.py: the task plug-in {package} does not import "
                          f"({type(broken).__name__}: {_first_line(broken)})") from broken
    found = getattr(module, DECLARATION, None)
    if found is not None and not isinstance(found, TaskDeclaration):
        raise ConfigError(f"{module.__file__}: {DECLARATION} is a {type(found).__name__}; expected a TaskDeclaration")
    return None if found is None else replace(found, package=package)


def _first_line(exc: BaseException) -> str:
    """An exception's message on one line (a SyntaxError's names the file and line)."""
    if isinstance(exc, SyntaxError):
        return f"{exc.msg} at {exc.filename}:{exc.lineno}"
    return next((line.strip() for line in str(exc).splitlines() if line.strip()), "")


def _from_entry_point(point) -> TaskDeclaration:
    """The declaration an entry point names; ConfigError (one line) for one that does not load or is none."""
    try:
        found = point.load()
    except Exception as broken:  # noqa: BLE001 - a third party's plug-in: any failure is reported, never a traceback
        raise ConfigError(f"entry point {point.name} = {point.value} ({ENTRY_POINT_GROUP}) does not load "
                          f"({type(broken).__name__}: {_first_line(broken)})") from broken
    if not isinstance(found, TaskDeclaration):
        raise ConfigError(f"entry point {point.name} = {point.value} ({ENTRY_POINT_GROUP}): expected a "
                          f"TaskDeclaration, found {type(found).__name__}")
    return replace(found, package=found.package or point.value.partition(":")[0].rpartition(".")[0])


def _origin(declared: TaskDeclaration) -> str:
    """Where a declaration comes from, for a clash's line: its package and folder."""
    spec = importlib.util.find_spec(declared.package)
    where = next(iter(spec.submodule_search_locations or []), None) if spec is not None else None
    return f"{declared.package} ({where})" if where else declared.package


def _add(found: Registry, declared: TaskDeclaration) -> None:
    """Register ``declared``, unless another package declares its name: then neither is registered (which one a
    user meant is not ours to guess; a user folder silently taking a shipped task's place was the failure), and the
    name's problem names both."""
    name, first = declared.name, found.get(declared.name)
    if name in found.problems and first is None:
        return
    if first is None:
        found[name] = declared
    elif first.package != declared.package:
        del found[name]
        found.problems[name] = (f"task name {name!r} is declared by two packages: {_origin(first)} and "
                                f"{_origin(declared)}; rename one (name= in its {DECLARING_MODULE}.py's "
                                f"{DECLARATION})")


def _scan_folders(found: Registry) -> None:
    """The packages under tasks/, sorted: each broken one is a problem under its folder's name."""
    for info in sorted(pkgutil.iter_modules(tasks_package.__path__), key=lambda m: m.name):
        if not info.ispkg:
            continue
        try:
            declared = _declared(f"{tasks_package.__name__}.{info.name}", Path(info.module_finder.path) / info.name)
        except ConfigError as broken:
            found.problems[info.name] = str(broken)
            continue
        if declared is not None:
            _add(found, declared)


def _scan_entry_points(found: Registry) -> None:
    """The ``elmo_bench.tasks`` entry points: each broken one is a problem under the entry point's name."""
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            declared = _from_entry_point(point)
        except ConfigError as broken:
            found.problems[point.name] = str(broken)
            continue
        _add(found, declared)


@functools.cache
def registered() -> Registry:
    """Task name → its declaration: the packages under tasks/ (sorted), then the entry points. Cached: the one
    registry of the process (tests add a task to this very dict). A broken plug-in is skipped with a warning
    naming it (the other tasks keep working); asking for it by name is its one line (:func:`declaration`)."""
    found = Registry()
    _scan_folders(found)
    _scan_entry_points(found)
    for problem in found.problems.values():
        print(f"warning: {problem}; skipped", file=sys.stderr)
    return found


def problem(message: str) -> str | None:
    """The registry's line for the task a Hydra message could not find or load (``Could not find 'task/NAME'``,
    ``... 'task_schema/NAME'``): why that task is not registered, in place of Hydra's line; None otherwise."""
    match = MISSING_TASK.search(message)
    return registered().problems.get(match.group(1)) if match else None


def declaration(name: str) -> TaskDeclaration:
    """Task ``name``'s declaration; one ConfigError naming the known tasks otherwise."""
    tasks = registered()
    if name in tasks.problems:
        raise ConfigError(tasks.problems[name])
    if name not in tasks:
        raise ConfigError(f"config: task.name {name!r} is not a registered task; expected one of {sorted(tasks)}")
    return tasks[name]


def package_dir(declared: TaskDeclaration) -> Path:
    """The folder of the declaring package (where its conf/ and samples/ are), found without importing it."""
    spec = importlib.util.find_spec(declared.package)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"task {declared.name!r}: package {declared.package!r} not found")
    return Path(next(iter(spec.submodule_search_locations)))


def conf_dirs() -> list[Path]:
    """Each registered task's own Hydra config folder (``<task>/conf``), where it ships one."""
    return [d for d in (package_dir(t) / "conf" for t in registered().values()) if d.is_dir()]
