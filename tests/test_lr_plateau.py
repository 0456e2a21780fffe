"""jiant v1's plateau halving of the learning rate (issue 38; elmo_bench.engine.lr_plateau): hand-made plateaus
halve exactly when the rule says, the replay equals torch's ReduceLROnPlateau as jiant configures it, the minimum
rate stops training, the edge tasks have it on and every other task composes and trains as before."""
from __future__ import annotations

import json

import pytest
import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.engine.config_check import check_trainer
from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.experiment import run_experiment, trainer_config
from elmo_bench.engine.lr_plateau import LrPlateau
from elmo_bench.engine.trainer_config import TrainerConfig
from elmo_bench.tasks.registry import registered
from tests.conftest import needs_fixtures
from tests.engine_helpers import TINY, compose_run


def run_config_of(*args, **kwargs):
    """A composed test run as the engine takes it (the door's RunConfig)."""
    return run_config(compose_run(*args, **kwargs))

LR = 1e-4
RULE = LrPlateau(lr=LR, factor=0.5, patience=5, threshold=0.01, min_lr=1e-6)  # jiant's edge-probing values


@pytest.fixture
def tiny(monkeypatch):
    monkeypatch.setitem(registered(), "tiny", TINY)


def test_a_hand_made_plateau_halves_after_six_epochs_without_a_gain_above_the_threshold():
    # best 60 at epoch 1; epoch 2 is higher, but by 0.005 <= 0.01: no improvement for the schedule
    scores = [50.0, 60.0, 60.005, 59.0, 58.0, 57.0, 56.0, 55.0, 61.0, 60.0, 60.5, 60.9, 61.0, 61.01, 40.0]
    rates = RULE.rates(scores)
    assert len(rates) == len(scores) + 1
    # epochs 2..7 are the six bad ones: the rate of epoch 8 (after scores[:8]) is the first halved one
    assert rates[:8] == [LR] * 8 and rates[8] == LR / 2
    # 61 at epoch 8 is the new best; 60, 60.5, 60.9, 61.0, 61.01 (not above 61 + 0.01) and 40 are six more bad
    # epochs (the best is kept across the halving), so the rate halves again after epoch 14
    assert rates[9:15] == [LR / 2] * 6 and rates[15] == LR / 4


def test_five_bad_epochs_then_a_real_gain_keep_the_rate():
    scores = [60.0, 59.0, 59.0, 59.0, 59.0, 59.0, 60.02, 59.0, 59.0, 59.0, 59.0, 59.0]
    assert RULE.rates(scores) == [LR] * (len(scores) + 1)
    assert RULE.rates(scores + [59.0])[-1] == LR / 2                                 # the sixth bad one after 60.02


@pytest.mark.parametrize("patience, threshold", [(5, 0.01), (0, 0.0), (2, 0.5)])
def test_the_replay_is_torchs_reduce_lr_on_plateau_as_jiant_configures_it(patience, threshold):
    """jiant/trainer.py build_trainer: reduce_on_plateau, mode max, threshold_mode abs, no cooldown."""
    generator = torch.Generator().manual_seed(7)
    scores = (50 + torch.randn(60, generator=generator).cumsum(0) * 0.2).tolist()
    optimizer = torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))], lr=LR)
    torch_rule = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=patience,
                                                            threshold=threshold, threshold_mode="abs")
    expected = [LR]
    for score in scores:
        torch_rule.step(score)
        expected.append(optimizer.param_groups[0]["lr"])
    ours = LrPlateau(LR, 0.5, patience, threshold).rates(scores)
    assert ours == pytest.approx(expected, rel=0, abs=1e-15) and min(ours) < LR      # it did halve


def test_the_minimum_rate_ends_training_after_seven_halvings_from_1e_4():
    always_worse = [float(-i) for i in range(60)]                                     # one improvement, then none
    rates = RULE.rates(always_worse)
    halvings = [rates.index(LR / 2 ** k) for k in range(1, 8)]
    assert halvings == [7, 13, 19, 25, 31, 37, 43]
    assert not RULE.spent(LR / 2 ** 6) and RULE.spent(LR / 2 ** 7)                    # 1.5625e-6 vs 7.8e-7 < 1e-6
    assert not LrPlateau(LR, 0.5, 5).spent(1e-30)                                     # no minimum: never spent


def test_the_edge_tasks_have_it_on_and_the_others_off(tmp_path):
    for task in ("edge_pos", "edge_srl"):
        for budget in ([], ["budget=cpu"]):
            tc = trainer_config(run_config(compose_run(tmp_path, f"task={task}", "embedder=elmo", *budget,
                                                        tiny=False)), 1.0)
            assert LrPlateau.of(tc) == LrPlateau(tc.lr, 0.5, 5, 0.01, 1e-6)
            assert tc.lr == (0.001 if budget else 0.0001)
    for task in ("ner", "pos", "srl"):
        cfg = compose_run(tmp_path, f"task={task}", tiny=False)
        assert LrPlateau.of(trainer_config(run_config(cfg), 1.0)) is None
        assert "lr_plateau_factor" not in cfg.task.trainer and cfg.trainer.lr_plateau_factor is None


