"""Probe conditional's part of the report: bits beyond a baseline per layer (the section it shares with probe
erasure: its key) and their depth figure. Declared by config.py (``report``)."""
from __future__ import annotations

from elmo_bench.report import bits_erasure, figures
from elmo_bench.report.sections import Rendered, Section, SectionInput

FIGURE = "bits_beyond_baseline_depth.png"


def render(given: SectionInput) -> Rendered:
    if not any(r.task == given.record_task for r in given.runs):
        return Rendered()
    drawn = figures.bits_depth_figure(given.runs, given.out / FIGURE)
    return Rendered([bits_erasure.conditional_table(given.runs)], {FIGURE: drawn},
                    {"bits_beyond_baseline": (FIGURE, "Bits beyond a baseline by relative layer depth", "")})


SECTION = Section(key="bits_beyond_baseline", order=3, render=render,
                  summary="Conditional-probing and erasure runs")
