"""Export a trained LM as the framework loads a biLM: ``options.json`` + ``weights.hdf5`` (bilm-tf layout) +
``vocab.txt``. The softmax travels in the weights file as extra datasets ``softmax/W`` (vocab, proj) and
``softmax/b`` (vocab,), the unigram reference counts as ``unigram/counts`` (vocab,); loaders that do not know
them (ours, AllenNLP's) ignore them. ``weights.sha256`` (elmo_bench.bilm.integrity) records the files' hashes.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from elmo_bench.bilm.integrity import write_checksums
from elmo_bench.bilm.weights import save_bilm
from elmo_bench.pretrain.model import LanguageModel
from elmo_bench.pretrain.vocab import Vocab


def export_lm(model: LanguageModel, vocab: Vocab, out_dir: str | Path) -> dict[str, Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    extra = {
        "softmax/W": model.softmax.weight.detach().cpu().numpy().astype(np.float32),
        "softmax/b": model.softmax.bias.detach().cpu().numpy().astype(np.float32),
    }
    if vocab.counts is not None:
        extra["unigram/counts"] = np.asarray(vocab.counts, dtype=np.int64)
    paths = {"options": out / "options.json", "weights": out / "weights.hdf5", "vocab": out / "vocab.txt"}
    save_bilm(model.bilm, paths["options"], paths["weights"], extra_datasets=extra)
    vocab.save(paths["vocab"])
    write_checksums(out)  # weights.sha256: load_bilm refuses a later corrupt or half-replaced copy
    return paths


def export_checkpoint(checkpoint: str | Path, cfg: dict, out_dir: str | Path) -> dict[str, Path]:
    """Export the model of a training checkpoint (e.g. a run stopped before its budget)."""
    from elmo_bench.pretrain.model import make_options
    from elmo_bench.pretrain.train import training_extra

    payload = torch.load(checkpoint, map_location="cpu", weights_only=True)
    tokens = payload["vocab"]
    options = make_options(cfg["model"], training_extra(cfg, len(tokens)))
    model = LanguageModel(options, len(tokens), cfg.get("num_sampled"))
    model.load_state_dict(payload["model"])
    counts = payload.get("vocab_counts")
    return export_lm(model, Vocab(tokens, counts), out_dir)
