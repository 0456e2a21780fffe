"""Probe amnesic_lm: for each erased layer k of a trained biLM with its softmax, the in-model eraser that a
``probe=erasure`` run saved (per stream, elmo_bench.encoders.erasing) is applied inside the LSTM stack and the LM
scored on the first ``probe.max_eval_sentences`` UD EWT dev sentences through the shared softmax, each sentence
``<S> w1 .. wn </S>`` from a zero state (forward and backward, n + 1 predictions each):

- ``none``: the biLM as trained; ``erased``: the fitted eraser; ``random``: ``probe.control`` (random: the same
  whitening and mean on a random orthonormal frame of the same rank; orth: amnesic probing's uniform random
  directions) under seeds 0 .. ``probe.seeds`` − 1, each number the mean over the seeds;
- perplexity = the mean of the forward and the backward LM's; KL = the mean over predictions of
  KL(p_none ‖ p_variant) in nats; top-1 = the share of predictions whose argmax is the gold word (%);
- ``p``: one-sided paired bootstrap over dev sentences of "erasing the concept costs more log-likelihood than the
  random control" (p = (1 + #resamples where it does not) / (1 + resamples));
- only layers k and above are recomputed per variant (BiLstmStack's memo; the character CNN runs once per batch).

Recorded (task ``amnesic_lm_probe``): ``metrics.dev.layer_<k>_ppl_none``, ``_ppl_erased``, ``_ppl_random``,
``_kl_erased``, ``_kl_random``, ``_p``, ``_top1_none``, ``_top1_erased``, ``_top1_random``, ``_share_erased`` and
``_share_random`` (the share of the layer's variance each eraser removes, mean over streams).
"""
from __future__ import annotations

import logging
from typing import Any

import numpy as np
import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.bilm.lm_head import LmHead, head_for
from elmo_bench.bilm.model import add_sentence_boundaries
from elmo_bench.encoders.erasing import load_in_model, stream_widths
from elmo_bench.encoders.protocol import cache_id
from elmo_bench.probe.amnesic_lm.config import AmnesicLmSettings
from elmo_bench.probe.api import ProbeContext, ProbeOutcome
from elmo_bench.probe.lib.ud_data import read_tagged
from elmo_bench.probe.settings import UD_EWT

log = logging.getLogger(__name__)
WHAT = "probe amnesic_lm"


def variants(context: ProbeContext, settings: AmnesicLmSettings, k: int) -> list[tuple[str, Any]]:
    """[("none", None), ("erased", eraser), ("random/<seed>", control) ...] for layer k, from probe.erasers."""
    widths = stream_widths(context.encoder, k)
    spec = {"concept": settings.tags, "layer": k, "path": str(settings.erasers)}
    erased = load_in_model({**spec, "control": "none", "seed": 0}, cache_id(context.encoder), widths)
    drawn = [(f"random/{seed}", load_in_model({**spec, "control": settings.control, "seed": seed},
                                              cache_id(context.encoder), widths)) for seed in range(settings.seeds)]
    return [("none", None), ("erased", erased), *drawn]


@torch.no_grad()
def score_batch(bilm: Any, head: LmHead, batch: list[list[str]], chosen: list[tuple[str, Any]],
                device: Any) -> dict[str, np.ndarray]:
    """Per variant (2, 3, batch): summed NLL (nats), correct top-1 and summed KL to ``none`` per direction and
    sentence; the LSTM layers below the erased one are computed once (the stack's memo)."""
    chars, lengths = add_sentence_boundaries(batch_to_ids(batch).to(device))
    tokens = bilm.token_encoder(chars)
    time = chars.shape[1]
    targets = head.targets(batch, time).to(device)
    gold = torch.stack([targets[:, 1:], targets[:, :-1]])                       # (2, batch, time − 1)
    valid = (torch.arange(time - 1, device=device) < (lengths - 1).unsqueeze(1)).to(torch.float64)
    memo: dict[int, Any] = {}
    reference, out = None, {}
    try:
        for name, eraser in chosen:
            bilm.lstm.eraser = eraser
            logp = head.log_probs(bilm.lstm(tokens, lengths, memo=memo)[0][-1])
            reference = logp if reference is None else reference
            nll = -logp.gather(-1, gold.unsqueeze(-1)).squeeze(-1).double()
            correct = (logp.argmax(-1) == gold).double()
            kl = (reference.exp() * (reference - logp)).sum(-1).double()
            out[name] = torch.stack([(m * valid).sum(-1) for m in (nll, correct, kl)], dim=1).cpu().numpy()
    finally:
        bilm.lstm.eraser = None
    return out


