"""The paper numbers the shipped tasks declare, as the report reads them from an export (task_declarations.json):
for tests that build tables from hand-made runs without exporting them."""
from __future__ import annotations

from pathlib import Path

from elmo_bench.report import declared
from elmo_bench.report.declared import PaperNumbers
from elmo_bench.tasks.registry import registered


def exported() -> dict:
    return {name: task.exported() for name, task in registered().items()}


def numbers() -> PaperNumbers:
    return PaperNumbers(exported())


def write_beside(root: Path) -> Path:
    """``root/task_declarations.json``, as ``elmo-bench export-results`` writes it."""
    root.mkdir(parents=True, exist_ok=True)
    return declared.write(root, exported())
