"""The experiment engine end to end on the bundled NER sample with bilm-tf's tiny fixture biLM."""
from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from elmo_bench.commands.hydra_setup import register_resolvers
from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.experiment import run_experiment
from elmo_bench.records.run_record import REQUIRED_KEYS, RunRecord, read_statistics
from tests.conftest import REPO, needs_fixtures

pytestmark = needs_fixtures
register_resolvers()


def _cfg(tmp_path: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[
            "task=ner", "data=ner_sample", "bilm=fixture", "logger=disabled", "progress=false",
            f"paths.cache_dir={tmp_path / 'cache'}", "trainer.max_epochs=2", "trainer.batch_size=16",
            "task.head.lstm_hidden=[16,16]", "task.head.char_filters=8", *overrides,
        ])
    from omegaconf import open_dict

    with open_dict(cfg):
        cfg.data.name = "ner_sample"
    return cfg


def test_run_writes_results_and_second_seed_hits_the_cache(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    first = run_experiment(run_config(_cfg(tmp_path, "seed=1")), tmp_path / "run1")
    assert "activation cache miss" in caplog.text
    saved = json.loads((tmp_path / "run1" / "results.json").read_text())
    assert set(REQUIRED_KEYS) <= set(saved) and RunRecord.read(tmp_path / "run1" / "results.json").to_dict() == saved
    assert saved["metrics"]["test"].keys() >= {"precision", "recall", "f1"}
    assert saved["mixes"]["input"]["weights"] and abs(sum(saved["mixes"]["input"]["weights"]) - 1) < 1e-5
    assert saved["bilm"]["hash"] and saved["epochs"]["run"] == 2
    assert first["timings"]["bilm_seconds"] > 0
    preds = json.loads((tmp_path / "run1" / "predictions_test.json").read_text())
    assert len(preds) == saved["data"]["test_examples"] and isinstance(preds[0]["prediction"], list)
    # the run record the report reads: text-free predictions by index and the test metric's per-example statistics
    compact = json.loads(gzip.decompress((tmp_path / "run1" / "predictions_test.json.gz").read_bytes()))
    assert compact == [{"index": i, "prediction": p["prediction"]} for i, p in enumerate(preds)]
    stats = read_statistics(tmp_path / "run1")
    assert stats.kind == "chunk_f1" and stats.rows.shape == (len(preds), 3)
    assert stats.value() == pytest.approx(saved["metrics"]["test"]["f1"])
    caplog.clear()
    second = run_experiment(run_config(_cfg(tmp_path, "seed=2", "mix.lambda=0.5")), tmp_path / "run2")
    assert "activation cache hit" in caplog.text and "activation cache miss" not in caplog.text
    assert second["timings"]["bilm_seconds"] == 0.0


def test_killed_run_resumes_to_the_same_result(tmp_path, monkeypatch):
    import elmo_bench.engine.experiment as experiment

    uninterrupted = run_experiment(run_config(_cfg(tmp_path, "trainer.max_epochs=3")), tmp_path / "full")
    # "killed" right after the checkpoint of epoch 1 is written (an interrupt raised by the epoch hook)
    real_fit = experiment.fit

    def killed_fit(*args, **kwargs):
        def on_epoch(epoch, record):
            if epoch == 1:
                raise KeyboardInterrupt
        return real_fit(*args[:-1], on_epoch, **kwargs)

    monkeypatch.setattr(experiment, "fit", killed_fit)
    with pytest.raises(KeyboardInterrupt):
        run_experiment(run_config(_cfg(tmp_path, "trainer.max_epochs=3")), tmp_path / "resumed")
    assert (tmp_path / "resumed" / "checkpoint.pt").exists() and not (tmp_path / "resumed" / "results.json").exists()
    monkeypatch.setattr(experiment, "fit", real_fit)
    resumed = run_experiment(run_config(_cfg(tmp_path, "trainer.max_epochs=3")), tmp_path / "resumed")
    assert resumed["metrics"] == uninterrupted["metrics"]
    assert [h["train_loss"] for h in resumed["epochs"]["history"]] == pytest.approx(
        [h["train_loss"] for h in uninterrupted["epochs"]["history"]], abs=1e-6)
    assert resumed["mixes"] == uninterrupted["mixes"]


def test_glove_baseline_has_no_mix_and_a_complete_run_is_not_redone(tmp_path):
    result = run_experiment(run_config(_cfg(tmp_path, "embedder=glove")), tmp_path / "g")
    assert result["mixes"] == {} and result["bilm"] is None
    stamp = (tmp_path / "g" / "results.json").stat().st_mtime_ns
    run_experiment(run_config(_cfg(tmp_path, "embedder=glove")), tmp_path / "g")
    assert (tmp_path / "g" / "results.json").stat().st_mtime_ns == stamp


def test_placement_both_gives_two_mixes_and_penalty(tmp_path):
    result = run_experiment(run_config(_cfg(tmp_path, "mix.placement=both", "mix.lambda=0.01", "trainer.max_epochs=1")),
                            tmp_path / "b")
    assert set(result["mixes"]) == {"input", "output"}
    assert result["elmo"]["l2_coef"] == 0.01
