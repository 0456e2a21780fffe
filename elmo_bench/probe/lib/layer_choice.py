"""Which layer a probe likes best, and how sure: the best layer and a paired-bootstrap p-value against the runner-up.

Sentences are resampled with replacement (one resample shared by both layers: paired); the statistic is token
accuracy, best minus runner-up, over the resampled sentences (correct tokens / tokens, so long sentences weigh by
their length as in the accuracy itself). The p-value is one-sided after Berg-Kirkpatrick et al. (2012), the rule the
report's bootstraps use: the share of resampled differences at least twice the observed one, add-one smoothed.
With several seeds a sentence's correct count is the mean over seeds.
"""
from __future__ import annotations

import re
from typing import Mapping

import numpy as np

LAYER = re.compile(r"layer_(\d+)")


def _p_value(deltas: np.ndarray, observed: float) -> float:
    if observed <= 0:
        return 1.0
    return float((1 + np.sum(deltas >= 2 * observed)) / (len(deltas) + 1))


def paired_difference(best: np.ndarray, other: np.ndarray, tokens: np.ndarray, samples: int = 1000,
                      seed: int = 0) -> tuple[float, float]:
    """Correct tokens per sentence of two systems (sentences,) and tokens per sentence (sentences,) → (observed
    accuracy difference in points, p-value)."""
    diff = np.asarray(best, dtype=np.float64) - np.asarray(other, dtype=np.float64)
    tokens = np.asarray(tokens, dtype=np.float64)
    if diff.shape != tokens.shape or diff.size == 0 or tokens.sum() <= 0:
        raise ValueError(f"paired bootstrap: need equal, non-empty sentence sets, got {diff.shape} and {tokens.shape}")
    observed = 100.0 * diff.sum() / tokens.sum()
    rng = np.random.default_rng(seed)
    deltas = np.empty(samples)
    for start in range(0, samples, 256):
        stop = min(samples, start + 256)
        index = rng.integers(0, diff.size, size=(stop - start, diff.size))
        deltas[start:stop] = 100.0 * diff[index].sum(axis=1) / tokens[index].sum(axis=1)
    return float(observed), _p_value(deltas, observed)


def best_layer(correct: Mapping[str, np.ndarray], tokens: np.ndarray, split: str = "test", samples: int = 1000,
               seed: int = 0) -> dict | None:
    """``correct``: {row: (seeds, sentences) correct tokens}; only ``layer_<k>`` rows compete. Returns {"split",
    "best", "runner_up", "best_accuracy", "runner_up_accuracy", "difference", "p_value", "samples"}, None with
    fewer than two layers."""
    rows = {row: np.atleast_2d(np.asarray(c, dtype=np.float64)).mean(axis=0)
            for row, c in correct.items() if LAYER.fullmatch(row)}
    if len(rows) < 2:
        return None
    total = float(np.sum(tokens))
    accuracy = {row: 100.0 * c.sum() / total for row, c in rows.items()}
    ranked = sorted(rows, key=lambda r: (-accuracy[r], int(LAYER.fullmatch(r).group(1))))
    first, second = ranked[0], ranked[1]
    difference, p = paired_difference(rows[first], rows[second], tokens, samples, seed)
    return {"split": split, "best": first, "runner_up": second, "best_accuracy": accuracy[first],
            "runner_up_accuracy": accuracy[second], "difference": difference, "p_value": p, "samples": samples}
