"""The report's plug-in sections: each probe declares its own (``ProbeDeclaration.report``, a section object in its
folder's ``report.py``), and the report's framework names no probe.

How they arrive: the ``elmo-bench report`` command (elmo_bench.commands.report) gathers them from the probe registry
and hands them in as :class:`ReportPlugins`; the report layer itself never imports the probes (it reads records only,
tests/test_import_graph.py). They are code, not data: an exported file (as task_declarations.json is for the tasks'
paper numbers) could name them but not render them, so the command passes the objects.

A section:

- ``key``: its group; the sections of one key share their runs (structural and MDL records in one table, conditional
  probing and erasure in one section), the first of them (by ``order``) that sets ``summary`` names the group
  (``{probe}`` in it: the declaring probe's name; a key left empty is the probe's name);
- ``place``: ``PAPER`` (among the paper's tables, after Table 3: Tables 5 and 6; it reads the report's runs and its
  claimed tasks stay out of the task tables) or ``OWN`` (after the task tables; its runs are taken out of the pool
  before any table is drawn, and its part is shown only when it has runs);
- ``claims``: the record tasks it shows, beside the declaring probe's own (``claims_own``): a record task is claimed
  by one section only; a record no task declaration and no section claims is listed as unshown, never a task row;
- ``take``: for an ``OWN`` section, runs it takes beyond its claims (task runs with an encoder erased), or, with
  ``claims_own=False``, a subset of another section's record task (the control-task records of ``pos_probe``);
- ``render``: ``(SectionInput) -> Rendered``: its tables, figures, the figure shown after a table;
- ``depth``, ``directions``, ``unshown``: what a ``PAPER`` section adds to the probe-depth figure, to the Directions
  table, and why a run it claims is in no table;
- ``by_step``: ``(Run) -> [StepValue]``, the numbers of one of its records that the "by training step" section
  (elmo_bench.report.by_step) puts against the tokens seen when the record is a checkpoint series' point: each
  metric per layer, with its interval where the record has one (POS accuracy, UUAS, lens bits, ...).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import EncoderNames

PAPER, OWN = "paper", "own"


@dataclass
class SectionInput:
    """What a section renders from."""

    runs: list[Run]            # OWN: its group's runs; PAPER: the report's runs (edge runs apart)
    task_runs: list[Run]       # the runs left for the task tables (an OWN section may compare with them)
    names: EncoderNames
    out: Path                  # where its figures go
    probe: str = ""            # the declaring probe's name
    record_task: str = ""      # the declaring probe's record task


@dataclass
class Rendered:
    """A section's part: tables in order, figures drawn (file → drawn), the figure after a table (its key → file,
    caption, the line shown when not drawn)."""

    tables: list = field(default_factory=list)
    figures: dict[str, bool] = field(default_factory=dict)
    figure_for: dict[str, tuple[str, str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class DepthPanel:
    """One panel of the probe-depth figure: a probe's score by layer on one data set."""

    probe: str
    data: str
    runs: list[Run]
    values: Callable[[Run], dict[int, float]]
    metric: str = "accuracy"                              # the y axis
    floor: Callable[[Run], float | None] | None = None   # a baseline each run records (dotted line)


@dataclass(frozen=True)
class StepValue:
    """One number of a probe record for the "by training step" section: a metric (its title, e.g. "POS accuracy
    (test)"), a layer, the value and its interval (None: the record has none)."""

    metric: str
    layer: int
    value: float
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Section:
    """One probe's report section (see the module docstring)."""

    key: str = ""
    place: str = OWN
    order: int = 0
    claims: tuple[str, ...] = ()
    claims_own: bool = True
    take: Callable[[Run], bool] | None = None
    render: Callable[[SectionInput], Rendered] | None = None
    summary: str = ""
    depth: Callable[[Sequence[Run]], tuple[list[Run], list[DepthPanel]]] | None = None
    directions: Callable[[Sequence[Run]], list[dict[str, Any]]] | None = None
    direction_order: int = 0
    unshown: Callable[[Run], str | None] | None = None
    minimal_records: bool = False      # its records may hold only task and metrics (the WSD probe's)
    by_step: Callable[[Run], list[StepValue]] | None = None
    probe: str = ""                    # filled in: the declaring probe
    record_task: str = ""              # filled in: its record task

    def declared_by(self, probe: str, record_task: str) -> Section:
        """This section as probe ``probe`` declares it: its key defaults to the probe's name, its claims hold the
        probe's record task (unless ``claims_own`` is false)."""
        claims = ((record_task,) if self.claims_own else ()) + tuple(self.claims)
        return replace(self, key=self.key or probe, claims=claims, probe=probe, record_task=record_task,
                       summary=self.summary.format(probe=probe))

    def takes(self, run: Run) -> bool:
        return run.task in self.claims or (self.take is not None and self.take(run))


@dataclass(frozen=True)
class ReportPlugins:
    """What the report knows of the probes, gathered by the command from their declarations."""

    sections: tuple[Section, ...] = ()
    #: every probe's record task: its records name an encoder without a +ELMo mix
    record_tasks: frozenset[str] = frozenset()

    @property
    def claimed(self) -> frozenset[str]:
        """Every record task a section claims."""
        return frozenset(task for s in self.sections for task in s.claims)

    @property
    def minimal(self) -> frozenset[str]:
        """Record tasks whose records need only ``task`` and ``metrics``."""
        return frozenset(task for s in self.sections if s.minimal_records for task in s.claims)

    def placed(self, place: str) -> list[Section]:
        """The sections of ``place`` in order (``order``, then key, then probe)."""
        return sorted((s for s in self.sections if s.place == place), key=lambda s: (s.order, s.key, s.probe))

    def groups(self, place: str) -> list[list[Section]]:
        """The sections of ``place`` by key, each group in order, groups in their first member's order."""
        found: dict[str, list[Section]] = {}
        for section in self.placed(place):
            found.setdefault(section.key, []).append(section)
        return list(found.values())


NO_PLUGINS = ReportPlugins()


def owner(run: Run, plugins: ReportPlugins) -> Section | None:
    """The section that shows ``run``, as the report hands runs out: the first ``OWN`` section (group order) that
    takes it, else the first ``PAPER`` section that claims it; None when none does."""
    for place in (OWN, PAPER):
        for group in plugins.groups(place):
            found = next((s for s in group if s.takes(run)), None)
            if found is not None:
                return found
    return None


def take_groups(runs: list[Run], plugins: ReportPlugins) -> tuple[list[Run], list[tuple[list[Section], list[Run]]]]:
    """Each OWN group's runs taken out of ``runs`` in group order (one pass per group, the runs' order kept); the
    runs left."""
    taken = []
    for group in plugins.groups(OWN):
        mine = [r for r in runs if any(s.takes(r) for s in group)]
        runs = [r for r in runs if not any(s.takes(r) for s in group)]
        taken.append((group, mine))
    return runs, taken


def render_group(group: Sequence[Section], runs: list[Run], task_runs: list[Run], names: EncoderNames,
                 out: Path) -> tuple[Rendered, str]:
    """A group's part (its members' renders in order) and its summary's sentence ("" without runs)."""
    part = Rendered()
    if not runs:
        return part, ""
    for section in group:
        if section.render is None:
            continue
        found = section.render(SectionInput(runs, task_runs, names, out, section.probe, section.record_task))
        part.tables += found.tables
        part.figures.update(found.figures)
        part.figure_for.update(found.figure_for)
    label = next((s.summary for s in group if s.summary), "")
    return part, (f" {label} (own section): {len(runs)}." if label else "")
