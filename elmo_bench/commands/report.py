"""``elmo-bench report``: gathers the probes' report sections from the probe registry (each declaration's ``report``)
and hands them to the report's framework (elmo_bench.report.cli), which names no probe and imports none (the
report reads records only; tests/test_import_graph.py). The sections are code (tables, figures), so they come as
objects from the registry, not through an exported file as the tasks' paper numbers do (task_declarations.json)."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Sequence

from elmo_bench.base.errors import ConfigError
from elmo_bench.probe.registry import declared_function, registered_probes
from elmo_bench.report import cli
from elmo_bench.report.sections import ReportPlugins, Section


@functools.cache
def report_plugins() -> ReportPlugins:
    """Every registered probe's sections (each claiming its probe's record task unless it says otherwise) and the
    probes' record tasks. A record task two sections claim is one ConfigError line naming both probes (a copied
    probe folder whose ``record_task`` was not renamed: its records and the original's would share one table)."""
    sections: list[Section] = []
    claimed: dict[str, str] = {}
    probes = registered_probes()
    for name, declared in probes.items():
        for target in declared.report:
            found = declared_function(declared, target)
            if not isinstance(found, Section):
                raise ConfigError(f"probe {name}: its report target {target!r} is a {type(found).__name__}; "
                                  f"expected an elmo_bench.report.sections.Section")
            section = found.declared_by(name, declared.record_task)
            for task in section.claims:
                if claimed.setdefault(task, name) != name:
                    raise ConfigError(f"record task {task!r} is claimed by the report sections of probes "
                                      f"{claimed[task]!r} and {name!r}; give one its own record_task (config.py)")
            sections.append(section)
    return ReportPlugins(tuple(sections), frozenset(d.record_task for d in probes.values()))


def build_report(dirs: Sequence[str], out: Path, fmt: str = "md", samples: int = 1000, significance: bool = True,
                 require_runs: bool = False) -> Path:
    """elmo_bench.report.cli.build_report with the probes' sections."""
    return cli.build_report(dirs, out, fmt, samples, significance, require_runs, report_plugins())


def build_reports(dirs: Sequence[str], out: Path, formats: Sequence[str], samples: int = 1000,
                  significance: bool = True, require_runs: bool = False) -> list[Path]:
    """elmo_bench.report.cli.build_reports with the probes' sections."""
    return cli.build_reports(dirs, out, formats, samples, significance, require_runs, report_plugins())


def report_main(argv: Sequence[str]) -> int:
    """The command: the report of the results below RESULTS_DIR... (its path printed)."""
    args = cli.build_parser().parse_args(argv)
    path = build_report(args.dirs, Path(args.out), args.format, args.bootstrap_samples, not args.no_bootstrap,
                        require_runs=True)
    print(path)
    return 0
