"""Probe erasure's part of the report: the erasure table, in the section it shares with probe conditional (its
key). Declared by config.py (``report``)."""
from __future__ import annotations

from elmo_bench.report import bits_erasure
from elmo_bench.report.sections import Rendered, Section, SectionInput


def render(given: SectionInput) -> Rendered:
    if not any(r.task == given.record_task for r in given.runs):
        return Rendered()
    return Rendered([bits_erasure.erasure_table(given.runs)])


SECTION = Section(key="bits_beyond_baseline", order=3, render=render)
