"""`elmo-bench report RESULTS_DIR... [--format md|latex|json] [--out DIR]`: the paper's tables and figures."""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.errors import ConfigError
from elmo_bench.report import (
    bootstrap,
    by_step,
    by_step_figure,
    directions,
    edge_figure,
    edge_report,
    figures,
    probe_depth,
    run_tables,
    sections,
    tables,
    unshown,
)
from elmo_bench.report.collect import Collection, collect
from elmo_bench.report.encoder_names import EncoderNames
from elmo_bench.report.render import latex_escape, table_latex, table_md
from elmo_bench.report.sections import NO_PLUGINS, PAPER, ReportPlugins
from elmo_bench.report.table import Table

FIGURE1 = "figure1_sample_efficiency.png"
FIGURE2 = "figure2_layer_weights.png"
DEV_CURVES = "dev_curves.png"
PROBE_DEPTH = "probe_depth.png"
EDGE_PIPELINE = "edge_pipeline.png"
#: the figure shown after a table (by its key): file, caption, the line shown when it was not drawn (the probes'
#: sections add theirs, elmo_bench.report.sections.Rendered.figure_for)
FIGURE_FOR = {"figure1": (FIGURE1, "Figure 1", "_No sample-efficiency sweep yet._"),
              "figure2": (FIGURE2, "Figure 2", "_No learned mixes yet._"),
              "dev_curves": (DEV_CURVES, "Dev curves", "_No per-epoch dev history yet._"),
              "probe_depth": (PROBE_DEPTH, "Probe accuracy by relative layer depth", ""),
              "edge_probing": (EDGE_PIPELINE, "Edge probing by relative depth", "")}


def _collect_existing(dirs: Sequence[str], require_runs: bool, plugins: ReportPlugins = NO_PLUGINS) -> Collection:
    """The runs below ``dirs`` (warnings printed): ConfigError for a missing directory, and for no usable run at
    all when ``require_runs``."""
    missing = [d for d in dirs if not Path(d).exists()]
    if missing:
        raise ConfigError(f"{missing[0]}: no such directory (expected a directory holding results.json files)")
    found = collect(dirs, plugins.record_tasks, plugins.minimal, plugins.claimed)
    for warning in found.warnings:
        print(warning, file=sys.stderr)
    if require_runs and not found.runs and not found.adaptations:
        skipped = f" ({len(found.warnings)} unusable, warned above)" if found.warnings else ""
        raise ConfigError(f"{', '.join(map(str, dirs))}: no usable results.json below{skipped}; nothing to report")
    return found


def _refuse_file_out(out: Path) -> None:
    """ConfigError when ``--out`` names an existing file (the report is a directory of files)."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out}: --out is an existing file; expected a directory (it gets report.md or "
                          f"report.json and the figures' PNGs)")


def _writable_out(out: Path) -> None:
    """Create ``out`` and check that files can be made in it: ConfigError (one line) for a read-only directory,
    before any figure is drawn."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        raise ConfigError(f"{out}: cannot write the report there ({exc.strerror or exc}: a read-only "
                          f"directory? choose another with --out)") from exc


def _sections(found: Collection, names: EncoderNames, p_value: Any, out: Path, plugins: ReportPlugins
              ) -> tuple[list[Table], dict[str, bool]]:
    """Every table and figure of the report up to the probes' own sections (figures written into ``out``). Table 1,
    the sample-efficiency data, the paper-place probe sections (Tables 5 and 6) and the probe-depth figure show each
    encoder found; the others read the reference encoder's runs (EncoderNames.reference_runs: all runs when there
    is one biLM). Edge-probing runs have their own table and figure only: the paper's tables never see them."""
    runs = edge_report.without_edge(found.runs)
    main = names.reference_runs(runs)
    made = {FIGURE1: figures.figure1(runs, out / FIGURE1, names), FIGURE2: figures.figure2(main, out / FIGURE2),
            DEV_CURVES: figures.dev_curve_figure(main, out / DEV_CURVES)}
    depth = figures.probe_depth_figure(runs, out / PROBE_DEPTH, names, plugins)
    if depth:                                         # only with several encoders: a single biLM's report is unchanged
        made[PROBE_DEPTH] = True
    probes = [table for group in plugins.groups(PAPER) for section in group if section.render is not None
              for table in section.render(sections.SectionInput(runs, runs, names, out, section.probe,
                                                                section.record_task)).tables]
    parts = [
        tables.table1(runs, p_value, names, found.paper),
        *([run_tables.non_finite_table(found.non_finite)] if found.non_finite else []),  # only when there are any
        *([overlap] if (overlap := run_tables.split_overlap_table(runs)).rows else []),  # records that have it
        tables.table2(main, found.paper), tables.table3(main, found.paper), *probes,
        *([probe_depth.probe_depth_table(runs, names, plugins)] if depth else []),
        tables.table7(found.adaptations, found.paper), run_tables.figure1_table(runs, names), run_tables.figure2_table(main),
        run_tables.dev_curve_table(main), run_tables.budget_table(main), run_tables.scale_ablation_table(main),
        directions.directions_table(main, found.adaptations, found.paper, plugins),
    ]
    edge_runs = edge_report.edge_runs(found.runs)
    edge = edge_report.edge_table(edge_runs, EncoderNames(edge_runs), p_value) if edge_runs else None
    if edge is not None:
        made[EDGE_PIPELINE] = edge_figure.edge_pipeline_figure(edge.records or [], out / EDGE_PIPELINE)
    return parts + ([edge] if edge is not None else []), made


