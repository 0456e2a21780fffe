"""Hydra callbacks: print a results table when a sweep ends."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from elmo_bench.records.run_record import RESULTS_FILE


def results_table(root: Path, run_dirs: list[Path] | None = None) -> str:
    """A Markdown table of the results.json of ``run_dirs`` (default: every one below ``root``): task, embedder,
    seed, dev/test main metric, time, layer weights."""
    rows = []
    paths = sorted(root.rglob(RESULTS_FILE)) if run_dirs is None else [d / RESULTS_FILE for d in run_dirs]
    for path in [p for p in paths if p.exists()]:
        r = json.loads(path.read_text())
        key = r["main_metric"]
        cell = lambda split: f"{r['metrics'][split][key]:.2f}" if split in r["metrics"] else "—"  # noqa: E731
        mixes = "; ".join(f"{w}: s={m['weights']}, γ={m['gamma']:.2f}" for w, m in (r.get("mixes") or {}).items())
        rows.append(f"| {r['task']} | {r['embedder']} | {r['seed']} | {key} | {cell('dev')} | {cell('test')} | "
                    f"{r['timings']['total_seconds']:.0f} s | {mixes or '—'} |")
    header = "| task | embedder | seed | metric | dev | test | time | ELMo layer weights |\n|---|---|---|---|---|---|---|---|"
    return "\n".join([header, *rows])


class ResultsTable(Callback):
    """Prints the table of this sweep's jobs only (older runs in the same sweep directory are left out)."""

    def __init__(self) -> None:
        self.run_dirs: list[Path] = []

    def on_job_end(self, config: DictConfig, job_return: Any, **kwargs: Any) -> None:
        hydra_cfg = getattr(job_return, "hydra_cfg", None)
        if hydra_cfg is not None:
            self.run_dirs.append(Path(hydra_cfg.hydra.runtime.output_dir))

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        root = Path(config.hydra.sweep.dir)
        # jobs run by another process (e.g. a cluster launcher) are not seen here: then every run below the root
        print("\n" + results_table(root, self.run_dirs or None) + "\n", flush=True)
