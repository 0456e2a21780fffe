"""Held-out perplexity of a pretraining run's latest checkpoint, appended to ``RUN_DIR/heldout_curve.jsonl``: the
curve of perplexity against tokens seen that TRAINING.md plots (and the projection when a target is not reached).

Usage: python scripts/lm_curve.py RUN_DIR [PRETRAIN_CONFIG] [WORK_DIR]
       (defaults: /work/lm_work/run_v2 default /work/lm_work; the texts come from scripts/prepare_lm_corpus.py)

Skips a checkpoint already measured (same step). Runs on one thread, so a training run keeps the other core.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import torch

from elmo_bench.base import checkpoints
from elmo_bench.commands.pretrain import compose_pretrain
from elmo_bench.pretrain.export import export_checkpoint
from elmo_bench.pretrain.perplexity import evaluate, load_lm
from elmo_bench.pretrain.train import heldout_sentences

TEXTS = {"litbank_fold0_devtest": "litbank_fold0_devtest.txt", "ptb_test": "ptb.test.txt"}


def measure(run_dir: Path, config: str, work_dir: Path) -> dict | None:
    curve = run_dir / "heldout_curve.jsonl"
    done = {json.loads(line)["step"] for line in curve.read_text().splitlines()} if curve.exists() else set()
    payload = checkpoints.load(run_dir / "checkpoint.pt", "cpu")
    if payload["step"] in done:
        return None
    cfg = compose_pretrain([f"pretrain={config}"])
    row = {"step": payload["step"], "tokens": payload["tokens_seen"], "train_seconds": payload["train_seconds"]}
    with tempfile.TemporaryDirectory() as tmp:
        export_checkpoint(run_dir / "checkpoint.pt", cfg, tmp)
        lm = load_lm(Path(tmp) / "options.json", Path(tmp) / "weights.hdf5", Path(tmp) / "vocab.txt")
        for label, name in TEXTS.items():
            result = evaluate(*lm, heldout_sentences([str(work_dir / name)]))
            row[label] = {k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}
    with open(curve, "a") as handle:
        handle.write(json.dumps(row) + "\n")
    return row


if __name__ == "__main__":
    torch.set_num_threads(1)
    args = sys.argv[1:]
    out = measure(Path(args[0] if args else "/work/lm_work/run_v2"), args[1] if len(args) > 1 else "default",
                  Path(args[2] if len(args) > 2 else "/work/lm_work"))
    print(json.dumps(out))