def _summary(found: Collection, names: EncoderNames, plugins: ReportPlugins) -> str:
    runs = found.runs
    hidden = sum(count for _, count in unshown.unshown(runs, found.unclaimed, plugins))
    text = (f"{found.files} results.json files read, {len(runs) + len(found.unclaimed) - hidden} runs used "
            f"({found.duplicates} duplicate run(s) of one experiment kept once, "
            f"{len(found.warnings) + hidden} skipped).") + unshown.summary(runs, found.unclaimed, plugins)
    if found.disagreeing:
        text += (f" Records of one run that disagree, none shown: {len(found.disagreeing)} set(s) "
                 f"({sum(len(d.paths) for d in found.disagreeing)} files; see the warnings).")
    runs = edge_report.without_edge(runs)
    if names.several(runs):
        text += (f" Encoders: {'; '.join(names.labels[k] for k in names.order)}. Tables 2 and 3, Figure 2, the dev "
                 f"curves, the budget, the scale ablation and Directions read the runs of "
                 f"{names.label(names.reference(runs))}.")
    return text


def build_report(dirs: Sequence[str], out: Path, fmt: str = "md", samples: int = 1000,
                 significance: bool = True, require_runs: bool = False, plugins: ReportPlugins = NO_PLUGINS) -> Path:
    """Read the results below ``dirs``, write report.md / report.tex / report.json and the PNGs into ``out``.
    A directory that does not exist is a ConfigError (one line, exit 2), and so is no usable results at all when
    ``require_runs`` (the ``report`` command): a report of dashes would read as "no runs" when the path was
    mistyped. Without it an empty collection renders every cell missing (the paper's columns only). ``plugins``:
    the probes' sections (elmo_bench.commands.report gathers them; without them every probe record is unshown)."""
    return build_reports(dirs, out, [fmt], samples, significance, require_runs, plugins)[0]


def build_reports(dirs: Sequence[str], out: Path, formats: Sequence[str], samples: int = 1000,
                  significance: bool = True, require_runs: bool = False, plugins: ReportPlugins = NO_PLUGINS
                  ) -> list[Path]:
    """:func:`build_report` in several formats from one reading, one bootstrap and one drawing of the figures
    (each format alone gives the same file): the paths, in the order of ``formats``."""
    _refuse_file_out(out)
    report = _assemble(dirs, out, samples, significance, require_runs, plugins)
    return [RENDERERS[fmt](report, out) for fmt in formats]


class _Report:
    """What every format renders: the summary line, the tables, the figures drawn, and what the json adds."""

    def __init__(self, summary: str, parts: list, made: dict[str, bool], found: Collection,
                 runs: list, names: EncoderNames, plugins: ReportPlugins,
                 figure_for: dict[str, tuple[str, str, str]]) -> None:
        self.summary, self.sections, self.made, self.found, self.runs, self.names = (
            summary, parts, made, found, runs, names)
        self.plugins, self.figure_for = plugins, figure_for


