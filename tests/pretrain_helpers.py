"""Invented tiny corpora and a tiny config for the biLM pretraining tests (no real data)."""
from __future__ import annotations

import random
from pathlib import Path

from elmo_bench.pretrain.pretrain_config import PretrainConfig

SUBJECTS = ["the cat", "a dog", "the old man", "my sister", "the bird"]
VERBS = ["sat on", "looked at", "walked to", "ran past"]
OBJECTS = ["the mat", "a tree", "the house", "the river"]


def grammar_sentences(n: int, seed: int, swap: bool = False) -> list[str]:
    """Subject-verb-object sentences; ``swap`` puts the object first (a different 'domain' for fine-tuning)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s, v, o = rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS)
        out.append(f"{o} {v} {s} ." if swap else f"{s} {v} {o} .")
    return out


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


#: conf/pretrain/tiny.yaml's architecture
TINY_MODEL = {"filters": [[1, 8], [2, 8], [3, 16]], "n_highway": 1, "char_dim": 8, "activation": "relu", "n_layers": 2,
              "lstm_dim": 32, "projection_dim": 16, "cell_clip": 3.0, "proj_clip": 3.0, "use_skip_connections": True}


def tiny_config(train_file: Path, out_dir: Path, **over) -> PretrainConfig:
    """A tiny run's config (``over``: keys to change; ``model=`` a whole architecture mapping)."""
    cfg = {
        "train_files": [str(train_file)], "vocab_file": None, "min_count": 1, "max_vocab": None,
        "model": dict(TINY_MODEL),
        "batch_size": 8, "unroll_steps": 6, "num_sampled": 16, "dropout": 0.0, "optimizer": "adagrad", "lr": 0.2,
        "initial_accumulator": 1.0, "grad_clip": 10.0, "max_tokens": 8 * 6 * 40, "seed": 0, "threads": 1,
        "device": "cpu", "shuffle": True, "resume": True, "out_dir": str(out_dir), "export_dir": None,
        "checkpoint_every_steps": 0, "checkpoint_every_s": 0, "log_every": 10, "log_file": None,
    }
    cfg.update(over)
    return PretrainConfig.of(cfg)
