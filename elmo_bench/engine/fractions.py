"""Training-data fractions for sample-efficiency sweeps, nested by seed.

For a given seed the training examples are permuted once and a fraction f takes the first ceil(f * n) of that
permutation, so every smaller fraction is a subset of every larger one (paper Figure 1 compares like with like).
"""
from __future__ import annotations

import math
from typing import Sequence, TypeVar

import numpy as np

T = TypeVar("T")


def nested_subset(items: Sequence[T], fraction: float, seed: int) -> list[T]:
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"data.fraction expected a number in (0, 1], found {fraction}")
    if fraction == 1.0:
        return list(items)
    order = np.random.default_rng(seed).permutation(len(items))
    keep = max(1, math.ceil(fraction * len(items)))
    return [items[i] for i in sorted(order[:keep])]


def scaled_epochs(max_epochs: int, fraction: float, scale: bool, cap: int = 50) -> int:
    """More epochs for small fractions (about the same number of updates), capped; unchanged when not scaling."""
    if not scale or fraction >= 1.0:
        return max_epochs
    return int(min(cap, math.ceil(max_epochs / math.sqrt(fraction))))
