"""Scoring a lens on held-out sentences: per stream and sentence the sums of the gold token's negative
log-likelihood (bits), KL(final ‖ lens) (bits), top-1 correct against the gold token and against the final
layer's top-1, and the predictions counted; then each number with a paired bootstrap 95% interval over sentences
(one set of resamples for every lens, layer and direction, so that their intervals are paired).

Numbers a stream gets (``metrics.dev.<lens>/layer_<k>_<direction>_<m>``): ``bits`` (mean bits per prediction of
the gold token), ``ppl`` (2 ** bits), ``kl`` (mean KL to the final layer, bits), ``top1`` (% of predictions whose
argmax is the gold token), ``agree`` (% whose argmax is the final layer's), each but ``ppl`` with ``_lo`` and
``_hi``: the 2.5th and 97.5th percentiles of the ratio of sums over resampled sentences."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import torch

from .tuned import batches

#: the per-sentence columns: gold NLL (bits), KL (bits), top-1 gold, top-1 final, predictions
COLUMNS = ("bits", "kl", "top1", "agree", "count")
#: column → the scale of the reported mean (top-1 and agreement in %)
SCALES = {"bits": 1.0, "kl": 1.0, "top1": 100.0, "agree": 100.0}
LN2 = math.log(2.0)


def _per_sentence(values: torch.Tensor, rows: torch.Tensor, size: int) -> torch.Tensor:
    """Sums of ``values`` (positions, columns) per batch row."""
    out = torch.zeros(size, values.shape[1], dtype=torch.float64, device=values.device)
    return out.index_add_(0, rows, values.double())


@torch.no_grad()
def score(readout: Any, lenses: dict[str, Any], sentences: Sequence[Sequence[str]], layers: Sequence[int],
          batch_size: int) -> tuple[dict[tuple[str, int, str], np.ndarray], list[list[str]]]:
    """Per (lens, layer, direction) a (sentences, 5) array of COLUMNS' sums (``lenses``: name → translators, None
    for the logit lens), and the sentences in the order of its rows (sorted by length)."""
    parts: dict[tuple[str, int, str], list[np.ndarray]] = {}
    ordered: list[list[str]] = []
    for batch in batches(sentences, batch_size):
        ordered.extend(batch)
        streams = readout.streams(batch, sorted({*layers, readout.top}))
        for direction in readout.directions:
            final = readout.logits(streams.hidden[(readout.top, direction)], readout.top).log_softmax(-1)
            final_top, gold = final.argmax(-1), streams.gold[direction]
            probs = final.exp()
            own = (probs * final).sum(-1)                  # KL(final ‖ lens) = Σ p log p − Σ p log q
            for name, translators in lenses.items():
                for layer in layers:
                    hidden = streams.hidden[(layer, direction)]
                    if translators is not None:
                        hidden = translators(hidden, layer, direction)
                    logp = readout.logits(hidden, layer).log_softmax(-1)
                    top = logp.argmax(-1)
                    values = torch.stack([-logp.gather(-1, gold.unsqueeze(-1)).squeeze(-1) / LN2,
                                          (own - (probs * logp).sum(-1)) / LN2, (top == gold).float(),
                                          (top == final_top).float(), torch.ones_like(top, dtype=torch.float)], 1)
                    sums = _per_sentence(values, streams.row[direction], len(batch))
                    parts.setdefault((name, layer, direction), []).append(sums.cpu().numpy())
    return {key: np.concatenate(chunks) for key, chunks in parts.items()}, ordered


def resample_weights(sentences: int, resamples: int, seed: int) -> np.ndarray:
    """(resamples, sentences): how often each sentence is drawn in each bootstrap resample (with replacement)."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, sentences, size=(resamples, sentences))
    weights = np.zeros((resamples, sentences))
    np.add.at(weights, (np.arange(resamples)[:, None], picks), 1.0)
    return weights


def stream_row(sums: np.ndarray, weights: np.ndarray) -> dict[str, float]:
    """One stream's numbers (see the module docstring) from its per-sentence sums and the shared resamples."""
    total = sums.sum(0)
    resampled = weights @ sums                                           # (resamples, columns)
    count = np.maximum(resampled[:, -1], 1.0)
    row: dict[str, float] = {}
    for column, scale in SCALES.items():
        at = COLUMNS.index(column)
        row[column] = float(scale * total[at] / max(total[-1], 1.0))
        low, high = np.percentile(scale * resampled[:, at] / count, [2.5, 97.5])
        row[f"{column}_lo"], row[f"{column}_hi"] = float(low), float(high)
        if column == "bits":
            row["ppl"] = float(2.0 ** row["bits"])
    return row


def rows(scored: dict[tuple[str, int, str], np.ndarray], weights: np.ndarray) -> dict[str, dict[str, float]]:
    """``<lens>/layer_<k>_<direction>`` → its numbers, for every scored stream."""
    return {f"{name}/layer_{layer}_{direction}": stream_row(sums, weights)
            for (name, layer, direction), sums in scored.items()}