def bootstrap_p(gap: np.ndarray, counts: np.ndarray, resamples: int, seed: int) -> float:
    """One-sided paired bootstrap over sentences: the share (add-one) of resamples in which the per-prediction NLL
    gap (erased − random, summed per sentence in ``gap``; ``counts`` predictions each) is not above 0."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(gap), size=(resamples, len(gap)))
    statistic = gap[picks].sum(1) / counts[picks].sum(1)
    return float((1 + (statistic <= 0).sum()) / (1 + resamples))


def layer_row(k: int, scored: dict[str, np.ndarray], predictions: int, chosen: list[tuple[str, Any]],
              settings: AmnesicLmSettings, seed: int, counts: np.ndarray) -> dict[str, Any]:
    """Layer k's numbers from every variant's per-sentence sums ((2, 3, sentences): NLL, correct, KL)."""
    def ppl(name: str) -> list[float]:   # forward, backward
        return [float(np.exp(scored[name][d, 0].sum() / predictions)) for d in (0, 1)]

    def measures(name: str) -> dict[str, float]:
        return {"ppl": float(np.mean(ppl(name))), "kl": float(scored[name][:, 2].sum() / (2 * predictions)),
                "top1": float(100.0 * scored[name][:, 1].sum() / (2 * predictions))}

    drawn = [name for name, _ in chosen if name.startswith("random/")]
    rows = {name: measures(name) for name, _ in chosen}
    random = {m: float(np.mean([rows[name][m] for name in drawn])) for m in ("ppl", "kl", "top1")}
    gap = scored["erased"][:, 0].sum(0) - np.mean([scored[name][:, 0].sum(0) for name in drawn], axis=0)
    erased, first = chosen[1][1], chosen[2][1]
    flat = {**{f"{m}_{v}": value for v in ("none", "erased") for m, value in rows[v].items()
               if (m, v) != ("kl", "none")},
            **{f"{m}_random": value for m, value in random.items()},
            "p": bootstrap_p(gap, counts, settings.bootstrap, seed),
            "share_erased": float(np.mean(erased.shares["applied"])),
            "share_random": float(np.mean([c.shares["applied"] for _, c in chosen[2:]]))}
    printed = {"forward_backward_ppl": {name: ppl(name) for name, _ in chosen}, "rank": erased.rank(),
               "random_rank": first.rank(), "variance_share": {"erased": erased.shares["applied"],
                                                               "random": [c.shares["applied"] for _, c in chosen[2:]]},
               **{name: rows[name] for name, _ in chosen}}
    return {"flat": flat, "printed": printed}


def run(context: ProbeContext) -> ProbeOutcome:
    """Probe amnesic_lm on ``context``'s biLM (see the module docstring)."""
    settings: AmnesicLmSettings = context.settings
    head = head_for(context.encoder, WHAT)
    if getattr(context.encoder, "erased", None) is not None:
        raise ConfigError(f"{WHAT}: erases inside the biLM itself (probe.erasers); leave encoder.erase off")
    head.weight, head.bias = head.weight.to(context.device), head.bias.to(context.device)
    read_ = read_tagged(context.data_dir(settings.data_dir, UD_EWT), "upos", 1, settings.max_eval_sentences)
    dev = sorted((ex["tokens"] for ex in read_.splits["dev"]), key=len)
    counts = np.array([len(s) + 1 for s in dev], dtype=np.float64)
    rows = {}
    for _, k in context.probed_layers(settings.layers):
        chosen = variants(context, settings, k)
        parts = [score_batch(context.encoder.bilm, head, dev[i: i + settings.batch_size], chosen, context.device)
                 for i in range(0, len(dev), settings.batch_size)]
        scored = {name: np.concatenate([p[name] for p in parts], axis=-1) for name, _ in chosen}
        rows[k] = layer_row(k, scored, int(counts.sum()), chosen, settings, context.seed, counts)
        log.info("amnesic_lm: layer %d %s", k, rows[k]["flat"])
    metrics = {"dev": {f"layer_{k}_{key}": value for k, row in rows.items() for key, value in row["flat"].items()}}
    printed = {"data": "ud_ewt", "tags": settings.tags, "dev_sentences": len(dev), "predictions": 2 * int(
        counts.sum()), "control": settings.control, "seeds": settings.seeds,
        "layers": {f"layer_{k}": {**row["flat"], **row["printed"]} for k, row in rows.items()}}
    block = {"name": "ud_ewt", "fraction": 1.0, "dev_sentences": len(dev), "tags": settings.tags,
             "split_overlap": read_.overlap}
    return ProbeOutcome(printed, metrics, f"layer_{next(iter(rows))}_ppl_erased", block)
