"""The tasks' current ELMo defaults, stored beside exported results so the report knows which runs are the default.

A run records the task's ELMo settings of its day (``config.task.elmo``). When a dev ablation later changes a
task's default (say SQuAD's ELMo dropout 0.2 → 0.5), the finished runs of the old default would still call
themselves the task's default, and the run of the new one (trained as ``mix.dropout=0.5``) an ablation arm, so
Table 1 would keep the setting dev rejected. ``export-results --task-defaults tasks`` therefore writes
``task_defaults.json`` (every task's ELMo settings from its ``tasks/<task>/conf/task/<task>.yaml`` at export time); with
it the report decides "default" by a run's
*effective* settings (results.json's ``elmo``) against these, which is also what makes two runs the same
experiment. Without the file (a raw results tree) the report falls back to each run's own record.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

import yaml

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.records.elmo_settings import RECORDED_KEY, effective_settings

FILENAME = "task_defaults.json"
SCHEMA = "elmo_bench.task_defaults/1"


def config_paths(directory: Path) -> list[Path]:
    """The task configs under ``directory``: a folder of tasks (``tasks``: each ``<task>/conf/task/*.yaml``, where a
    task keeps its YAML) or a folder of task configs itself (``*.yaml``)."""
    return sorted([*Path(directory).glob("*.yaml"), *Path(directory).glob("*/conf/task/*.yaml")])


def from_conf(conf_task_dir: Path) -> dict[str, dict[str, Any]]:
    """Task → its ELMo settings (the task's ``elmo:`` block over TASK_ELMO_DEFAULTS), for every task config."""
    out = {}
    for path in config_paths(conf_task_dir):
        config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        block = config.get("elmo") if isinstance(config.get("elmo"), dict) else {}
        name = str(config.get("name") or path.stem)
        out[name] = effective_settings(block, {})
    return out


def text(defaults: Mapping[str, Mapping[str, Any]]) -> str:
    """The content of task_defaults.json (what ``write`` writes; export-results plans its writes with it)."""
    return json.dumps({"schema": SCHEMA, "tasks": defaults}, indent=1, sort_keys=True) + "\n"


def write(dst: Path, defaults: Mapping[str, Mapping[str, Any]]) -> Path:
    path = Path(dst) / FILENAME
    atomic_write_text(path, text(defaults))
    return path


def read(path: Path) -> dict[str, dict[str, Any]]:
    """Task → settings; ValueError naming the file when it is not ours."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: unreadable ({exc.__class__.__name__}: {exc})") from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("tasks"), dict):
        raise ValueError(f"{path}: expected {{'schema': {SCHEMA!r}, 'tasks': {{task: settings}}}}")
    return {str(task): dict(settings) for task, settings in data["tasks"].items()}


def differs(effective: Mapping[str, Any], current: Mapping[str, Any], key: str) -> bool:
    """Whether a run's effective value of mix key ``key`` differs from the current default (numbers compared as
    floats; a key either side lacks never differs)."""
    value, default = effective.get(RECORDED_KEY[key]), current.get(key)
    if value is None or default is None:
        return False
    if isinstance(value, bool) or isinstance(default, bool) or isinstance(value, str) or isinstance(default, str):
        return value != default
    return abs(float(value) - float(default)) > 1e-12