def _assemble(dirs: Sequence[str], out: Path, samples: int, significance: bool, require_runs: bool,
              plugins: ReportPlugins) -> _Report:
    found = _collect_existing(dirs, require_runs, plugins)
    stepped = by_step.points(by_step.step_values(found.runs, plugins))   # across the sections: before they take theirs
    found.runs, taken = sections.take_groups(found.runs, plugins)    # the probes' own sections take their runs
    found.runs, found.unclaimed = unshown.split_unclaimed(found.runs, plugins)  # other probes' records: no table
    runs = found.runs
    gold_cache: dict = {}

    def p_value(elmo_runs, base_runs):
        return bootstrap.compare_runs(elmo_runs, base_runs, samples, gold_cache)

    _writable_out(out)
    names = EncoderNames(edge_report.without_edge(runs))   # edge runs: their own table (edge_report)
    parts, made = _sections(found, names, p_value if significance else None, out, plugins)
    summary = _summary(found, names, plugins)
    figure_for = dict(FIGURE_FOR)
    for group, mine in taken:                       # each only when its runs exist: a report without them is unchanged
        part, said = sections.render_group(group, mine, runs, names, out)
        made.update(part.figures)
        parts += part.tables
        figure_for.update(part.figure_for)
        summary += said
    if stepped:                             # only with records of a checkpoint series: a report without is unchanged
        parts.append(by_step.by_step_table(stepped))
        made[by_step_figure.FIGURE] = by_step_figure.by_step_figure(stepped, out / by_step_figure.FIGURE)
        figure_for[by_step.KEY] = (by_step_figure.FIGURE, "Probes by training step (intervals shaded)", "")
        summary += (f" Checkpoint series (by training step): {len(stepped)} point(s), "
                    f"{sum(p.duplicate_of is not None for p in stepped)} duplicate(s).")
    return _Report(summary, parts, made, found, runs, names, plugins, figure_for)


def _write_json(report: _Report, out: Path) -> Path:
    found, names = report.found, report.names
    data = {"summary": report.summary, "runs": len(report.runs), "files": found.files,
            "duplicates": found.duplicates, "tables": {table.key: table.as_json() for table in report.sections},
            "figures": sorted(name for name, exists in report.made.items() if exists)}
    if hidden := unshown.unshown(found.runs, found.unclaimed, report.plugins):   # a new key only when some run read is in no table
        data["unshown"] = [{"reason": reason, "runs": count} for reason, count in hidden]
    if found.disagreeing:                         # likewise: records of one run that disagree, none shown
        data["disagreeing"] = [{"files": d.shown, "first_difference": d.where}
                               for d in found.disagreeing]
    paper_runs = edge_report.without_edge(report.runs)
    if names.several(paper_runs):                 # new keys only when there are several encoders
        data["encoders"] = names.as_json()
        data["reference_encoder"] = names.label(names.reference(paper_runs))
    path = out / "report.json"
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n")
    return path


def _write_md(report: _Report, out: Path) -> Path:
    parts = ["# ELMo reproduction report", "", report.summary, ""]
    for table in report.sections:
        parts.append(table_md(table))
        if table.key in report.figure_for:
            name, label, absent = report.figure_for[table.key]
            parts.append(f"![{label}]({name})\n" if report.made[name] else absent + "\n")
    path = out / "report.md"
    atomic_write_text(path, "\n".join(parts))
    return path


def _write_latex(report: _Report, out: Path) -> Path:
    parts = [r"% elmo-bench report (needs \usepackage{booktabs, graphicx})", "% " + report.summary, ""]
    for table in report.sections:
        parts.append(table_latex(table))
    for name, exists in report.made.items():
        if exists:
            parts.append(rf"\begin{{figure}}[ht]\centering\includegraphics[width=\linewidth]{{{name}}}"
                         rf"\caption{{{latex_escape(name)}}}\end{{figure}}" + "\n")
    path = out / "report.tex"
    atomic_write_text(path, "\n".join(parts))
    return path


#: ``--format`` → its writer
RENDERERS = {"json": _write_json, "md": _write_md, "latex": _write_latex}


def build_parser() -> ArgumentParser:
    """``elmo-bench report``'s arguments."""
    parser = ArgumentParser(prog="elmo-bench report", description=__doc__)
    parser.add_argument("dirs", nargs="+", metavar="RESULTS_DIR", help="directories searched for results.json")
    parser.add_argument("--format", choices=["md", "latex", "json"], default="md",
                        help="md: report.md; latex: report.tex; json: report.json, every table as rows")
    parser.add_argument("--out", default="report", help="output directory (default: ./report)")
    parser.add_argument("--bootstrap-samples", type=int, default=1000, help="paired bootstrap resamples")
    parser.add_argument("--no-bootstrap", action="store_true", help="skip p-values (they read the test gold data)")
    return parser
