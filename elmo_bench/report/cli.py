"""`elmo-bench report RESULTS_DIR... [--format md|latex|json] [--out DIR]`: the paper's tables and figures."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.report import bootstrap, directions, figures, tables
from elmo_bench.report.collect import collect
from elmo_bench.report.render import latex_escape, table_latex, table_md

FIGURE1 = "figure1_sample_efficiency.png"
FIGURE2 = "figure2_layer_weights.png"
DEV_CURVES = "dev_curves.png"


def build_report(dirs: Sequence[str], out: Path, fmt: str = "md", samples: int = 1000,
                 significance: bool = True) -> Path:
    """Read the results below ``dirs``, write report.md / report.tex / report.json and the PNGs into ``out``."""
    found = collect(dirs)
    for warning in found.warnings:
        print(warning, file=sys.stderr)
    runs = found.runs
    gold_cache: dict = {}

    def p_value(elmo_runs, base_runs):
        return bootstrap.compare_runs(elmo_runs, base_runs, samples, gold_cache)

    out.mkdir(parents=True, exist_ok=True)
    made = {FIGURE1: figures.figure1(runs, out / FIGURE1), FIGURE2: figures.figure2(runs, out / FIGURE2),
            DEV_CURVES: figures.dev_curve_figure(runs, out / DEV_CURVES)}
    sections = [
        tables.table1(runs, p_value if significance else None),
        tables.table2(runs), tables.table3(runs), tables.table5(runs), tables.table6(runs),
        tables.table7(found.adaptations), tables.figure1_table(runs), tables.figure2_table(runs),
        tables.dev_curve_table(runs), tables.budget_table(runs), tables.scale_ablation_table(runs),
        directions.directions_table(runs, found.adaptations),
    ]
    summary = (f"{found.files} results.json files read, {len(runs)} runs used "
               f"({found.duplicates} duplicate run(s) of one experiment kept once, "
               f"{len(found.warnings)} skipped).")
    figure_for = {"figure1": (FIGURE1, "Figure 1", "_No sample-efficiency sweep yet._"),
                  "figure2": (FIGURE2, "Figure 2", "_No learned mixes yet._"),
                  "dev_curves": (DEV_CURVES, "Dev curves", "_No per-epoch dev history yet._")}
    if fmt == "json":
        report = {"summary": summary, "runs": len(runs), "files": found.files, "duplicates": found.duplicates,
                  "tables": {table.key: table.as_json() for table in sections},
                  "figures": sorted(name for name, exists in made.items() if exists)}
        path = out / "report.json"
        atomic_write_text(path, json.dumps(report, indent=2, sort_keys=True, allow_nan=False) + "\n")
        return path
    if fmt == "md":
        parts = ["# ELMo reproduction report", "", summary, ""]
        for table in sections:
            parts.append(table_md(table))
            if table.key in figure_for:
                name, label, absent = figure_for[table.key]
                parts.append(f"![{label}]({name})\n" if made[name] else absent + "\n")
        path = out / "report.md"
    else:
        parts = [r"% elmo-bench report (needs \usepackage{booktabs, graphicx})", "% " + summary, ""]
        for table in sections:
            parts.append(table_latex(table))
        for name, exists in made.items():
            if exists:
                parts.append(rf"\begin{{figure}}[ht]\centering\includegraphics[width=\linewidth]{{{name}}}"
                             rf"\caption{{{latex_escape(name)}}}\end{{figure}}" + "\n")
        path = out / "report.tex"
    atomic_write_text(path, "\n".join(parts))
    return path


def report_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="elmo-bench report", description=__doc__)
    parser.add_argument("dirs", nargs="+", metavar="RESULTS_DIR", help="directories searched for results.json")
    parser.add_argument("--format", choices=["md", "latex", "json"], default="md",
                        help="md: report.md; latex: report.tex; json: report.json, every table as rows")
    parser.add_argument("--out", default="report", help="output directory (default: ./report)")
    parser.add_argument("--bootstrap-samples", type=int, default=1000, help="paired bootstrap resamples")
    parser.add_argument("--no-bootstrap", action="store_true", help="skip p-values (they read the test gold data)")
    args = parser.parse_args(argv)
    path = build_report(args.dirs, Path(args.out), args.format, args.bootstrap_samples,
                        not args.no_bootstrap)
    print(path)
    return 0
