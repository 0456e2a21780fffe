"""Held-out perplexity of the forward LM, the backward LM, their average, and a unigram reference.

Every sentence is scored on its own from a zero LSTM state, as ``<S> w1 .. wn </S>``: the forward LM predicts
``w1 .. wn </S>`` and the backward LM ``wn .. w1 <S>`` (n + 1 predictions each, full softmax over the vocabulary,
out-of-vocabulary words scored as ``<UNK>``, as bilm-tf does). ``average`` is the arithmetic mean of the forward
and backward perplexities (the paper's "average forward and backward perplexity"). The unigram reference uses the
training-target counts stored with the model (add-one smoothed over the same vocabulary) on the same targets.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import h5py
import numpy as np
import torch
from torch.nn import functional as F

from elmo_bench.base.errors import DataError
from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.bilm.model import BiLM, add_sentence_boundaries
from elmo_bench.bilm.weights import load_bilm
from elmo_bench.pretrain.vocab import Vocab


@torch.no_grad()
def lm_log_likelihoods(bilm: BiLM, weight: torch.Tensor, bias: torch.Tensor, vocab: Vocab,
                       sentences: Sequence[Sequence[str]], batch_size: int = 64) -> tuple[float, float, int]:
    """Summed negative log-likelihood (nats) of the forward and the backward LM, and the number of predictions.

    Computes on the device of ``weight`` (the softmax); the biLM must be on the same device."""
    was_training = bilm.training
    bilm.eval()
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    forward_nll = backward_nll = 0.0
    count = 0
    for start in range(0, len(order), batch_size):
        batch = [list(sentences[i]) for i in order[start: start + batch_size]]
        chars, lengths = add_sentence_boundaries(batch_to_ids(batch).to(weight.device))
        tokens = bilm.token_encoder(chars)
        outputs, _ = bilm.lstm(tokens, lengths)
        top = outputs[-1]  # (batch, time, 2 * proj)
        p = top.shape[-1] // 2
        for row, sentence in enumerate(batch):
            ids = torch.tensor([vocab.bos, *vocab.encode(sentence), vocab.eos], device=weight.device)
            n = len(sentence) + 1
            fw = F.linear(top[row, :n, :p], weight, bias)
            bw = F.linear(top[row, 1: n + 1, p:], weight, bias)
            forward_nll += float(F.cross_entropy(fw, ids[1:], reduction="sum"))
            backward_nll += float(F.cross_entropy(bw, ids[:-1], reduction="sum"))
            count += n
    bilm.train(was_training)
    return forward_nll, backward_nll, count


def unigram_nll(counts: Sequence[int], vocab: Vocab, sentences: Sequence[Sequence[str]]) -> tuple[float, int]:
    """Add-one smoothed unigram NLL of the forward targets ``w1 .. wn </S>`` (the backward targets have the same
    unigram probability: ``<S>`` and ``</S>`` have equal counts)."""
    c = np.asarray(counts, dtype=np.float64) + 1.0
    logp = np.log(c / c.sum())
    total, n = 0.0, 0
    for sentence in sentences:
        ids = [*vocab.encode(sentence), vocab.eos]
        total -= float(logp[ids].sum())
        n += len(ids)
    return total, n


def evaluate(bilm: BiLM, weight: torch.Tensor, bias: torch.Tensor, vocab: Vocab, counts: Sequence[int] | None,
             sentences: Sequence[Sequence[str]]) -> dict[str, float]:
    if not sentences:
        raise DataError("perplexity: no held-out sentences")
    fw, bw, n = lm_log_likelihoods(bilm, weight, bias, vocab, sentences)
    out = {"forward": math.exp(fw / n), "backward": math.exp(bw / n)}
    out["average"] = (out["forward"] + out["backward"]) / 2
    out["unigram"] = math.exp(unigram_nll(counts, vocab, sentences)[0] / n) if counts is not None else None
    out["tokens"] = n
    return out


def load_lm(options: str | Path, weights: str | Path, vocab_path: str | Path
            ) -> tuple[BiLM, torch.Tensor, torch.Tensor, Vocab, list[int] | None]:
    """The exported biLM with its softmax (``softmax/W``, ``softmax/b``) and unigram counts (``unigram/counts``)."""
    bilm = load_bilm(options, weights)
    vocab = Vocab.load(vocab_path)
    with h5py.File(weights, "r") as handle:
        if "softmax/W" not in handle or "softmax/b" not in handle:
            raise DataError(f"{weights}: no softmax/W, softmax/b datasets; export the LM with elmo_bench.pretrain")
        weight = torch.from_numpy(handle["softmax/W"][...])
        bias = torch.from_numpy(handle["softmax/b"][...])
        counts = handle["unigram/counts"][...].tolist() if "unigram/counts" in handle else None
    if weight.shape[0] != len(vocab):
        raise DataError(f"{weights}: softmax/W has {weight.shape[0]} rows but {vocab_path} has {len(vocab)} tokens")
    for name, tensor in (("softmax/W", weight), ("softmax/b", bias)):
        if not torch.isfinite(tensor).all():
            raise DataError(f"{weights}: dataset '{name}' holds {int((~torch.isfinite(tensor)).sum())} NaN or infinite "
                            f"values; expected finite weights (the file is corrupt or training diverged)")
    return bilm, weight, bias, vocab, counts
