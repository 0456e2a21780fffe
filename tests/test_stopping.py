"""The early-stopping rule (elmo_bench.records.stopping): hand-computed stops, replays and reasons."""
from __future__ import annotations

from elmo_bench.engine.loop import TrainerConfig
from elmo_bench.records.stopping import StoppingRule

SCORES = [10.0, 12.0, 11.0, 11.5, 11.9, 13.0]     # best at epochs 0, 1, then 5


def test_the_replay_finds_the_first_epoch_a_rule_would_not_train():
    assert StoppingRule(max_epochs=6, patience=4).first_stop(SCORES) is None
    assert StoppingRule(max_epochs=5, patience=4).first_stop(SCORES) == 5             # the cap
    assert StoppingRule(max_epochs=30, patience=2).first_stop(SCORES) == 4            # 4 − 1 > 2
    assert StoppingRule(max_epochs=30, patience=2, min_epochs=6).first_stop(SCORES) is None
    assert StoppingRule(max_epochs=30, patience=3).first_stop(SCORES) == 5            # 5 − 1 > 3
    assert StoppingRule(max_epochs=30, patience=4).first_stop(SCORES) is None         # 5 − 1 = 4 is allowed


def test_a_run_ends_by_patience_only_when_the_patience_was_spent():
    rule = StoppingRule(max_epochs=6, patience=2)
    assert rule.stopped_by(6, best_epoch=5) == "cap"         # still improving at the cap
    assert rule.stopped_by(6, best_epoch=3) == "patience"    # 6 − 3 > 2: spent at the cap too, so converged
    assert StoppingRule(max_epochs=6, patience=3).stopped_by(6, best_epoch=3) == "cap"   # 6 − 3 = 3: within it
    assert rule.stopped_by(4, best_epoch=1) == "patience"    # 4 − 1 > 2


def test_the_rule_is_read_from_a_trainer_config_or_a_stored_config():
    assert StoppingRule.of(TrainerConfig(max_epochs=7, patience=2)) == StoppingRule(7, 2, 0)
    assert StoppingRule.of({"max_epochs": 12, "patience": 3, "min_epochs": None}) == StoppingRule(12, 3, 0)


def test_the_report_keeps_the_first_of_equal_bests_as_the_training_loop_does():
    from elmo_bench.report.run_tables import best_point
    assert best_point([(0, 1.0), (1, 3.0), (2, 3.0), (3, 2.0)])[0] == 1
