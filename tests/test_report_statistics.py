"""The paired bootstrap over per-example sufficient statistics (report/bootstrap.py) behaves like the per-example
one; the per-task rows themselves are tested with their tasks (tests/test_task_statistics.py)."""
from __future__ import annotations

import numpy as np
import pytest

from elmo_bench.records.example_statistics import Statistics
from elmo_bench.report.bootstrap import paired_bootstrap_sums


def test_sum_bootstrap_matches_planted_differences():
    rng = np.random.default_rng(0)
    n = 400
    good = Statistics("ratio", "accuracy", np.stack([(rng.random(n) < 0.8).astype(float), np.ones(n)], 1))
    poor = Statistics("ratio", "accuracy", np.stack([(rng.random(n) < 0.6).astype(float), np.ones(n)], 1))
    observed, p = paired_bootstrap_sums([good], [poor], samples=500)
    assert observed == pytest.approx(good.value() - poor.value()) and p < 0.01
    assert paired_bootstrap_sums([poor], [good], samples=100)[1] == 1.0
    _, p_same = paired_bootstrap_sums([good], [good], samples=100)
    assert p_same == 1.0
    with pytest.raises(ValueError):
        paired_bootstrap_sums([good], [Statistics("ratio", "accuracy", np.ones((3, 2)))])