def test_a_factor_without_a_patience_and_out_of_range_values_are_one_line_errors():
    with pytest.raises(ConfigError, match=r"^config: trainer.lr_plateau_patience expected an integer >= 0 when "
                                          r"trainer.lr_plateau_factor is set, found None$"):
        check_trainer({**TrainerConfig().__dict__, "lr_plateau_factor": 0.5})
    with pytest.raises(ConfigError, match=r"^config: trainer.lr_plateau_factor expected a number > 0 and <= 1 or "
                                          r"null, found 1.5$"):
        check_trainer({**TrainerConfig().__dict__, "lr_plateau_factor": 1.5, "lr_plateau_patience": 5})
    check_trainer({**TrainerConfig().__dict__, "lr_plateau_factor": 0.5, "lr_plateau_patience": 5})


def _plateau_run(tmp_path, run_dir, *overrides):
    """The tiny task whose every epoch after the first is "no gain" (threshold 1000): from epoch 2 on, the rate
    halves each epoch (epoch 1 follows epoch 0's improvement over nothing)."""
    return run_experiment(run_config_of(tmp_path, "trainer.lr=0.01", "trainer.patience=10",
                                      "trainer.lr_plateau_factor=0.5",
                                      "trainer.lr_plateau_patience=0", "trainer.lr_plateau_threshold=1000",
                                      *overrides), run_dir)


@needs_fixtures
def test_the_loop_trains_each_epoch_at_the_replayed_rate_and_resumes_exactly(tmp_path, tiny):
    whole = _plateau_run(tmp_path, tmp_path / "whole", "trainer.max_epochs=4")
    assert [h["lr"] for h in whole["epochs"]["history"]] == [0.01, 0.01, 0.005, 0.0025]
    # two epochs, then the cap raised to four: continued from the checkpoint at the rate the whole run took
    _plateau_run(tmp_path, tmp_path / "resumed", "trainer.max_epochs=2")
    resumed = _plateau_run(tmp_path, tmp_path / "resumed", "trainer.max_epochs=4")
    assert [(h["lr"], h["train_loss"]) for h in resumed["epochs"]["history"]] == [
        (h["lr"], h["train_loss"]) for h in whole["epochs"]["history"]]
    assert resumed["metrics"] == whole["metrics"]
    # a minimum of 0.003: the rate epoch 3 would take (0.0025) is below it, so three epochs ran
    stopped = _plateau_run(tmp_path, tmp_path / "min", "trainer.max_epochs=6", "trainer.lr_plateau_min_lr=0.003")
    assert [h["lr"] for h in stopped["epochs"]["history"]] == [0.01, 0.01, 0.005]
    assert stopped["epochs"]["stopped_by"] == "min_lr"


@needs_fixtures
def test_a_run_directory_from_before_the_keys_still_skips(tmp_path, tiny):
    run_dir = tmp_path / "run"
    first = run_experiment(run_config_of(tmp_path, "trainer.max_epochs=1"), run_dir)
    assert "lr" not in first["epochs"]["history"][0]                      # no schedule, no rate recorded
    stored = json.loads((run_dir / "run.json").read_text())
    for key in ("factor", "patience", "threshold", "min_lr"):
        assert stored["identity"].pop(f"trainer.lr_plateau_{key}") is None
    (run_dir / "run.json").write_text(json.dumps(stored))
    assert run_experiment(run_config_of(tmp_path, "trainer.max_epochs=1"), run_dir)["metrics"] == first["metrics"]
    with pytest.raises(ConfigError, match="trainer.lr_plateau_factor: null → 0.5"):
        run_experiment(run_config_of(tmp_path, "trainer.max_epochs=1", "trainer.lr_plateau_factor=0.5",
                                   "trainer.lr_plateau_patience=5"), run_dir)


def test_the_committed_edge_runs_would_train_every_epoch_at_the_same_rate():
    """docs/edge-probing.md: the 54 committed edge runs predate the schedule; replayed over their dev scores, it
    changes no epoch's rate (so they are the runs the schedule would have trained)."""
    from tests.conftest import REPO

    records = [json.loads(p.read_text()) for p in sorted((REPO / "docs/results/edge_probing").rglob("results.json"))]
    shipped = [r for r in records if (r.get("bilm") or {}).get("hash") == "730677ca6e2ce40a"]  # the shipped biLM v2
    assert len(shipped) == 54
    for record in shipped:
        path = (record["task"], record["seed"], record["config"]["mix"])
        assert "lr_plateau_factor" not in record["config"]["task"]["trainer"]     # trained without it
        scores = [h["dev_metric"] for h in record["epochs"]["history"]]
        lr = record["config"]["trainer"]["lr"]
        assert lr == 0.001 and len(scores) == 10
        assert LrPlateau(lr, 0.5, 5, 0.01, 1e-6).rates(scores)[:len(scores)] == [lr] * len(scores), path
