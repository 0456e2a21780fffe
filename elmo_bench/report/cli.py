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
    amnesic,
    bits_erasure,
    bootstrap,
    directions,
    edge_figure,
    edge_report,
    figures,
    probe_controls,
    probe_depth,
    structural_mdl,
    tables,
    unshown,
)
from elmo_bench.report.collect import Collection, collect
from elmo_bench.report.encoder_names import EncoderNames
from elmo_bench.report.render import latex_escape, table_latex, table_md

FIGURE1 = "figure1_sample_efficiency.png"
FIGURE2 = "figure2_layer_weights.png"
DEV_CURVES = "dev_curves.png"
PROBE_DEPTH = "probe_depth.png"
PROBE_SELECTIVITY = "probe_selectivity.png"
EDGE_PIPELINE = "edge_pipeline.png"
STRUCTURAL_MDL_DEPTH = "structural_mdl_depth.png"
BITS_DEPTH = "bits_beyond_baseline_depth.png"
#: the figure shown after a table (by its key): file, caption, the line shown when it was not drawn
FIGURE_FOR = {"figure1": (FIGURE1, "Figure 1", "_No sample-efficiency sweep yet._"),
              "figure2": (FIGURE2, "Figure 2", "_No learned mixes yet._"),
              "dev_curves": (DEV_CURVES, "Dev curves", "_No per-epoch dev history yet._"),
              "probe_depth": (PROBE_DEPTH, "Probe accuracy by relative layer depth", ""),
              "probe_controls": (PROBE_SELECTIVITY, "Probe accuracy and selectivity by relative layer depth", ""),
              "edge_probing": (EDGE_PIPELINE, "Edge probing by relative depth", ""),
              "structural_mdl": (STRUCTURAL_MDL_DEPTH, "Structural probes and MDL by relative layer depth", ""),
              "bits_beyond_baseline": (BITS_DEPTH, "Bits beyond a baseline by relative layer depth", "")}


def _collect_existing(dirs: Sequence[str], require_runs: bool) -> Collection:
    """The runs below ``dirs`` (warnings printed): ConfigError for a missing directory, and for no usable run at
    all when ``require_runs``."""
    missing = [d for d in dirs if not Path(d).exists()]
    if missing:
        raise ConfigError(f"{missing[0]}: no such directory (expected a directory holding results.json files)")
    found = collect(dirs)
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


def _sections(found: Collection, names: EncoderNames, p_value: Any, out: Path
              ) -> tuple[list[tables.Table], dict[str, bool]]:
    """Every table and figure of the report (figures written into ``out``). Table 1, the sample-efficiency data,
    Tables 5/6 and the probe-depth figure show each encoder found; the others read the reference encoder's runs
    (EncoderNames.reference_runs: all runs when there is one biLM). Edge-probing runs have their own table and
    figure only: the paper's tables never see them."""
    runs = edge_report.without_edge(found.runs)
    main = names.reference_runs(runs)
    made = {FIGURE1: figures.figure1(runs, out / FIGURE1, names), FIGURE2: figures.figure2(main, out / FIGURE2),
            DEV_CURVES: figures.dev_curve_figure(main, out / DEV_CURVES)}
    depth = figures.probe_depth_figure(runs, out / PROBE_DEPTH, names)
    if depth:                                         # only with several encoders: a single biLM's report is unchanged
        made[PROBE_DEPTH] = True
    sections = [
        tables.table1(runs, p_value, names, found.paper),
        *([tables.non_finite_table(found.non_finite)] if found.non_finite else []),  # only when there are any
        *([overlap] if (overlap := tables.split_overlap_table(runs)).rows else []),  # records that have it
        tables.table2(main, found.paper), tables.table3(main, found.paper), tables.table5(runs, names),
        tables.table6(runs, names),
        *([probe_depth.probe_depth_table(runs, names)] if depth else []),
        tables.table7(found.adaptations, found.paper), tables.figure1_table(runs, names), tables.figure2_table(main),
        tables.dev_curve_table(main), tables.budget_table(main), tables.scale_ablation_table(main),
        directions.directions_table(main, found.adaptations, found.paper),
    ]
    edge_runs = edge_report.edge_runs(found.runs)
    edge = edge_report.edge_table(edge_runs, EncoderNames(edge_runs), p_value) if edge_runs else None
    if edge is not None:
        made[EDGE_PIPELINE] = edge_figure.edge_pipeline_figure(edge.records or [], out / EDGE_PIPELINE)
    return sections + ([edge] if edge is not None else []), made


def _summary(found: Collection, names: EncoderNames) -> str:
    runs = found.runs
    hidden = sum(count for _, count in unshown.unshown(runs, found.unclaimed))
    text = (f"{found.files} results.json files read, {len(runs) + len(found.unclaimed) - hidden} runs used "
            f"({found.duplicates} duplicate run(s) of one experiment kept once, "
            f"{len(found.warnings) + hidden} skipped).") + unshown.summary(runs, found.unclaimed)
    if found.disagreeing:
        text += (f" Records of one run that disagree, none shown: {len(found.disagreeing)} set(s) "
                 f"({sum(len(d.paths) for d in found.disagreeing)} files; see the warnings).")
    runs = edge_report.without_edge(runs)
    if names.several(runs):
        text += (f" Encoders: {'; '.join(names.labels[k] for k in names.order)}. Tables 2 and 3, Figure 2, the dev "
                 f"curves, the budget, the scale ablation and Directions read the runs of "
                 f"{names.label(names.reference(runs))}.")
    return text


