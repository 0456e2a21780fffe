"""Training tokens/s of the biLM pretraining step on this CPU (one thread), for the shipped configuration or any
other given as JSON overrides of the model/training keys.

    python bench/pretrain_speed.py [--corpus FILE] [--steps 10] ['{"lstm_dim": 256}' ...]

A token is one position of one stream (batch_size × unroll_steps per step; both directions are trained on it).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from elmo_bench.pretrain.data import load_corpus  # noqa: E402
from elmo_bench.pretrain.train import Trainer  # noqa: E402


def shipped_config() -> dict:
    from omegaconf import OmegaConf

    cfg = OmegaConf.to_container(OmegaConf.load(REPO / "conf/pretrain/default.yaml"), resolve=False)
    return cfg


def invented_corpus(path: Path, sentences: int = 3000) -> None:
    import random

    rng = random.Random(0)
    words = [f"w{i}" for i in range(3000)] + ["the", "a", "of", ",", "."]
    with open(path, "w") as out:
        for _ in range(sentences):
            out.write(" ".join(rng.choice(words) for _ in range(rng.randint(5, 30))) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="one tokenised sentence a line (default: an invented 3000-sentence text)")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("variants", nargs="*", help="JSON overrides, e.g. '{\"lstm_dim\": 256, \"num_sampled\": 512}'")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    base = shipped_config()
    with tempfile.TemporaryDirectory() as tmp:
        corpus_path = args.corpus
        if corpus_path is None:
            corpus_path = str(Path(tmp) / "corpus.txt")
            invented_corpus(Path(corpus_path))
        corpus = load_corpus([corpus_path], min_count=base.get("min_count", 1), max_vocab=base.get("max_vocab"))
        for spec in args.variants or ["{}"]:
            over = json.loads(spec)
            cfg = json.loads(json.dumps(base))
            for key, value in over.items():
                (cfg["model"] if key in cfg["model"] else cfg)[key] = value
            cfg.update(out_dir=str(Path(tmp) / "out"), max_tokens=10**12)
            trainer = Trainer(cfg, corpus=corpus, device="cpu")
            for _ in range(2):
                trainer.train_step()
            start = time.perf_counter()
            for _ in range(args.steps):
                trainer.train_step()
            seconds = time.perf_counter() - start
            tokens = args.steps * cfg["batch_size"] * cfg["unroll_steps"]
            params = sum(p.numel() for p in trainer.model.parameters())
            print(json.dumps({"variant": over, "tokens_per_s": round(tokens / seconds, 1), "params": params,
                              "vocab": len(corpus.vocab), "threads": args.threads}), flush=True)


if __name__ == "__main__":
    main()
