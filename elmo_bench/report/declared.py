"""What the tasks declare about the paper (tasks/<name>/config.py ``TASK``), as the report reads it: from
``task_declarations.json`` beside the records, written by ``elmo-bench export-results``, so the report rebuilds
with no task code. Without the file no task has paper numbers (the paper cells are missing).

``PaperNumbers`` turns the file's ``{task: {"tables", "paper", "paper_row"}}`` into the tables' views: Table 1's
numbers and row order (``paper_row``), Tables 2 and 3's per-column dev numbers and task order, Table 7's row.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from elmo_bench.base.atomic import atomic_write_text

FILENAME = "task_declarations.json"
SCHEMA = "elmo_bench.task_declarations/1"


def text(declared: Mapping[str, Mapping[str, Any]]) -> str:
    """The file's text: every task's exported declaration (TaskDeclaration.exported)."""
    return json.dumps({"schema": SCHEMA, "tasks": declared}, indent=1, sort_keys=True) + "\n"


def write(dst: Path, declared: Mapping[str, Mapping[str, Any]]) -> Path:
    """``DST/task_declarations.json``: :func:`text` written atomically."""
    path = Path(dst) / FILENAME
    atomic_write_text(path, text(declared))
    return path


def read(path: Path) -> dict[str, dict[str, Any]]:
    """Task → its exported declaration; ValueError naming the file when it is not ours."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: unreadable ({exc.__class__.__name__}: {exc})") from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("tasks"), dict):
        raise ValueError(f"{path}: expected {{'schema': {SCHEMA!r}, 'tasks': {{task: declaration}}}}")
    return {str(task): dict(entry) for task, entry in data["tasks"].items()}


def _ordered(rows: Mapping[str, int | None]) -> tuple[str, ...]:
    return tuple(task for task, row in sorted(((t, r) for t, r in rows.items() if r is not None),
                                              key=lambda item: (item[1], item[0])))


@dataclass(frozen=True)
class PaperNumbers:
    """The paper's numbers by table, from the tasks' declarations (empty: no declarations found)."""

    declared: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def _table(self, name: str) -> dict[str, Any]:
        return {task: entry["paper"][name] for task, entry in self.declared.items()
                if name in (entry.get("paper") or {})}

    @property
    def table1(self) -> dict[str, dict[str, Any]]:
        """task → {metric, baseline, elmo[, elmo_std, previous_sota [system, value], previous_sota_std]}."""
        return self._table("table1")

    @property
    def table1_order(self) -> tuple[str, ...]:
        """The paper's Table 1 rows: the tasks declaring ``paper_row``, in its order."""
        return _ordered({task: entry.get("paper_row") for task, entry in self.declared.items()})

    def column_table(self, name: str) -> tuple[dict[str, dict[str, float]], tuple[str, ...]]:
        """Table 2 or 3 (``name``): task → dev numbers by column, and the tasks declaring the table, in Table 1's
        row order."""
        members = {task: entry.get("paper_row") for task, entry in self.declared.items()
                   if name in (entry.get("tables") or ())}
        return self._table(name), _ordered(members)

    @property
    def table7(self) -> dict[str, tuple[str, float, float]]:
        """task → (data label, perplexity before, after)."""
        return {task: (ref["data"], ref["before"], ref["after"]) for task, ref in self._table("table7").items()}

    @property
    def table7_order(self) -> tuple[str, ...]:
        return _ordered({task: ref.get("row") for task, ref in self._table("table7").items()})
