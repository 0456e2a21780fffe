"""What an evaluated split leaves in the run directory beside results.json, through the task's own methods.

For every evaluated split the predictions in both forms (elmo_bench.records.run_record), and for the test split the
per-example statistics of the main metric (``Task.statistics``), checked against the metric the run reports:
the report bootstraps from these rows alone, so rows that do not add up to the recorded number are not written.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Sequence

from elmo_bench.records.example_statistics import Statistics
from elmo_bench.records.run_record import SCORES_FILE, write_predictions, write_statistics
from elmo_bench.tasks.api import Example, Task

log = logging.getLogger(__name__)
#: |statistics' value - recorded metric| above this (percentage points) means the task's rows are wrong
TOLERANCE = 0.01
STATISTICS_SPLIT = "test"


def task_statistics(task: Task, predictions: Sequence[Any], examples: Sequence[Example],
                    recorded: float | None) -> tuple[Statistics | None, str]:
    """(rows of ``task.statistics``, "") or (None, why not): the task has no statistics, they are malformed
    (a wrong row count or kind), or they disagree with the ``recorded`` main metric. Never raises for the task's
    rows: a finished run keeps its results.json whatever they are."""
    try:
        rows = task.statistics(predictions, examples)
    except NotImplementedError:
        return None, f"task {task.name} has no per-example statistics"
    try:
        stats = Statistics.of(task.statistics_kind, task.main_metric, rows, len(examples))
    except (ValueError, TypeError) as exc:
        return None, f"task {task.name}: malformed statistics ({exc})"
    if recorded is None or abs(stats.value() - recorded) > TOLERANCE:
        return None, (f"task {task.name}: statistics give {task.main_metric} {stats.value():.4f}, the metric "
                      f"{recorded}")
    return stats, ""


def record_split(run_dir: Path, task: Task, split: str, examples: Sequence[Example], predictions: Sequence[Any],
                 metrics: dict[str, float]) -> None:
    """predictions_<split>.json and .json.gz; for the test split also scores_test.json.gz (or a warning)."""
    ids = [e.get("id", i) for i, e in enumerate(examples)]
    write_predictions(run_dir, split, ids, predictions, task.record_predictions(predictions, examples))
    if split != STATISTICS_SPLIT:
        return
    stats, why = task_statistics(task, predictions, examples, metrics.get(task.main_metric))
    if stats is None:
        log.warning("%s: no %s (%s); the report shows no p-value for this run", run_dir, SCORES_FILE, why)
        return
    write_statistics(run_dir, stats)
