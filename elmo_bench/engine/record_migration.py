"""Step one of ``elmo-bench migrate RESULTS_DIR...`` (elmo_bench.commands.migrate): give runs recorded before the engine wrote the compact
record files (``predictions_<split>.json.gz``, ``scores_test.json.gz``; elmo_bench.records.run_record) those files.

Once per old results tree, where its data is readable: each run's task (from the registry) reads the run's own
test split and computes, from the run's ``predictions_test.json``, the text-free predictions and the per-example
statistics with its own ``record_predictions`` and ``statistics`` (checked against the recorded test metric, as
the engine does). A dev split is given its compact file when the task keeps predictions as they are (a task that
rewrites them, SQuAD, would need its dev data carved from train: left out, as ``export-results`` always did).
Existing files are never rewritten. Then ``elmo-bench export-results`` copies them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from elmo_bench.engine.experiment import load_task
from elmo_bench.engine.run_outputs import task_statistics
from elmo_bench.records.run_record import (
    RESULTS_FILE,
    SCORES_FILE,
    RunRecord,
    predictions_path,
    read_json,
    write_gz_json,
    write_statistics,
)
from elmo_bench.tasks.api import Example, Task


def _test_examples(task: Task, record: RunRecord) -> list[Example]:
    """The run's test split, read with its own data config (train and dev left unread)."""
    data_cfg = dict(record.config.get("data") or {})
    data_cfg.update({"train": None, "dev": None, "dev_from_train": None})
    data_cfg["hub_splits"] = {**(data_cfg.get("hub_splits") or {}), "train": None, "dev": None}
    splits = task.read(data_cfg)
    if "test" not in splits:
        raise ValueError("the run's data config has no test split")
    return splits["test"]


def migrate_run(run_dir: Path) -> list[str]:
    """Write the missing compact files of one run directory; returns what was written and what was not."""
    notes: list[str] = []
    missing = [s for s in ("dev", "test") if predictions_path(run_dir, s).exists()
               and not predictions_path(run_dir, s, compact=True).exists()]
    wants_scores = predictions_path(run_dir, "test").exists() and not (run_dir / SCORES_FILE).exists()
    if not missing and not wants_scores:                # up to date, or a probe (no predictions)
        return notes
    record = RunRecord.read(run_dir / RESULTS_FILE)
    task = load_task(record.task)
    keeps_predictions = type(task).record_predictions is Task.record_predictions
    examples: list[Example] | None = None
    if wants_scores or ("test" in missing and not keeps_predictions):
        examples = _test_examples(task, record)
    for split in missing:
        predictions = [r["prediction"] for r in read_json(predictions_path(run_dir, split))]
        if keeps_predictions:
            form: list[Any] = list(predictions)
        elif split == "test" and examples is not None and len(examples) == len(predictions):
            form = task.record_predictions(predictions, examples)
        else:
            notes.append(f"{run_dir}: {split} predictions left out (task {task.name} needs that split's data)")
            continue
        write_gz_json(predictions_path(run_dir, split, compact=True),
                      [{"index": i, "prediction": p} for i, p in enumerate(form)])
        notes.append(f"{run_dir}: wrote {predictions_path(run_dir, split, compact=True).name}")
    if wants_scores and examples is not None:
        predictions = [r["prediction"] for r in read_json(predictions_path(run_dir, "test"))]
        if len(predictions) != len(examples):
            notes.append(f"{run_dir}: {len(predictions)} predictions for {len(examples)} test examples: no {SCORES_FILE}")
            return notes
        stats, why = task_statistics(task, predictions, examples, (record.metrics.get("test") or {}).get(
            task.main_metric))
        if stats is None:
            notes.append(f"{run_dir}: no {SCORES_FILE} ({why})")
        else:
            write_statistics(run_dir, stats)
            notes.append(f"{run_dir}: wrote {SCORES_FILE}")
    return notes


def migrate(dirs: Sequence[str | Path]) -> list[str]:
    """Every run directory below ``dirs``; a run whose task or data cannot be read is reported, not fatal."""
    notes: list[str] = []
    for root in dirs:
        for path in sorted(Path(root).rglob(RESULTS_FILE)):
            try:
                notes += migrate_run(path.parent)
            except Exception as exc:                    # data absent, hub offline, unknown task, reader error, ...
                notes.append(f"{path.parent}: not migrated ({exc.__class__.__name__}: {exc})")
    return notes
