"""``elmo-bench export-results SRC DST``: copy a results tree into the compact, committable form the report reads.

For every ``results.json`` below SRC, ``DST/<same relative dir>/`` gets the run record's files (elmo_bench.records.run_record),
as the engine wrote them:

- ``results.json`` (the run's own, unchanged content);
- ``predictions_<split>.json.gz`` (dev and test): ``[{"index": i, "prediction": p}]``, labels or spans only, never
  the datasets' text (the task's ``record_predictions``: SQuAD's answers are character spans of the context);
- ``scores_test.json.gz``: the per-example sufficient statistics of the test metric (row i = test example i), so
  the report's paired bootstrap needs no data; left out, with a warning, when they do not give the recorded metric;
- ``keys/*.key.gz`` of a WSD probe run; every ``lm_adaptation.json`` (Table 7) below SRC, as it is;
- ``DST/task_declarations.json``: what every task declares about the paper (its numbers, its tables; written by
  the command from tasks/<name>/config.py, elmo_bench.report.declared), so the report needs no task code;
- with ``--task-defaults tasks``, ``DST/task_defaults.json``: every task's ELMo defaults in those configs now
  (``elmo_bench.report.task_defaults``), so the report tells the current default's runs from arms of a default
  since replaced.

It never replaces a file it did not write: ``DST/export_manifest.json`` records every file it wrote and its sha256
(elmo_bench.report.export_manifest); a target that exists with other content and is not recorded there, or changed
since, stops the export with one line before anything is written (``--overwrite`` replaces it).

It copies, it computes nothing from data: a run recorded before the engine wrote the compact files gets them from
``elmo-bench migrate SRC`` first (with the data). Checkpoints, logs and wandb files are not
copied. Gzip headers carry no time stamp: exporting the same tree twice gives the same bytes.
"""
from __future__ import annotations

import gzip
import json
import logging
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.errors import DataError
from elmo_bench.records import lm_adaptation
from elmo_bench.records.run_record import RESULTS_FILE, SCORES_FILE, predictions_path, read_statistics
from elmo_bench.report import declared, export_manifest, task_defaults
from elmo_bench.report.collect import read_run

log = logging.getLogger(__name__)
SPLITS = ("dev", "test")
MIGRATE = "elmo-bench migrate"


def export_run(results_path: Path, src: Path, dst: Path, writes: dict[Path, bytes],
               minimal: frozenset[str] = frozenset()) -> list[str]:
    """One run directory into its compact form: its files added to ``writes`` (target → bytes); returns warnings
    (``minimal``: record tasks whose records need only task and metrics, as the probes' sections declare)."""
    warnings: list[str] = []
    run_dir = results_path.parent
    out = dst / run_dir.relative_to(src)
    run = read_run(results_path, minimal)
    results = json.loads(results_path.read_text(encoding="utf-8"))
    plan: dict[Path, bytes] = {out / RESULTS_FILE: (json.dumps(results, indent=2, sort_keys=True) + "\n").encode()}
    if (run_dir / "keys").is_dir():
        for key_file in sorted((run_dir / "keys").glob("*.key")):
            plan[out / "keys" / f"{key_file.name}.gz"] = gzip.compress(key_file.read_bytes(), compresslevel=9,
                                                                        mtime=0)
    for split in SPLITS:
        compact = predictions_path(run_dir, split, compact=True)
        if compact.exists():
            plan[out / compact.name] = compact.read_bytes()
        elif predictions_path(run_dir, split).exists():
            warnings.append(f"{run_dir}: no {compact.name} beside {predictions_path(run_dir, split).name} "
                            f"(recorded before the engine wrote it): run {MIGRATE} {src} first")
    stats = read_statistics(run_dir)
    if stats is None:
        if predictions_path(run_dir, "test").exists():
            warnings.append(f"{run_dir}: no {SCORES_FILE}; the report shows no p-value for it (run {MIGRATE} {src})")
    elif (recorded := run.value("test")) is not None and abs(stats.value() - recorded) > 0.01:
        warnings.append(f"{run_dir}: statistics give test {run.main_metric} {stats.value():.2f}, "
                        f"results.json says {recorded:.2f}: not exported")
    else:
        plan[out / SCORES_FILE] = (run_dir / SCORES_FILE).read_bytes()
    writes.update(plan)                               # all or nothing of a run: a skipped run adds no file
    return warnings


