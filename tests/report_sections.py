"""The probes' report sections for tests: the plug-ins the ``elmo-bench report`` command hands the report
(elmo_bench.commands.report), a collection read with them, and a probe's report module found through its declaration
(so a test follows the probe's folder wherever it lives)."""
from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Iterable

from elmo_bench.commands.report import report_plugins
from elmo_bench.probe.registry import probe_declaration
from elmo_bench.report.collect import Collection, Run, collect, read_run


def plugins():
    """The registered probes' sections and record tasks."""
    return report_plugins()


def collect_with_probes(dirs: Iterable[str | Path]) -> Collection:
    """elmo_bench.report.collect.collect as the report command reads: with the probes' record tasks and claims."""
    found = plugins()
    return collect(dirs, found.record_tasks, found.minimal, found.claimed)


def probe_report(name: str) -> ModuleType:
    """Probe ``name``'s report module: the module of its first declared section (``report.py`` in its folder, or
    another module there: ``pos_controls``, a variant of the ``pos`` folder, declares ``controls_report.py``)."""
    declared = probe_declaration(name)
    return importlib.import_module(declared.resolved(declared.report[0]).partition(":")[0])


def read_with_probes(path: Path) -> Run:
    """elmo_bench.report.collect.read_run as collect_with_probes reads one file (the probes' record tasks marked)."""
    found = plugins()
    run = read_run(path, found.minimal)
    run.probe_task, run.shown_apart = run.task in found.record_tasks, run.task in found.claimed
    return run
