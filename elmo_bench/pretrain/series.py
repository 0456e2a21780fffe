"""A checkpoint series: a usable biLM exported at every checkpoint pretraining writes (issue 57 item 3), so that
probes can be run on each one and plotted against training (Saphra & Lopez 2019; Liu et al. 2021).

Each point is a directory ``<series_dir>/step-<step, 8 digits>_tokens-<tokens seen>/`` holding what
:func:`elmo_bench.pretrain.export.export_lm` writes (options.json, weights.hdf5 with its softmax, vocab.txt,
weights.sha256) and ``checkpoint.json`` (step, tokens seen, training seconds), written last: a directory without it
is an interrupted export and is written again.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.encoders.checkpoints import POINT_FILE  # the file that marks a finished point (and its position)


def point_name(step: int, tokens_seen: int) -> str:
    """``step-00000400_tokens-1638400``: sorts by step, and names the tokens seen."""
    return f"step-{step:08d}_tokens-{tokens_seen}"


def export_point(model: Any, vocab: Any, series_dir: str | Path, position: dict[str, Any]) -> Path:
    """Export ``model`` as a series point for ``position`` (``step``, ``tokens_seen``, ``train_seconds``); an
    existing finished point of that step (a resumed run) is kept as it is."""
    from elmo_bench.pretrain.export import export_lm  # lazy: torch

    out = Path(series_dir) / point_name(int(position["step"]), int(position["tokens_seen"]))
    if (out / POINT_FILE).exists():
        return out
    if out.exists():  # an export interrupted before its checkpoint.json: written again from the start
        shutil.rmtree(out)
    export_lm(model, vocab, out)
    atomic_write_text(out / POINT_FILE, json.dumps(position, indent=2, sort_keys=True) + "\n")
    return out


def read_point(weights_or_dir: str | Path) -> dict[str, Any] | None:
    """Where in training a series point was taken (``checkpoint.json`` beside its weights), or None when the
    path is not a finished series point."""
    path = Path(weights_or_dir)
    record = (path if path.is_dir() else path.parent) / POINT_FILE
    if not record.is_file():
        return None
    return json.loads(record.read_text(encoding="utf-8"))


def series_points(series_dir: str | Path) -> list[Path]:
    """The finished points of a series, in training order."""
    root = Path(series_dir)
    return sorted(p for p in root.glob("step-*_tokens-*") if (p / POINT_FILE).is_file())