def _probing_sections(controls: list, geometry: list, bits: list, out: Path, sections: list[tables.Table],
                      made: dict[str, bool]) -> str:
    """Append the probing-method sections, each only when its runs exist (so a report without them is unchanged):
    control tasks (issue 36), structural probes with MDL (issue 37), bits beyond a baseline and erasure (issue 47);
    returns the summary's addition."""
    summary = ""
    if controls:
        made[PROBE_SELECTIVITY] = figures.probe_selectivity_figure(controls, out / PROBE_SELECTIVITY)
        sections += [probe_controls.probe_control_table(controls), probe_controls.best_layer_table(controls)]
        summary += f" Probe-control runs (own section): {len(controls)}."
    if geometry:
        made[STRUCTURAL_MDL_DEPTH] = figures.structural_mdl_figure(geometry, out / STRUCTURAL_MDL_DEPTH)
        sections.append(structural_mdl.structural_mdl_table(geometry))
        summary += f" Structural-probe and MDL runs (own section): {len(geometry)}."
    if any(r.task == bits_erasure.CONDITIONAL for r in bits):
        made[BITS_DEPTH] = figures.bits_depth_figure(bits, out / BITS_DEPTH)
        sections.append(bits_erasure.conditional_table(bits))
    if any(r.task == bits_erasure.ERASURE for r in bits):
        sections.append(bits_erasure.erasure_table(bits))
    if bits:
        summary += f" Conditional-probing and erasure runs (own section): {len(bits)}."
    return summary


def build_report(dirs: Sequence[str], out: Path, fmt: str = "md", samples: int = 1000,
                 significance: bool = True, require_runs: bool = False) -> Path:
    """Read the results below ``dirs``, write report.md / report.tex / report.json and the PNGs into ``out``.
    A directory that does not exist is a ConfigError (one line, exit 2), and so is no usable results at all when
    ``require_runs`` (the ``report`` command): a report of dashes would read as "no runs" when the path was
    mistyped. Without it an empty collection renders every cell missing (the paper's columns only)."""
    return build_reports(dirs, out, [fmt], samples, significance, require_runs)[0]


def build_reports(dirs: Sequence[str], out: Path, formats: Sequence[str], samples: int = 1000,
                  significance: bool = True, require_runs: bool = False) -> list[Path]:
    """:func:`build_report` in several formats from one reading, one bootstrap and one drawing of the figures
    (each format alone gives the same file): the paths, in the order of ``formats``."""
    _refuse_file_out(out)
    report = _assemble(dirs, out, samples, significance, require_runs)
    return [RENDERERS[fmt](report, out) for fmt in formats]


class _Report:
    """What every format renders: the summary line, the tables, the figures drawn, and what the json adds."""

    def __init__(self, summary: str, sections: list, made: dict[str, bool], found: Collection,
                 runs: list, names: EncoderNames) -> None:
        self.summary, self.sections, self.made, self.found, self.runs, self.names = (
            summary, sections, made, found, runs, names)


def _assemble(dirs: Sequence[str], out: Path, samples: int, significance: bool, require_runs: bool) -> _Report:
    found = _collect_existing(dirs, require_runs)
    found.runs, controls = probe_controls.split_runs(found.runs)   # control-task runs: their own section only
    found.runs, geometry = structural_mdl.split_runs(found.runs)    # structural / MDL runs: likewise
    found.runs, bits = bits_erasure.split_runs(found.runs)          # conditional probing / erasure: likewise
    found.runs, amnesic_runs = amnesic.split_runs(found.runs)       # amnesic_lm and erased task runs: likewise
    found.runs, found.unclaimed = unshown.split_unclaimed(found.runs)  # other probes' records: in no table
    runs = found.runs
    gold_cache: dict = {}

    def p_value(elmo_runs, base_runs):
        return bootstrap.compare_runs(elmo_runs, base_runs, samples, gold_cache)

    _writable_out(out)
    names = EncoderNames(edge_report.without_edge(runs))   # edge runs: their own table (edge_report)
    sections, made = _sections(found, names, p_value if significance else None, out)
    summary = _summary(found, names)
    summary += _probing_sections(controls, geometry, bits, out, sections, made)
    if amnesic_runs:
        sections.append(amnesic.amnesic_table(amnesic_runs, runs))
        summary += f" Amnesic-probing runs (own section): {len(amnesic_runs)}."
    return _Report(summary, sections, made, found, runs, names)


def _write_json(report: _Report, out: Path) -> Path:
    found, names = report.found, report.names
    data = {"summary": report.summary, "runs": len(report.runs), "files": found.files,
            "duplicates": found.duplicates, "tables": {table.key: table.as_json() for table in report.sections},
            "figures": sorted(name for name, exists in report.made.items() if exists)}
    if hidden := unshown.unshown(found.runs, found.unclaimed):   # a new key only when some run read is in no table
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
        if table.key in FIGURE_FOR:
            name, label, absent = FIGURE_FOR[table.key]
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


def report_main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    path = build_report(args.dirs, Path(args.out), args.format, args.bootstrap_samples,
                        not args.no_bootstrap, require_runs=True)
    print(path)
    return 0
