"""The training loop: early stopping on the dev metric with patience, the per-epoch history in results.json, and
the ScalarMix's initial gamma as a config key (mix.gamma_init)."""
from __future__ import annotations

import pytest
import torch

from elmo_bench.engine.collate import Collator
from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.experiment import run_experiment
from elmo_bench.engine.loop import TaskModel, TrainerConfig, fit
from elmo_bench.modules.token_embedders import TaskEmbedder, WordVocabulary
from elmo_bench.records.elmo_settings import ElmoSettings
from elmo_bench.records.run_record import RunRecord
from elmo_bench.tasks.registry import registered
from tests.conftest import REPO, needs_fixtures
from tests.engine_helpers import TINY, compose_run
from tests.tiny_task.task import TinyTask, read_tsv


def _setup():
    torch.manual_seed(0)
    task = TinyTask()
    train = read_tsv(REPO / "tests/tiny_task/samples/train.tsv")
    dev = read_tsv(REPO / "tests/tiny_task/samples/dev.tsv")
    words = sorted({w for e in train + dev for w in e["tokens"]})
    vocab = WordVocabulary(words)
    embedder = TaskEmbedder(torch.randn(len(vocab), 8), True, None)
    model = TaskModel(embedder, task.build_head({}, {"tokens": embedder.input_dim}, 0))
    return task, train, dev, model, Collator(task, vocab, None)


@pytest.mark.parametrize("patience", [0, 2])
def test_training_stops_patience_epochs_after_the_best_dev_score(tmp_path, patience):
    task, train, dev, model, collator = _setup()
    cfg = TrainerConfig(lr=0.0, batch_size=8, max_epochs=10, patience=patience, progress=False)  # never improves
    result = fit(model, task, train, dev, collator, collator, cfg, tmp_path, seed=1)
    assert result["best_epoch"] == 0 and len(result["history"]) == 1 + patience


def test_min_epochs_keeps_a_flat_start_training(tmp_path):
    task, train, dev, model, collator = _setup()
    cfg = TrainerConfig(lr=0.0, batch_size=8, max_epochs=10, patience=1, min_epochs=6, progress=False)
    result = fit(model, task, train, dev, collator, collator, cfg, tmp_path, seed=1)
    assert result["best_epoch"] == 0 and len(result["history"]) == 6  # patience alone would stop after 2


def test_early_stopping_keeps_the_best_epoch_weights(tmp_path):
    task, train, dev, model, collator = _setup()
    cfg = TrainerConfig(lr=0.05, batch_size=8, max_epochs=40, patience=3, progress=False)
    result = fit(model, task, train, dev, collator, collator, cfg, tmp_path, seed=1)
    history = result["history"]
    scores = [h["dev_metric"] for h in history]
    best = result["best_epoch"]
    assert scores[best] == max(scores) and scores.index(max(scores)) == best  # the first epoch reaching the best
    assert len(history) == best + 1 + cfg.patience < cfg.max_epochs  # stopped early, patience epochs later
    model.eval()
    from elmo_bench.engine.loop import evaluate

    assert evaluate(model, task, dev, collator, 16)[0]["accuracy"] == scores[best]  # best weights restored


@needs_fixtures
def test_results_json_records_the_history_and_the_initial_gamma(tmp_path, monkeypatch):
    monkeypatch.setitem(registered(), "tiny", TINY)
    results = run_experiment(run_config(compose_run(tmp_path, "mix.gamma_init=0.25", "trainer.max_epochs=2")), tmp_path / "run")
    saved = RunRecord.read(tmp_path / "run" / "results.json").to_dict()
    assert [set(h) for h in saved["history"]] == [{"epoch", "dev_metric", "loss", "seconds"}] * 2
    assert [h["dev_metric"] for h in saved["history"]] == [h["dev"]["accuracy"] for h in saved["epochs"]["history"]]
    assert all(h["seconds"] > 0 and h["loss"] > 0 for h in saved["history"])
    assert results["elmo"]["gamma_init"] == 0.25


def test_gamma_init_sets_the_initial_scale_of_every_mix():
    embedder = TaskEmbedder(None, False, ElmoSettings(placement="both", dropout=0.0, gamma_init=0.25), 3, 4)
    assert [m.gamma.item() for m in embedder.elmo.mixes] == [0.25, 0.25]
    layers = torch.ones(1, 3, 2, 4)
    assert torch.allclose(embedder.elmo.mixes[0](layers), torch.full((1, 2, 4), 0.25))
