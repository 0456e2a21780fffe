"""Probe amnesic_lm's part of the report: its records and the task runs with ``encoder.erase`` on (taken out of
the task tables), the LM's change under erasure beside the tasks' (elmo_bench.report.amnesic). Declared by config.py
(``report``)."""
from __future__ import annotations

from elmo_bench.report import amnesic
from elmo_bench.report.collect import Run
from elmo_bench.report.sections import Rendered, Section, SectionInput


def erased(run: Run) -> bool:
    """A task run with an encoder erased: this section's, never a task table's."""
    return run.erase is not None


def render(given: SectionInput) -> Rendered:
    return Rendered([amnesic.amnesic_table(given.runs, given.task_runs)])


SECTION = Section(key="amnesic", order=4, take=erased, render=render, summary="Amnesic-probing runs")
