"""Where a task's head config lives: the ``head`` of its declaration (``TASK`` in tasks/<name>/config.py, found by
elmo_bench.tasks.registry), the types and ranges of the task YAML's ``head:`` keys. Apart from
elmo_bench.engine.config_schema so that the range checks (elmo_bench.engine.config_check) find it without loading
omegaconf."""
from __future__ import annotations

from elmo_bench.base.errors import ConfigError
from elmo_bench.tasks.registry import registered


def head_config(task: str) -> type | None:
    """Task ``task``'s HeadConfig dataclass, or None for an unknown task or one without one (its head's numbers
    are then checked by kind, elmo_bench.engine.config_check). A name the registry could not register (two
    packages declare it, its plug-in is broken) is its one line: the door never checks a run against a guess."""
    tasks = registered()
    if task in tasks.problems:
        raise ConfigError(tasks.problems[task])
    declared = tasks.get(task)
    return None if declared is None else declared.head
