"""``elmo-bench export-results SRC DST``: copy a results tree into the compact, committable form the report reads.

For every ``results.json`` below SRC, ``DST/<same relative dir>/`` gets:

- ``results.json`` (the run's own, unchanged content);
- ``predictions_<split>.json.gz``: ``[{"index": i, "prediction": p}]`` for example i of the split, labels or spans
  only, never the datasets' text: SQuAD's answer strings become ``[char_start, char_end]`` in the context (found
  with the test data; without it SQuAD predictions are left out);
- ``scores_test.json.gz``: the per-example sufficient statistics of the test metric
  (``elmo_bench.report.statistics``; row i = test example i) so the report's paired bootstrap needs no data;
  computed from the gold test set, so SRC's data must be readable when exporting;
- ``keys/*.key.gz`` of a WSD probe run; every ``lm_adaptation.json`` (Table 7) below SRC, as it is;
- with ``--task-defaults conf/task``, ``DST/task_defaults.json``: every task's ELMo defaults in those configs now
  (``elmo_bench.report.task_defaults``), so the report tells the current default's runs from arms of a default
  since replaced.

Checkpoints, logs and wandb files are not copied. Gzip headers carry no time stamp: exporting the same tree twice
gives the same bytes.
"""
from __future__ import annotations

import argparse
import gzip
import json
import logging
import sys
from pathlib import Path
from typing import Any, Sequence

from elmo_bench.base.atomic import atomic_write_bytes, atomic_write_text

log = logging.getLogger(__name__)
SPLITS = ("dev", "test")


def _gz_json(path: Path, value: Any) -> None:
    data = json.dumps(value, separators=(",", ":"), sort_keys=True).encode("utf-8")
    atomic_write_bytes(path, gzip.compress(data, compresslevel=9, mtime=0))


def _squad_spans(predictions: list[Any], examples: list[Any]) -> list[Any]:
    """Answer strings → [start, end) character offsets in their context (the first occurrence), None if absent."""
    out = []
    for p, ex in zip(predictions, examples, strict=True):
        start = ex["context_text"].find(p) if p else -1
        out.append([start, start + len(p)] if start >= 0 else None)
    return out


def export_run(results_path: Path, src: Path, dst: Path, cache: dict[str, Any]) -> list[str]:
    """One run directory into its compact form; returns warnings."""
    from elmo_bench.report import bootstrap
    from elmo_bench.report.collect import read_run

    warnings: list[str] = []
    run_dir = results_path.parent
    out = dst / run_dir.relative_to(src)
    out.mkdir(parents=True, exist_ok=True)
    results = json.loads(results_path.read_text(encoding="utf-8"))
    atomic_write_text(out / "results.json", json.dumps(results, indent=2, sort_keys=True) + "\n")
    if (run_dir / "keys").is_dir():
        (out / "keys").mkdir(exist_ok=True)
        for key_file in sorted((run_dir / "keys").glob("*.key")):
            atomic_write_bytes(out / "keys" / f"{key_file.name}.gz",
                               gzip.compress(key_file.read_bytes(), compresslevel=9, mtime=0))
    run = read_run(results_path)
    for split in SPLITS:
        path = run_dir / f"predictions_{split}.json"
        if not path.exists():
            continue
        predictions = [r["prediction"] for r in json.loads(path.read_text(encoding="utf-8"))]
        if run.task == "squad":
            if split != "test":
                continue                     # the dev answers would need the dev data: not used by the report
            try:
                _, examples = bootstrap._gold(run, cache)
                predictions = _squad_spans(predictions, examples)
            except Exception as exc:
                warnings.append(f"{path}: SQuAD answers left out (test data not readable: {exc})")
                continue
        _gz_json(out / f"predictions_{split}.json.gz", [{"index": i, "prediction": p} for i, p in enumerate(predictions)])
    if (run_dir / "predictions_test.json").exists():
        stats, why = bootstrap.run_statistics(run, cache)
        if stats is None:
            warnings.append(f"{run_dir}: no {bootstrap.SCORES_FILE} ({why}); the report shows no p-value for it")
        else:
            recorded = run.value("test")
            if recorded is not None and abs(stats.value() - recorded) > 0.01:
                warnings.append(f"{run_dir}: statistics give test {run.main_metric} {stats.value():.2f}, "
                                f"results.json says {recorded:.2f}: not exported")
            else:
                _gz_json(out / bootstrap.SCORES_FILE, {"kind": stats.kind, "metric": stats.metric,
                                                       "rows": stats.rows.tolist()})
    return warnings


def export_results(src: str | Path, dst: str | Path, task_conf: str | Path | None = None) -> tuple[int, list[str]]:
    """Every run below ``src`` into ``dst``; returns (runs exported, warnings). ``task_conf`` (e.g. ``conf/task``):
    also write ``DST/task_defaults.json`` from those task configs."""
    from elmo_bench.base.errors import DataError

    src, dst = Path(src).resolve(), Path(dst)
    if not src.is_dir():
        raise DataError(f"{src}: not a directory (expected a results tree with results.json files)")
    if dst.resolve() == src or src in dst.resolve().parents:
        raise DataError(f"{dst}: the export must not lie inside the source tree {src}")
    cache: dict[str, Any] = {}
    warnings: list[str] = []
    from elmo_bench.records import lm_adaptation

    for path in sorted(src.rglob(lm_adaptation.FILENAME)):     # Table 7 records, with or without a run beside them
        target = dst / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, path.read_bytes())
    if task_conf is not None:                                 # which runs are each task's default today
        from elmo_bench.report import task_defaults

        if not Path(task_conf).is_dir() or not any(Path(task_conf).glob("*.yaml")):
            raise DataError(f"{task_conf}: not a directory of task configs (expected conf/task/*.yaml)")
        dst.mkdir(parents=True, exist_ok=True)
        task_defaults.write(dst, task_defaults.from_conf(Path(task_conf)))
    paths = sorted(src.rglob("results.json"))
    count = 0
    for path in paths:
        try:
            warnings += export_run(path, src, dst, cache)
            count += 1
        except (ValueError, OSError, KeyError) as exc:
            warnings.append(f"{path}: skipped ({exc.__class__.__name__}: {exc})")
    return count, warnings


def export_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="elmo-bench export-results", description=__doc__.splitlines()[0])
    parser.add_argument("src", help="results tree (e.g. results/cpu_table1)")
    parser.add_argument("dst", help="compact copy (e.g. docs/results/cpu_table1)")
    parser.add_argument("--task-defaults", metavar="CONF_TASK_DIR", default=None,
                        help="also write DST/task_defaults.json with each task's ELMo defaults from these task configs "
                             "(e.g. conf/task), so the report counts runs of a since-replaced default as ablation arms")
    args = parser.parse_args(list(argv))
    count, warnings = export_results(args.src, args.dst, args.task_defaults)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(json.dumps({"runs": count, "warnings": len(warnings), "out": args.dst}))
    return 0
