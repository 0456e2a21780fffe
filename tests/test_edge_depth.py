"""Expected layer, differential scores and centre of gravity (issue 38 item 4) on hand-made scores and weights."""
from __future__ import annotations

import math

import pytest

from elmo_bench.report.edge_depth import (
    centre_of_gravity,
    differential_scores,
    expected_layer,
    mean_sd,
    softmax,
    task_depth,
)


def test_differential_scores_are_unclamped_prefix_gains():
    assert differential_scores([80.0, 90.0, 88.0]) == pytest.approx([10.0, -2.0])
    assert differential_scores([50.0]) == []


def test_expected_layer_weights_each_layer_by_its_gain():
    assert expected_layer([10.0, 10.0]) == pytest.approx(1.5)                 # (1·10 + 2·10) / 20
    assert expected_layer([6.0, 0.0, 2.0]) == pytest.approx((6 + 3 * 2) / 8)  # 1.5
    assert expected_layer([10.0, -2.0]) == pytest.approx((10 - 4) / 8)        # 0.75: a negative Δ pulls down
    assert expected_layer([0.0, 0.0]) is None                                  # no gain over lexical
    assert expected_layer([3.0, -5.0]) is None                                 # the full mix is worse than lexical
    assert expected_layer([]) is None


def test_with_two_layers_the_expected_layer_is_one_plus_the_share_of_the_top_gain():
    for d1, d2 in ((4.0, 1.0), (1.0, 4.0), (5.0, 0.0)):
        assert expected_layer([d1, d2]) == pytest.approx(1 + d2 / (d1 + d2))


def test_centre_of_gravity_of_the_full_mix_weights():
    assert centre_of_gravity([0.2, 0.3, 0.5]) == pytest.approx(0.3 + 2 * 0.5)  # 1.3
    assert centre_of_gravity([1.0, 0.0, 0.0]) == 0.0
    weights = softmax([0.0, math.log(3.0)])                                    # [0.25, 0.75]
    assert weights == pytest.approx([0.25, 0.75]) and centre_of_gravity(weights) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="must be a distribution"):
        centre_of_gravity([0.5, 0.2])


def test_one_task_row():
    row = task_depth({0: 70.0, 1: 85.0, 2: 86.0}, {0: 70.0, 1: 84.0, 2: 84.0}, [0.1, 0.6, 0.3])
    assert row["lexical"] == 70.0 and row["full"] == 86.0 and row["gain"] == 16.0
    assert row["best_layer"] == 1                                              # a tie goes to the lower layer
    assert row["deltas"] == pytest.approx([15.0, 1.0])
    assert row["expected_layer"] == pytest.approx(17.0 / 16.0)
    assert row["centre_of_gravity"] == pytest.approx(1.2)
    with pytest.raises(ValueError, match="without a gap"):
        task_depth({0: 70.0, 2: 86.0}, {}, None)
    assert mean_sd([1.0, 2.0, 3.0]) == (2.0, 1.0) and mean_sd([4.0]) == (4.0, None)
