"""The ELMo settings a task uses where its ``conf/task/<name>.yaml`` ``elmo:`` block leaves a key out.

One table for the engine (``elmo_bench.engine.experiment.elmo_settings``) and the report (which must know a task's own value
to tell an ablation arm from the task's default run); keyed by the ``elmo:`` / ``mix`` key names.
"""
from __future__ import annotations

from typing import Any, Mapping

TASK_ELMO_DEFAULTS: dict[str, Any] = {"placement": "input", "lambda": 0.0, "layer_norm": False, "gamma_init": 1.0,
                                      "dropout": 0.5}
#: a setting's key → the key results.json's ``elmo`` records the value the run used under
RECORDED_KEY: dict[str, str] = {"placement": "placement", "lambda": "l2_coef", "layer_norm": "layer_norm",
                                "gamma_init": "gamma_init", "dropout": "dropout"}


def effective_settings(task_elmo: Mapping[str, Any], mix: Mapping[str, Any]) -> dict[str, Any]:
    """Each ELMo setting as a run uses it: the ``mix`` override where set (not None), else the task's ``elmo:``
    value, else TASK_ELMO_DEFAULTS'. One rule for the engine, run identity and the report's task defaults."""
    out = {}
    for key, default in TASK_ELMO_DEFAULTS.items():
        override = mix.get(key)
        out[key] = override if override is not None else task_elmo.get(key, default)
    return out
