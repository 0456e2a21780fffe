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

An encoder that keeps some of a model's layers (``encoder.layers=every:4``: 0, 4, 8, ..., the last; issue 46) gives
its layers l_0, l_1, ..., l_n in its order: the cumulative probes are prefixes in that order, Δ(l_i) = F(l_0..l_i) −
F(l_0..l_{i−1}), and both depths weigh the model's layer numbers l_i, never the positions i (``layers`` below;
without it the layers are 0..L).
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence


def differential_scores(cumulative: Sequence[float]) -> list[float]:
    """[F(0..0), F(0..1), ..., F(0..L)] → [Δ(1), ..., Δ(L)]."""
    return [cumulative[l] - cumulative[l - 1] for l in range(1, len(cumulative))]


def _numbers(layers: Sequence[int] | None, count: int, first: int, what: str) -> list[int]:
    """The model's layer number of each of ``count`` values: ``layers``, else first, first+1, ..."""
    if layers is None:
        return list(range(first, first + count))
    if len(layers) != count:
        raise ValueError(f"{what}: {count} values for {len(layers)} layers {list(layers)}")
    return [int(l) for l in layers]


def expected_layer(deltas: Sequence[float], layers: Sequence[int] | None = None) -> float | None:
    """Σ l·Δ(l) / Σ Δ(l) (``deltas[0]`` is Δ(1), or Δ(layers[0]): ``layers`` are the model's numbers of the layers the
    deltas belong to, the cumulative's first layer excluded); None when Σ Δ(l) <= 0 (no gain to place)."""
    numbers = _numbers(layers, len(deltas), 1, "expected layer")
    total = sum(deltas)
    if not total > 0:
        return None
    return sum(l * d for l, d in zip(numbers, deltas)) / total


def softmax(scalars: Sequence[float]) -> list[float]:
    top = max(scalars)
    exps = [math.exp(s - top) for s in scalars]
    return [e / sum(exps) for e in exps]


def centre_of_gravity(weights: Sequence[float], layers: Sequence[int] | None = None) -> float:
    """Σ l·w_l of normalised mix weights (softmax(s), as results.json records them) over l = 0..L, or over the
    model's layer numbers ``layers`` of the mix's inputs in its order (a mix over ``encoder.layers``)."""
    numbers = _numbers(layers, len(weights), 0, "centre of gravity")
    total = sum(weights)
    if not math.isclose(total, 1.0, abs_tol=1e-4) or any(w < 0 for w in weights):
        raise ValueError(f"mix weights must be a distribution (non-negative, sum 1), found {list(weights)}")
    return sum(l * w for l, w in zip(numbers, weights)) / total


def mean_sd(values: Sequence[float]) -> tuple[float, float | None]:
    """Mean and sample standard deviation (None for one value)."""
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, None
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def task_depth(cumulative: Mapping[int, float], single: Mapping[int, float],
               full_weights: Sequence[float] | None, layers: Sequence[int] | None = None) -> dict[str, object]:
    """One task row: ``cumulative[l]`` = F(l_0..l) for each layer l of the encoder (``layers``, the model's numbers
    in the encoder's order; default 0..L: l_0 lexical, the last the full mix), ``single[k]`` = layer k's F1.

    Returns lexical, full, gain (full − lexical), best single layer by its number (ties: the lower), Δ per layer
    after the first, the expected layer and the centre of gravity (None without the full mix's weights)."""
    numbers = list(layers) if layers is not None else list(range(max(cumulative) + 1))
    if sorted(cumulative) != sorted(numbers):
        raise ValueError(f"cumulative scores must cover layers {numbers} without a gap, found layers "
                         f"{sorted(cumulative)}")
    scores = [cumulative[l] for l in numbers]
    deltas = differential_scores(scores)
    best = min(single, key=lambda k: (-single[k], k)) if single else None
    return {"lexical": scores[0], "full": scores[-1], "gain": scores[-1] - scores[0], "best_layer": best,
            "deltas": deltas, "expected_layer": expected_layer(deltas, numbers[1:]),
            "centre_of_gravity": centre_of_gravity(full_weights, numbers) if full_weights is not None else None}
