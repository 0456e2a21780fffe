"""Training tokens/s of the biLM pretraining step on this CPU, for a pretraining config (default:
conf/pretrain/default.yaml) or JSON overrides of its model/training keys.

    python bench/pretrain_speed.py [--config F] [--corpus FILE] [--steps 8] [--threads 2] ['{"batch_size": 128}' ...]
    python bench/pretrain_speed.py --compare-baseline     # the fast step against the pre-v2 reference step

A token is one position of one stream (batch_size × unroll_steps per step; both directions are trained on it).
With ``--compare-baseline`` the reference step of ``bench/pretrain_reference.py`` (the training step as it was
before the fast path) and the package's step run in the same process on the same batches from the same initial
weights, alternating step by step so that other load on the machine hits both alike; the last line printed is one
JSON object ``{"tokens_per_s", "baseline_tokens_per_s", "speedup", "gflops", "gemm_gflops"}``: ``gflops`` is the
achieved rate of the model's training FLOPs (forward + backward, counted from the architecture: the LSTM, the
character CNN over the positions it needs, highway and projection layers, the sampled softmax) and
``gemm_gflops`` the rate of one plain fp32 matmul of the size of the LSTM input projection, timed in the same run:
this machine's practical roofline.
"""
from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from pretrain_reference import reference_step  # noqa: E402

from elmo_bench.bilm.token_encoder import PADDING_ID  # noqa: E402
from elmo_bench.bilm.window_lstm import set_direction_threads  # noqa: E402
from elmo_bench.pretrain.data import load_corpus  # noqa: E402
from elmo_bench.pretrain.pretrain_config import PretrainConfig  # noqa: E402
from elmo_bench.pretrain.train import Trainer  # noqa: E402


def load_config(path: Path) -> dict:
    """A conf/pretrain preset's own keys (its ``defaults`` list dropped; PretrainConfig fills the rest)."""
    from omegaconf import OmegaConf

    values = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    values.pop("defaults", None)
    return values


def invented_corpus(path: Path, sentences: int = 3000) -> None:
    """Zipf-like words of varied spelling length, so the char CNN sees realistic word lengths."""
    import random

    rng = random.Random(0)
    letters = "etaoinshrdlucmfwypvbgkqjxz"
    words = ["".join(rng.choice(letters) for _ in range(max(1, int(rng.gauss(6, 3))))) for _ in range(8000)]
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    with open(path, "w") as out:
        for _ in range(sentences):
            out.write(" ".join(rng.choices(words, weights, k=rng.randint(5, 40))) + "\n")


def step_flops(trainer: Trainer, inputs) -> float:
    """Forward + backward FLOPs of one training step (3 × the forward's multiply-adds × 2)."""
    cfg, options = trainer.cfg, trainer.options
    tokens = cfg.batch_size * cfg.unroll_steps
    h, p = options.lstm_dim, options.projection_dim
    lstm = options.n_layers * 2 * tokens * 2 * (p * 4 * h + p * 4 * h + h * p)
    types = torch.unique(torch.from_numpy(inputs))
    chars = trainer.table_chars[types].long()
    widest = max(w for w, _ in options.filters)
    needed = ((chars != PADDING_ID).sum(dim=1) + widest).clamp(max=chars.shape[1]).double()
    cnn = sum(float((2 * options.char_dim * w * n * (needed - w + 1)).sum()) for w, n in options.filters)
    f = options.n_filters
    dense = len(types) * 2 * (options.n_highway * 2 * f * f + f * p)
    sampled = cfg.num_sampled + 1
    softmax = 2 * tokens * 2 * p * sampled
    return 3.0 * (lstm + cnn + dense + softmax)


def gemm_gflops(trainer: Trainer, seconds: float = 2.0) -> float:
    cfg, options = trainer.cfg, trainer.options
    m = cfg.batch_size * cfg.unroll_steps
    a = torch.randn(2, m, options.projection_dim)
    b = torch.randn(2, options.projection_dim, 4 * options.lstm_dim)
    torch.bmm(a, b)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        torch.bmm(a, b)
        n += 1
    return n * 2 * 2 * m * options.projection_dim * 4 * options.lstm_dim / (time.perf_counter() - start) / 1e9


