"""Probe mdl's part of the report: its records (task ``mdl_probe``, also probe mdl_mlp's) join the structural-probe
and MDL section (its key), which renders them. Declared by config.py (``report``)."""
from __future__ import annotations

from elmo_bench.report.sections import Section

SECTION = Section(key="structural_mdl", order=2)
