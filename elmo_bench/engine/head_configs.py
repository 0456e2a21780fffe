"""Where a task's head config lives: ``HeadConfig`` in ``config.py`` beside its Task class (tasks/<name>/config.py),
the types and ranges of conf/task/<name>.yaml's ``head:`` keys. Apart from elmo_bench.engine.config_schema so that
the range checks (elmo_bench.engine.config_check) find it without loading omegaconf."""
from __future__ import annotations

import importlib

from elmo_bench.tasks import TASKS


def head_config(task: str) -> type | None:
    """Task ``task``'s HeadConfig dataclass (found through the registry tasks/__init__.py TASKS), or None for a task
    without one (its head's numbers are then checked by kind, elmo_bench.engine.config_check)."""
    if task not in TASKS:
        return None
    package = TASKS[task].split(":", 1)[0].rsplit(".", 1)[0]
    try:
        module = importlib.import_module(f"{package}.config")
    except ModuleNotFoundError as missing:
        if missing.name != f"{package}.config":
            raise
        return None
    return getattr(module, "HeadConfig", None)
