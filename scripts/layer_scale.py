"""How large each biLM layer's token vectors are next to GloVe's: the measurement behind each task's
`elmo.layer_norm` / `mix.gamma_init` choice (issue 13). Prints one JSON object.

    python scripts/layer_scale.py [--sentences 500] [--options O --weights W] [--input FILE]

Default text: the first N sentences of CoNLL-2003 dev (eng.testa) under ../shared/data. Per layer: the mean token
L2 norm, the norm of the mean token (how far the layer sits from the origin: layer norm removes it) and the mean
per-dimension standard deviation; the same for the GloVe vectors of those tokens.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.bilm.default import DEFAULT_OPTIONS, DEFAULT_WEIGHTS
from elmo_bench.bilm.weights import load_bilm
from elmo_bench.data.conll2003 import read_conll
from elmo_bench.data.glove import load_glove, lookup

REPO = Path(__file__).resolve().parents[1]


def describe(vectors: np.ndarray) -> dict[str, float]:
    """(tokens, dim) → mean token norm, norm of the mean token, mean per-dimension std."""
    return {"mean_norm": float(np.linalg.norm(vectors, axis=1).mean()),
            "norm_of_mean": float(np.linalg.norm(vectors.mean(axis=0))),
            "mean_dim_std": float(vectors.std(axis=0).mean())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--options", default=str(DEFAULT_OPTIONS))
    parser.add_argument("--weights", default=str(DEFAULT_WEIGHTS))
    parser.add_argument("--input", default=str(REPO.parent / "shared/data/conll2003/eng.testa"))
    parser.add_argument("--sentences", type=int, default=500)
    args = parser.parse_args()
    torch.set_num_threads(1)
    sentences = [example["tokens"] for example in read_conll(args.input)[: args.sentences]]
    bilm = load_bilm(args.options, args.weights).eval()
    layers: list[list[np.ndarray]] = []
    with torch.no_grad():
        for start in range(0, len(sentences), 32):
            batch = sentences[start: start + 32]
            out = bilm(batch_to_ids(batch)).layers  # (batch, L+1, time, dim)
            if not layers:
                layers = [[] for _ in range(out.shape[1])]
            for j, sentence in enumerate(batch):
                for k in range(out.shape[1]):
                    layers[k].append(out[j, k, :len(sentence)].numpy())
    vectors, _ = load_glove({w for s in sentences for w in s})
    glove = [v for s in sentences for w in s if (v := lookup(vectors, w)) is not None]
    report = {"text": args.input, "sentences": len(sentences), "tokens": sum(map(len, sentences)),
              "bilm": args.weights,
              "layers": {f"layer_{k}": describe(np.concatenate(v)) for k, v in enumerate(layers)},
              "glove": {**describe(np.stack(glove)), "tokens_found": len(glove)}}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
