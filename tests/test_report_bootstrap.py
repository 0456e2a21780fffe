"""Paired bootstrap: a planted difference gives a small p, none gives a large one; both metric paths agree."""
from __future__ import annotations

import numpy as np
import pytest

from elmo_bench.report.bootstrap import paired_bootstrap, paired_bootstrap_metric


def _correct(rate: float, n: int, seed: int) -> np.ndarray:
    """(n,) 0/100 per-example scores with exactly ``rate`` of them right, shuffled."""
    scores = np.zeros(n)
    scores[: int(rate * n)] = 100.0
    return np.random.default_rng(seed).permutation(scores)


def test_planted_difference_gives_small_p():
    base, elmo = _correct(0.6, 400, 1), _correct(0.75, 400, 2)
    observed, p = paired_bootstrap(elmo[None], base[None], samples=2000)
    assert observed == pytest.approx(15.0)
    assert p < 0.01


def test_no_difference_gives_large_p():
    base, elmo = _correct(0.7, 400, 1), _correct(0.7, 400, 2)          # same accuracy, different examples right
    observed, p = paired_bootstrap(elmo[None], base[None], samples=2000)
    assert observed == 0.0 and p == 1.0
    base, elmo = _correct(0.70, 400, 3), _correct(0.71, 400, 4)         # a tiny, insignificant gain
    _, p = paired_bootstrap(elmo[None], base[None], samples=2000)
    assert p > 0.2


def test_worse_system_gets_p_one():
    _, p = paired_bootstrap(_correct(0.5, 100, 1)[None], _correct(0.9, 100, 2)[None], samples=200)
    assert p == 1.0


def test_seeds_are_averaged_per_example():
    elmo = np.array([[100.0, 0.0, 100.0], [100.0, 100.0, 0.0]])        # two seeds
    base = np.array([[0.0, 0.0, 100.0]])
    observed, _ = paired_bootstrap(elmo, base, samples=10)
    assert observed == pytest.approx((100 + 50 + 50 - 0 - 0 - 100) / 3)


def _span_f1(predictions, golds):
    """Corpus micro F1 over sets of spans (not a mean over examples), in percent."""
    tp = sum(len(set(p) & set(g)) for p, g in zip(predictions, golds))
    total = sum(len(p) for p in predictions) + sum(len(g) for g in golds)
    return 200.0 * tp / total if total else 0.0


def test_recomputed_corpus_metric_planted_and_none():
    rng = np.random.default_rng(0)
    golds = [[(i, j) for j in range(int(rng.integers(1, 4)))] for i in range(150)]
    good = [g if i % 10 else [] for i, g in enumerate(golds)]          # misses every 10th sentence
    poor = [g if i % 3 else [(i, 99)] for i, g in enumerate(golds)]     # wrong on every 3rd
    observed, p = paired_bootstrap_metric(_span_f1, [good], [poor], golds, samples=300)
    assert observed == pytest.approx(_span_f1(good, golds) - _span_f1(poor, golds)) and observed > 0
    assert p < 0.01
    _, p_same = paired_bootstrap_metric(_span_f1, [good], [list(good)], golds, samples=50)
    assert p_same == 1.0


def test_recompute_path_equals_per_example_path_for_accuracy():
    golds = list(np.random.default_rng(5).integers(0, 5, 60))
    a = [g if i % 4 else (g + 1) % 5 for i, g in enumerate(golds)]
    b = [g if i % 2 else (g + 1) % 5 for i, g in enumerate(golds)]

    def accuracy(preds, gold):
        return 100.0 * np.mean([p == g for p, g in zip(preds, gold)])

    per_a = np.array([[100.0 * (p == g) for p, g in zip(a, golds)]])
    per_b = np.array([[100.0 * (p == g) for p, g in zip(b, golds)]])
    assert paired_bootstrap(per_a, per_b, samples=256, seed=3) == pytest.approx(
        paired_bootstrap_metric(accuracy, [a], [b], golds, samples=256, seed=3))


def test_mismatched_inputs_are_refused():
    with pytest.raises(ValueError, match="equal"):
        paired_bootstrap(np.zeros((1, 3)), np.zeros((1, 4)))
    with pytest.raises(ValueError, match="one prediction per example"):
        paired_bootstrap_metric(_span_f1, [[[]]], [[[], []]], [[], []])
