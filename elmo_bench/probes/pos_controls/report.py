"""Probe pos_controls' part of the report: the control-task records (``pos_probe`` records with a ``probing``
block; probe pos's section claims the record task, this one takes that subset first): accuracy, control accuracy and
selectivity per layer, the best layers, and the selectivity figure. Declared by config.py (``report``)."""
from __future__ import annotations

from elmo_bench.report import figures, probe_controls
from elmo_bench.report.sections import Rendered, Section, SectionInput

FIGURE = "probe_selectivity.png"


def render(given: SectionInput) -> Rendered:
    drawn = figures.probe_selectivity_figure(given.runs, given.out / FIGURE)
    return Rendered([probe_controls.probe_control_table(given.runs), probe_controls.best_layer_table(given.runs)],
                    {FIGURE: drawn},
                    {"probe_controls": (FIGURE, "Probe accuracy and selectivity by relative layer depth", "")})


SECTION = Section(key="probe_controls", order=1, claims_own=False, take=probe_controls.is_control_run, render=render,
                  summary="Probe-control runs")
