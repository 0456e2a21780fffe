"""Probe structural's part of the report: the structural-probe and MDL table (probe mdl's records join it: its
section has this key) and their depth figure. Declared by config.py (``report``)."""
from __future__ import annotations

from elmo_bench.report import figures, structural_mdl
from elmo_bench.report.sections import Rendered, Section, SectionInput

FIGURE = "structural_mdl_depth.png"


def render(given: SectionInput) -> Rendered:
    drawn = figures.structural_mdl_figure(given.runs, given.out / FIGURE)
    return Rendered([structural_mdl.structural_mdl_table(given.runs)], {FIGURE: drawn},
                    {"structural_mdl": (FIGURE, "Structural probes and MDL by relative layer depth", "")})


SECTION = Section(key="structural_mdl", order=2, render=render, summary="Structural-probe and MDL runs")
