"""Hydra callbacks: print a results table when a sweep ends."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig


def results_table(root: Path) -> str:
    """A Markdown table of every results.json below ``root`` (task, embedder, seed, dev/test main metric)."""
    rows = []
    for path in sorted(root.rglob("results.json")):
        r = json.loads(path.read_text())
        key = r["main_metric"]
        cell = lambda split: f"{r['metrics'][split][key]:.2f}" if split in r["metrics"] else "—"  # noqa: E731
        mixes = "; ".join(f"{w}: s={m['weights']}, γ={m['gamma']:.2f}" for w, m in (r.get("mixes") or {}).items())
        rows.append(f"| {r['task']} | {r['embedder']} | {r['seed']} | {key} | {cell('dev')} | {cell('test')} | "
                    f"{r['timings']['total_seconds']:.0f} s | {mixes or '—'} |")
    header = "| task | embedder | seed | metric | dev | test | time | ELMo layer weights |\n|---|---|---|---|---|---|---|---|"
    return "\n".join([header, *rows])


class ResultsTable(Callback):
    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        root = Path(config.hydra.sweep.dir)
        print("\n" + results_table(root) + "\n", flush=True)
