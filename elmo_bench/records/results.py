"""results.json: one file per run, the single source the report reads. Written atomically."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from elmo_bench.base.atomic import atomic_write_text

SCHEMA_VERSION = 1
REQUIRED_KEYS = ("schema", "task", "embedder", "seed", "config", "metrics", "main_metric", "mixes", "epochs",
                 "timings", "bilm", "git_commit", "data")


def git_commit(repo: Path) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def write_results(path: str | Path, results: dict[str, Any]) -> None:
    missing = [k for k in REQUIRED_KEYS if k not in results]
    if missing:
        raise ValueError(f"results.json: missing keys {missing}")
    atomic_write_text(path, json.dumps(results, indent=2, sort_keys=True) + "\n")


def read_results(path: str | Path) -> dict[str, Any]:
    results = json.loads(Path(path).read_text())
    missing = [k for k in REQUIRED_KEYS if k not in results]
    if missing:
        raise ValueError(f"{path}: not a results.json of this project (missing keys {missing})")
    return results
