"""``elmo-bench export-results SRC DST``: the report's export (elmo_bench.report.export) plus what the tasks
declare about the paper (``DST/task_declarations.json``): the commands layer reads the task registry (and the
probes' report sections, for the records that need only task and metrics) so that the report never has to."""
from __future__ import annotations

from typing import Sequence

from elmo_bench.commands.report import report_plugins
from elmo_bench.report.export import export_main as export_records
from elmo_bench.tasks.registry import registered


def export_main(argv: Sequence[str]) -> int:
    return export_records(argv, {name: task.exported() for name, task in registered().items()},
                          report_plugins().minimal)
