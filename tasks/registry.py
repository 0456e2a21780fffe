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


def _declared(package: str) -> TaskDeclaration | None:
    """The declaration in ``package.config`` (None when the package declares no task)."""
    try:
        module = importlib.import_module(f"{package}.{DECLARING_MODULE}")  # checked: a package this scan found
    except ModuleNotFoundError as missing:
        if missing.name != f"{package}.{DECLARING_MODULE}":
            raise
        return None
    found = getattr(module, DECLARATION, None)
    if found is not None and not isinstance(found, TaskDeclaration):
        raise ConfigError(f"{module.__file__}: {DECLARATION} is a {type(found).__name__}; expected a TaskDeclaration")
    return None if found is None else replace(found, package=package)


def _from_entry_point(point) -> TaskDeclaration:
    found = point.load()
    if not isinstance(found, TaskDeclaration):
        raise ConfigError(f"entry point {point.name} = {point.value} ({ENTRY_POINT_GROUP}): expected a "
                          f"TaskDeclaration, found {type(found).__name__}")
    return replace(found, package=found.package or point.value.partition(":")[0].rpartition(".")[0])


@functools.cache
def registered() -> dict[str, TaskDeclaration]:
    """Task name → its declaration: the packages under tasks/ (sorted), then the entry points. Cached: the one
    registry of the process (tests add a task to this very dict)."""
    found: dict[str, TaskDeclaration] = {}
    for info in sorted(pkgutil.iter_modules(tasks_package.__path__), key=lambda m: m.name):
        declaration = _declared(f"{tasks_package.__name__}.{info.name}") if info.ispkg else None
        if declaration is not None:
            found[declaration.name] = declaration
    for point in entry_points(group=ENTRY_POINT_GROUP):
        declaration = _from_entry_point(point)
        found.setdefault(declaration.name, declaration)
    return found


def declaration(name: str) -> TaskDeclaration:
    """Task ``name``'s declaration; one ConfigError naming the known tasks otherwise."""
    tasks = registered()
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
