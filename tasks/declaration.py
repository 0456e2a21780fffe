"""What a task declares about itself, in one act and without torch: ``TASK = TaskDeclaration(...)`` in its
torch-free ``config.py`` (tasks/<name>/config.py). The registry (elmo_bench.tasks.registry) finds every declaration
by scanning this package and the ``elmo_bench.tasks`` entry-point group; nothing else names a task.

- ``name``: the key of ``task=<name>`` and of tasks/<name>/conf/task/<name>.yaml's ``name``;
- ``target``: the Task class as ``"module:Class"``; a leading dot is relative to the declaring package
  (``".task:TinyTask"``), so a task folder works wherever it is installed;
- ``head``: the HeadConfig dataclass (types and ranges of ``task.head``), or None;
- ``data``: the dataclass of the task's own ``data`` keys (what its reader takes beyond the common ones:
  ``format``, ``train_phrases``, ...), each default written there only; conf/config.yaml merges it under every
  dataset of the task (``task_data@data``) and the reader reads it typed (elmo_bench.data.data_options). A field
  whose metadata says ``identity: False`` never changes a number (it refuses or not), so run identity leaves it out;
- ``paper``: the paper's published numbers for the task, by table (``table1``: metric, baseline, elmo, elmo_std,
  previous_sota [system, value], previous_sota_std; ``table2``/``table3``: dev numbers by column; ``table7``:
  data label, perplexity before and after, and the row); the report reads them from the export beside the records
  (``task_declarations.json``, written by ``elmo-bench export-results``);
- ``paper_row``: the task's row in the paper's Table 1 (its order), or None;
- ``tables``: the report tables the task's runs belong to (``table1``, ``table2``, ``table3``, ``table6``, ...);
- ``dataset_sizes``: data name → documented split sizes (``train``/``dev``/``test`` examples and a ``source``
  sentence), for ``elmo-bench plan`` when the data cannot be read here.
- ``package``: filled in by the registry (the Python package that declared the task).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from elmo_bench.base.plain import plain_data

#: the report tables a task's runs go to when it declares none: Table 1 (baseline vs +ELMo, test)
DEFAULT_TABLES = ("table1",)


@dataclass(frozen=True)
class TaskDeclaration:
    """One task, as its package declares it (see the module docstring)."""

    name: str
    target: str
    head: type | None = None
    data: type | None = None
    paper: Mapping[str, Any] = field(default_factory=dict)
    paper_row: int | None = None
    tables: tuple[str, ...] = DEFAULT_TABLES
    dataset_sizes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    package: str = ""
    #: the task's version (issue 54): part of every run's identity as ``plugin.task: <name>@<version>``; bump it when
    #: a change of the task's code may move a number (its finished runs are then redone), else record the new code
    #: hash under the same version in elmo_bench/identity/plugins.txt (tests/test_plugin_manifest.py)
    version: int = 1

    def resolved_target(self) -> str:
        """``target`` with a relative module made absolute against ``package``."""
        module, _, cls = self.target.partition(":")
        if module.startswith("."):
            module = self.package + module
        return f"{module}:{cls}"

    def exported(self) -> dict[str, Any]:
        """What the report needs of the task (JSON): its tables, its paper numbers and its Table 1 row."""
        return {"tables": list(self.tables), "paper": plain_data(self.paper), "paper_row": self.paper_row}