def compare(cfg: PretrainConfig, corpus, steps: int, threads: int, layout: str) -> dict:
    """Both steps on ``threads`` cores: the baseline with torch's intra-op threads; the fast step either the same
    way (``layout="intra"``) or with one intra-op thread and each LM direction's recurrence on its own core
    (``layout="directions"``, needs threads == 2)."""
    fast_threads, direction_threads = (threads, 1) if layout == "intra" or threads == 1 else (1, 2)
    fast = Trainer(dataclasses.replace(cfg, direction_threads=direction_threads), corpus=corpus, device="cpu")
    baseline = Trainer(cfg, corpus=corpus, device="cpu")
    baseline.model.load_state_dict(fast.model.state_dict())
    batches = [fast.batcher.next_batch() for _ in range(steps + 2)]
    times = {"fast": 0.0, "baseline": 0.0}
    flops = 0.0
    for index, (inputs, targets) in enumerate(batches):
        for name, trainer in (("baseline", baseline), ("fast", fast)):
            trainer.batcher.next_batch = lambda batch=(inputs, targets): batch  # the same windows for both
            torch.set_num_threads(fast_threads if name == "fast" else threads)
            set_direction_threads(direction_threads if name == "fast" else 1)
            start = time.perf_counter()
            if name == "fast":
                trainer.train_step()
            else:
                reference_step(trainer, inputs, targets)
            if index >= 2:  # two warm-up steps
                times[name] += time.perf_counter() - start
        if index >= 2:
            flops += step_flops(fast, inputs)
    tokens = steps * cfg.batch_size * cfg.unroll_steps
    rate, base = tokens / times["fast"], tokens / times["baseline"]
    torch.set_num_threads(threads)
    return {"fast_layout": {"intra_op_threads": fast_threads, "direction_threads": direction_threads},
            "tokens_per_s": round(rate, 1), "baseline_tokens_per_s": round(base, 1),
            "speedup": round(rate / base, 2), "gflops": round(flops / times["fast"] / 1e9, 2),
            "gemm_gflops": round(gemm_gflops(fast), 2)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(REPO / "conf/pretrain/default.yaml"))
    parser.add_argument("--corpus", help="one tokenised sentence a line (default: an invented 3000-sentence text)")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2, help="intra-op threads (default: both cores)")
    parser.add_argument("--layout", choices=["directions", "intra"], default="intra",
                        help="how the fast step uses the cores: torch's intra-op threads (default, as the baseline) or "
                             "one thread per LM direction (measured slower here: 2,489 vs 3,498 tok/s)")
    parser.add_argument("--compare-baseline", action="store_true",
                        help="time the pre-v2 reference step against the fast step on the same batches")
    parser.add_argument("variants", nargs="*", help="JSON overrides, e.g. '{\"lstm_dim\": 256, \"num_sampled\": 512}'")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    base = PretrainConfig.of(load_config(Path(args.config))).mapping()
    with tempfile.TemporaryDirectory() as tmp:
        corpus_path = args.corpus
        if corpus_path is None:
            corpus_path = str(Path(tmp) / "corpus.txt")
            invented_corpus(Path(corpus_path))
        corpus = load_corpus([corpus_path], min_count=base["min_count"], max_vocab=base["max_vocab"])
        for spec in args.variants or ["{}"]:
            over = json.loads(spec)
            cfg = copy.deepcopy(base)
            for key, value in over.items():
                (cfg["model"] if key in cfg["model"] else cfg)[key] = value
            cfg.update(out_dir=str(Path(tmp) / "out"), max_tokens=10**12, threads=args.threads)
            cfg = PretrainConfig.of(cfg)
            if args.compare_baseline:
                result = compare(cfg, corpus, args.steps, args.threads, args.layout)
                print(json.dumps({"variant": over, "threads": args.threads, "batch_size": cfg.batch_size,
                                  **result}), flush=True)
                continue
            trainer = Trainer(cfg, corpus=corpus, device="cpu")
            for _ in range(2):
                trainer.train_step()
            start = time.perf_counter()
            for _ in range(args.steps):
                trainer.train_step()
            seconds = time.perf_counter() - start
            tokens = args.steps * cfg.batch_size * cfg.unroll_steps
            params = sum(p.numel() for p in trainer.model.parameters())
            print(json.dumps({"variant": over, "tokens_per_s": round(tokens / seconds, 1), "params": params,
                              "vocab": len(corpus.vocab), "threads": args.threads}), flush=True)
        if args.compare_baseline:  # the contract: the last line is exactly these five keys
            print(json.dumps({k: result[k] for k in
                              ("tokens_per_s", "baseline_tokens_per_s", "speedup", "gflops", "gemm_gflops")}))


if __name__ == "__main__":
    main()
