"""The task registry, found rather than written: every package under ``tasks/`` (installed as
``elmo_bench.tasks``) whose ``config`` module holds ``TASK = TaskDeclaration(...)``, and every declaration a
third-party distribution offers in the ``elmo_bench.tasks`` entry-point group (``name = "pkg.config:TASK"``).

Adding a task is a new folder (``__init__.py``, ``config.py`` with ``TASK``, the Task class, and its YAML under
``conf/`` found by Hydra through hydra_plugins.elmo_bench_tasks); no list anywhere names it. The scan is the one
every plug-in point shares (elmo_bench.base.registry): it imports only the torch-free ``config`` modules, so
composing a config or listing the tasks loads no model, and a broken plug-in is skipped with one warning line.
"""
from __future__ import annotations

import functools
import importlib.util
import re
from importlib.metadata import entry_points
from pathlib import Path

import elmo_bench.tasks as tasks_package
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.paths import CONF_DIR
from elmo_bench.base.registry import PluginPoint, Registry, scan
from elmo_bench.tasks.declaration import TaskDeclaration

#: the entry-point group through which other distributions add tasks
ENTRY_POINT_GROUP = "elmo_bench.tasks"
#: the module of a task package that declares it, and the name of the declaration there
DECLARING_MODULE, DECLARATION = "config", "TASK"
#: Hydra's line for a task config it could not find or load (the task's name in group 1)
MISSING_TASK = re.compile(r"(?:find|load) '(?:task|task_schema|task_data)/(?:of_)?([^'/]+)'")


def plugin_point() -> PluginPoint[TaskDeclaration]:
    """Where tasks live: every package of tasks/ is a task folder (one without config.py is a problem)."""
    return PluginPoint("task", tasks_package, DECLARATION, TaskDeclaration, ENTRY_POINT_GROUP,
                       module=DECLARING_MODULE, strict=True)


@functools.cache
def registered() -> Registry[TaskDeclaration]:
    """Task name → its declaration: the packages under tasks/ (sorted), then the entry points. Cached: the one
    registry of the process (tests add a task to this very dict). A broken plug-in is skipped with a warning
    naming it (the other tasks keep working); asking for it by name is its one line (:func:`declaration`)."""
    return scan(plugin_point(), entry_points(group=ENTRY_POINT_GROUP))


def problem(message: str) -> str | None:
    """The registry's line for the task a Hydra message could not find or load (``Could not find 'task/NAME'``,
    ``... 'task_schema/NAME'``): why that task is not registered, in place of Hydra's line; None otherwise."""
    match = MISSING_TASK.search(message)
    return registered().problems.get(match.group(1)) if match else None


def declaration(name: str) -> TaskDeclaration:
    """Task ``name``'s declaration; one ConfigError naming the known tasks otherwise."""
    tasks = registered()
    return tasks.declared(name, f"config: task.name {name!r} is not a registered task; expected one of "
                                f"{sorted(tasks)}")


def package_dir(declared: TaskDeclaration) -> Path:
    """The folder of the declaring package (where its conf/ and samples/ are), found without importing it."""
    spec = importlib.util.find_spec(declared.package)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"task {declared.name!r}: package {declared.package!r} not found")
    return Path(next(iter(spec.submodule_search_locations)))


def conf_dirs() -> list[Path]:
    """Each registered task's own Hydra config folder (``<task>/conf``), where it ships one."""
    return [d for d in (package_dir(t) / "conf" for t in registered().values()) if d.is_dir()]


def config_files(group: str) -> dict[str, Path]:
    """Every option of the Hydra config group ``group`` as its file, by name: conf/<group>/ first, then each task
    folder's conf/<group>/ (the order of Hydra's search path, hydra_plugins.elmo_bench_tasks: the first wins)."""
    found: dict[str, Path] = {}
    for root in (CONF_DIR, *conf_dirs()):
        for path in sorted((root / group).glob("*.yaml")):
            found.setdefault(path.stem, path)
    return dict(sorted(found.items()))
