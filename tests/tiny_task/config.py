"""The tiny task's declaration, torch-free: the registry finds it here when the folder sits under tasks/ (the
packaging test copies it there); the engine tests register it by hand (tests/engine_helpers.py)."""
from __future__ import annotations

from elmo_bench.tasks.declaration import TaskDeclaration

#: relative target: the same folder works as tests.tiny_task and as elmo_bench.tasks.tiny. The "paper" numbers are
#: invented (no paper has this task): they show that a declared number reaches the report's paper columns.
TASK = TaskDeclaration("tiny", ".task:TinyTask", paper={"table1": {"metric": "accuracy", "baseline": 50.0,
                                                                   "elmo": 75.0}}, paper_row=6)
