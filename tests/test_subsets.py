"""Nested training subsets (paper Figure 1 compares like with like) and epoch scaling."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from elmo_bench.engine.fractions import nested_subset, scaled_epochs

ITEMS = [f"sentence-{i}" for i in range(1000)]
FRACTIONS = [0.001, 0.01, 0.1, 0.5, 1.0]


@pytest.mark.parametrize("seed", [1, 2, 7])
def test_each_smaller_fraction_is_inside_the_larger_one(seed):
    subsets = [set(nested_subset(ITEMS, f, seed)) for f in FRACTIONS]
    for small, large in zip(subsets, subsets[1:]):
        assert small < large                                   # strict subset: 1 < 10 < 100 < 500 < 1000
    assert [len(s) for s in subsets] == [1, 10, 100, 500, 1000]


def test_sizes_round_up_and_never_empty():
    assert len(nested_subset(ITEMS[:7], 0.5, 1)) == math.ceil(3.5)
    assert len(nested_subset(ITEMS[:7], 0.001, 1)) == 1


def test_different_seeds_pick_different_examples():
    a, b = nested_subset(ITEMS, 0.1, 1), nested_subset(ITEMS, 0.1, 2)
    assert set(a) != set(b)
    assert nested_subset(ITEMS, 0.1, 1) == a                   # and the same seed the same ones


def test_fraction_one_is_everything_in_order():
    assert nested_subset(ITEMS, 1.0, 3) == ITEMS


def test_subset_keeps_corpus_order():
    subset = nested_subset(ITEMS, 0.1, 5)
    assert subset == sorted(subset, key=ITEMS.index)


@pytest.mark.parametrize("fraction", [0.0, -0.1, 1.5])
def test_bad_fraction_is_refused(fraction):
    with pytest.raises(ValueError, match="data.fraction"):
        nested_subset(ITEMS, fraction, 1)


def test_scaled_epochs():
    assert scaled_epochs(10, 1.0, True) == 10
    assert scaled_epochs(10, 0.01, False) == 10
    assert scaled_epochs(10, 0.25, True) == 20                 # 10 / sqrt(0.25)
    assert scaled_epochs(10, 0.001, True) == 50                # capped


def test_trainer_config_scales_epochs_and_patience_together():
    from hydra import compose, initialize_config_dir

    from elmo_bench.commands.hydra_setup import register_resolvers
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.experiment import trainer_config

    register_resolvers()
    with initialize_config_dir(config_dir=str(Path(__file__).resolve().parents[1] / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=["task=ner", "trainer.max_epochs=4", "trainer.patience=2",
                                           "trainer.scale_epochs=true", "trainer.max_scaled_epochs=15"])
    run = run_config(cfg)
    full, tenth, tiny = trainer_config(run, 1.0), trainer_config(run, 0.1), trainer_config(run, 0.001)
    assert (full.max_epochs, full.patience) == (4, 2)
    assert (tenth.max_epochs, tenth.patience) == (13, 7)  # ceil(4 / sqrt(0.1)) = 13; ceil(2 * 13 / 4) = 7
    assert (tiny.max_epochs, tiny.patience) == (15, 8)    # capped at 15; ceil(2 * 15 / 4) = 8
