"""Where in an encoder an edge-probing task is solved (Tenney, Das & Pavlick 2019), from dev scores and mix weights.

With layers 0..L and F(0..l) the dev F1 of the cumulative probe over layers 0..l (F(0..0) = the lexical run,
F(0..L) = the full mix):

* differential score Δ(l) = F(0..l) − F(0..l−1), l = 1..L, unclamped (a layer may hurt);
* expected layer Σ_{l=1..L} l·Δ(l) / Σ_{l=1..L} Δ(l): the layer at which the gain over the lexical layer arrives on
  average; undefined (None) when the total gain Σ Δ(l) = F(0..L) − F(0..0) is not positive;
* centre of gravity Σ_{l=0..L} l·w_l with w = softmax(s) the full mix's weights: where the learned mix looks.

Both lie in [0, L] (the expected layer in [1, L] when every Δ is >= 0); with L = 2 (the shipped biLM) the expected
layer is 1 + Δ(2) / (Δ(1) + Δ(2)): one number between two layers, little resolution. Pure functions over numbers:
the report feeds them what the run records hold (results.json's dev scores and ``elmo_weights``).
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence


def differential_scores(cumulative: Sequence[float]) -> list[float]:
    """[F(0..0), F(0..1), ..., F(0..L)] → [Δ(1), ..., Δ(L)]."""
    return [cumulative[l] - cumulative[l - 1] for l in range(1, len(cumulative))]


def expected_layer(deltas: Sequence[float]) -> float | None:
    """Σ l·Δ(l) / Σ Δ(l) over l = 1..L (``deltas[0]`` is Δ(1)); None when Σ Δ(l) <= 0 (no gain to place)."""
    total = sum(deltas)
    if not total > 0:
        return None
    return sum(l * d for l, d in enumerate(deltas, start=1)) / total


def softmax(scalars: Sequence[float]) -> list[float]:
    top = max(scalars)
    exps = [math.exp(s - top) for s in scalars]
    return [e / sum(exps) for e in exps]


def centre_of_gravity(weights: Sequence[float]) -> float:
    """Σ l·w_l over l = 0..L of normalised mix weights (softmax(s), as results.json records them)."""
    total = sum(weights)
    if not math.isclose(total, 1.0, abs_tol=1e-4) or any(w < 0 for w in weights):
        raise ValueError(f"mix weights must be a distribution (non-negative, sum 1), found {list(weights)}")
    return sum(l * w for l, w in enumerate(weights)) / total


def mean_sd(values: Sequence[float]) -> tuple[float, float | None]:
    """Mean and sample standard deviation (None for one value)."""
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, None
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def task_depth(cumulative: Mapping[int, float], single: Mapping[int, float],
               full_weights: Sequence[float] | None) -> dict[str, object]:
    """One task row: ``cumulative[l]`` = F(0..l) for l = 0..L (0: lexical, L: full), ``single[k]`` = layer k's F1.

    Returns lexical, full, gain (full − lexical), best single layer (ties: the lower), Δ(1..L), the expected layer
    and the centre of gravity (None without the full mix's weights)."""
    top = max(cumulative)
    if sorted(cumulative) != list(range(top + 1)):
        raise ValueError(f"cumulative scores must cover layers 0..L without a gap, found layers {sorted(cumulative)}")
    scores = [cumulative[l] for l in range(top + 1)]
    deltas = differential_scores(scores)
    best = min(single, key=lambda k: (-single[k], k)) if single else None
    return {"lexical": scores[0], "full": scores[-1], "gain": scores[-1] - scores[0], "best_layer": best,
            "deltas": deltas, "expected_layer": expected_layer(deltas),
            "centre_of_gravity": centre_of_gravity(full_weights) if full_weights is not None else None}
