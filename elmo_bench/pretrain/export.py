"""Export a trained LM as the framework loads a biLM: ``options.json`` + ``weights.hdf5`` (bilm-tf layout) +
``vocab.txt``. The softmax travels in the weights file as extra datasets ``softmax/W`` (vocab, proj) and
``softmax/b`` (vocab,), the unigram reference counts as ``unigram/counts`` (vocab,); loaders that do not know
them (ours, AllenNLP's) ignore them. ``weights.sha256`` (elmo_bench.bilm.checksums) records the files' hashes.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from elmo_bench.base import checkpoints
from elmo_bench.bilm.chars import BOS_TOKEN, EOS_TOKEN, word_to_ids
from elmo_bench.bilm.checksums import write_checksums
from elmo_bench.bilm.weights import save_bilm
from elmo_bench.pretrain.language_model import LanguageModel, make_options, training_extra
from elmo_bench.pretrain.pretrain_config import PretrainConfig
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


def export_checkpoint(checkpoint: str | Path, cfg: PretrainConfig, out_dir: str | Path) -> dict[str, Path]:
    """Export the model of a training checkpoint (e.g. a run stopped before its budget). A checkpoint holds no
    config (weights, optimizer, RNG, data position, vocabulary): the architecture and the training keys that
    options.json records come from ``cfg``, the run's composed config."""
    payload = checkpoints.load(checkpoint, "cpu")
    tokens = payload["vocab"]
    options = make_options(cfg.model, training_extra(cfg, len(tokens)))
    model = LanguageModel(options, len(tokens), cfg.num_sampled)
    model.load_state_dict(payload["model"])
    counts = payload.get("vocab_counts")  # absent in the first checkpoints
    return export_lm(model, Vocab(tokens, counts), out_dir)


CHECK_SENTENCES = [["The", "old", "man", "looked", "at", "the", "river", "."],
                   ["She", "put", "her", "money", "in", "the", "bank", "on", "Monday", "."],
                   ["Unfamiliarly-spelled", "tokens", "go", "through", "the", "character", "CNN", "!"]]


@torch.no_grad()
def window_activations(model: LanguageModel, sentence: list[str]) -> np.ndarray:
    """The top LSTM layer of the *training* graph (time-major windows, hand-written LSTM, reversed backward
    stream) for ``<S> sentence </S>`` from a zero state: (time + 2, 2 * projection_dim) as ``[forward ; backward]``
    in token order, for comparison with what the exported biLM computes on the inference path."""
    was_training = model.training
    model.eval()
    stream = [BOS_TOKEN, *sentence, EOS_TOKEN]
    chars = torch.tensor([word_to_ids(w) for w in stream], dtype=torch.long)  # one "type" per position
    n = len(stream)
    inverse = torch.stack([torch.arange(n), torch.arange(n - 1, -1, -1)]).unsqueeze(1)  # (2, 1, n)
    x = model.bilm.token_encoder.encode_words(chars)[inverse.transpose(1, 2)]  # (2, n, 1, proj)
    state = model.zero_state(1)
    for k, layer in enumerate(model.bilm.lstm.layers):
        out, _ = layer.forward_window(x, state[k])
        x = out + x if k > 0 and model.bilm.options.use_skip_connections else out
    model.train(was_training)
    forward, backward = x[0, :, 0], x[1, :, 0].flip(0)  # the backward stream ran reversed
    return torch.cat([forward, backward], dim=-1).numpy()


def write_activation_check(model: LanguageModel, target: str | Path) -> None:
    """``activation_check.json``: the training graph's top layer on :data:`CHECK_SENTENCES`, which the exported
    model must reproduce (tests/test_shipped_bilms.py)."""
    import json

    rows = [{"tokens": s, "top_layer": np.round(window_activations(model, s), 7).tolist()} for s in CHECK_SENTENCES]
    Path(target).write_text(json.dumps({"sentences": rows}) + "\n")
