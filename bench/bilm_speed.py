"""biLM speed and memory against torch.nn.LSTM(proj_size=...) of the same sizes, measured in one run.

Random weights in the bilm-tf layout for the public "small" and "original" ELMo architectures; 32 sentences of
~25 tokens. The reference is the LSTM part done by PyTorch's own kernel (two unidirectional ``nn.LSTM`` stacks
with ``proj_size``, no clipping, no residuals) on the same token-layer output: the practical limit for our
clipped, residual LSTM. Prints one JSON line per architecture.

    python bench/bilm_speed.py [--repeats 3] [--threads 2]
"""
from __future__ import annotations

import argparse
import json
import random
import resource
import tempfile
import time
from pathlib import Path

import torch

from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.bilm.model import BiLM, add_sentence_boundaries
from elmo_bench.bilm.options import BiLMOptions
from elmo_bench.bilm.weights import load_bilm, save_bilm

ARCHITECTURES = {
    "small": dict(filters=[[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]], n_highway=1,
                  dim=1024, projection_dim=128),
    "original": dict(filters=[[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]], n_highway=2,
                     dim=4096, projection_dim=512),
}


def options_for(arch: dict) -> dict:
    return {
        "char_cnn": {"filters": arch["filters"], "n_highway": arch["n_highway"], "embedding": {"dim": 16},
                     "n_characters": 262, "max_characters_per_token": 50, "activation": "relu"},
        "lstm": {"n_layers": 2, "dim": arch["dim"], "projection_dim": arch["projection_dim"], "cell_clip": 3,
                 "proj_clip": 3, "use_skip_connections": True},
    }


def sentences(n: int = 32, mean_length: int = 25, seed: int = 0) -> list[list[str]]:
    rng = random.Random(seed)
    words = ["the", "of", "market", "investors", "said", "Tuesday", "company's", "shares", "rose", "3.5", "%",
             "analysts", "expected", ",", ".", "billion", "quarter", "profit", "New", "York", "chairman"]
    return [[rng.choice(words) + ("" if rng.random() < 0.7 else str(rng.randint(0, 99)))
             for _ in range(rng.randint(mean_length - 5, mean_length + 5))] for _ in range(n)]


def timed(fn, repeats: int) -> float:
    fn()  # warm-up (also fills the token-type cache, as in a real sweep)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def bench(name: str, repeats: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        random_model = BiLM(BiLMOptions.from_dict(options_for(ARCHITECTURES[name])))
        save_bilm(random_model, Path(tmp) / "options.json", Path(tmp) / "weights.hdf5")
        model = load_bilm(Path(tmp) / "options.json", Path(tmp) / "weights.hdf5")
    o = model.options
    batch = sentences()
    ids = batch_to_ids(batch)
    n_tokens = sum(len(s) for s in batch)
    with_bounds, lengths = add_sentence_boundaries(ids)
    with torch.no_grad():
        tokens = model.token_encoder(with_bounds)
    reference = [torch.nn.LSTM(o.projection_dim, o.lstm_dim, num_layers=o.n_layers, proj_size=o.projection_dim,
                               batch_first=True).eval() for _ in range(2)]
    packed = torch.nn.utils.rnn.pack_padded_sequence(tokens, lengths, batch_first=True, enforce_sorted=False)

    def ours_lstm():
        with torch.no_grad():
            model.lstm(tokens, lengths)

    def torch_lstm():
        with torch.no_grad():
            for lstm in reference:  # forward and backward stacks (same work; direction does not change the cost)
                lstm(packed)

    def ours_full():
        with torch.no_grad():
            model(ids)

    t_ours, t_ref, t_full = timed(ours_lstm, repeats), timed(torch_lstm, repeats), timed(ours_full, repeats)
    return {
        "architecture": name, "lstm_dim": o.lstm_dim, "projection_dim": o.projection_dim, "sentences": len(batch),
        "tokens": n_tokens, "threads": torch.get_num_threads(),
        "ours_full_tokens_per_s": round(n_tokens / t_full, 1),
        "ours_lstm_s": round(t_ours, 4), "torch_nn_lstm_s": round(t_ref, 4),
        "lstm_time_ratio_ours_over_torch": round(t_ours / t_ref, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--arch", nargs="*", default=list(ARCHITECTURES))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for name in args.arch:
        print(json.dumps(bench(name, args.repeats)), flush=True)


if __name__ == "__main__":
    main()
