"""The ELMo settings a task uses where its ``conf/task/<name>.yaml`` ``elmo:`` block leaves a key out.

One table for the engine (``elmo_bench.experiment.elmo_settings``) and the report (which must know a task's own value
to tell an ablation arm from the task's default run); keyed by the ``elmo:`` / ``mix`` key names.
"""
from __future__ import annotations

from typing import Any

TASK_ELMO_DEFAULTS: dict[str, Any] = {"placement": "input", "lambda": 0.0, "layer_norm": False, "gamma_init": 1.0,
                                      "dropout": 0.5}