def export_results(src: str | Path, dst: str | Path, task_conf: str | Path | None = None,
                   overwrite: bool = False, declarations: Mapping[str, Mapping[str, Any]] | None = None,
                   minimal: frozenset[str] = frozenset()) -> tuple[int, list[str]]:
    """Every run below ``src`` into ``dst``; returns (runs exported, warnings). ``task_conf`` (e.g. ``tasks``):
    also write ``DST/task_defaults.json`` from those task configs; ``declarations`` (task → its exported
    declaration): also write ``DST/task_declarations.json``. Every file is planned first, the targets checked
    against ``DST/export_manifest.json`` (DataError, nothing written, unless ``overwrite``), then written.
    ``minimal``: record tasks whose records need only task and metrics (elmo_bench.report.sections)."""
    src, dst = Path(src).resolve(), Path(dst)
    if not src.is_dir():
        raise DataError(f"{src}: not a directory (expected a results tree with results.json files)")
    if dst.resolve() == src or src in dst.resolve().parents:
        raise DataError(f"{dst}: the export must not lie inside the source tree {src}")
    manifest = export_manifest.read_manifest(dst)
    warnings: list[str] = []
    writes: dict[Path, bytes] = {}
    for path in sorted(src.rglob(lm_adaptation.FILENAME)):     # Table 7 records, with or without a run beside them
        writes[dst / path.relative_to(src)] = path.read_bytes()
    if task_conf is not None:                                 # which runs are each task's default today
        if not Path(task_conf).is_dir() or not task_defaults.config_paths(Path(task_conf)):
            raise DataError(f"{task_conf}: not a directory of task configs (expected tasks/<task>/conf/task/*.yaml "
                            f"or *.yaml)")
        writes[dst / task_defaults.FILENAME] = task_defaults.text(task_defaults.from_conf(Path(task_conf))).encode()
    if declarations is not None:
        writes[dst / declared.FILENAME] = declared.text(declarations).encode()
    count = 0
    for path in sorted(src.rglob(RESULTS_FILE)):
        try:
            warnings += export_run(path, src, dst, writes, minimal)
            count += 1
        except (ValueError, OSError, KeyError) as exc:
            warnings.append(f"{path}: skipped ({exc.__class__.__name__}: {exc})")
    export_manifest.check_targets(dst, writes, manifest, overwrite)
    export_manifest.write_all(dst, writes, manifest)
    return count, warnings


def build_parser() -> ArgumentParser:
    """``elmo-bench export-results``'s arguments."""
    parser = ArgumentParser(prog="elmo-bench export-results", description=__doc__.splitlines()[0])
    parser.add_argument("src", help="results tree (e.g. results/cpu_table1)")
    parser.add_argument("dst", help="compact copy (e.g. docs/results/cpu_table1)")
    parser.add_argument("--task-defaults", metavar="TASKS_DIR", default=None,
                        help="also write DST/task_defaults.json with each task's ELMo defaults from the task configs "
                             "there (tasks: each tasks/<task>/conf/task/*.yaml; or a folder of task configs), so the "
                             "report counts runs of a since-replaced default as ablation arms")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace files in DST that this command did not write, or that changed since it did "
                             "(default: refuse, naming the first one)")
    return parser


def export_main(argv: Sequence[str], declarations: Mapping[str, Mapping[str, Any]] | None = None,
                minimal: frozenset[str] = frozenset()) -> int:
    """The command; ``declarations`` (task → its exported declaration, given by the commands layer, which may read
    the tasks) go to ``DST/task_declarations.json`` beside the records; ``minimal``: the record tasks whose records
    need only task and metrics (the probes' sections say so; the commands layer reads them)."""
    args = build_parser().parse_args(list(argv))
    count, warnings = export_results(args.src, args.dst, args.task_defaults, args.overwrite, declarations, minimal)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(json.dumps({"runs": count, "warnings": len(warnings), "out": args.dst}))
    return 0
