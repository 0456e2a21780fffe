"""``elmo-bench evaluate RUN_DIR [--split S]``: a finished run re-evaluated from its best.pt and run.json alone
gives exactly the metrics of its results.json; checkpoints hold the task's state and the GloVe vocabulary."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir
from omegaconf import open_dict

from elmo_bench.base import checkpoints
from elmo_bench.base.errors import ConfigError
from elmo_bench.commands import main as cli
from elmo_bench.commands.hydra_setup import register_resolvers
from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.evaluate import evaluate_run_dir
from elmo_bench.engine.experiment import run_experiment
from elmo_bench.tasks.registry import registered
from tests.conftest import REPO, needs_fixtures
from tests.engine_helpers import TINY, compose_run

pytestmark = needs_fixtures
register_resolvers()


def _ner_cfg(tmp_path: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[
            "task=ner", "data=ner_sample", "bilm=fixture", "logger=disabled", "progress=false",
            f"paths.cache_dir={tmp_path / 'cache'}", "trainer.max_epochs=3", "trainer.batch_size=8", "trainer.lr=0.01",
            "task.head.lstm_hidden=[16,16]", "task.head.char_filters=8", *overrides])
    with open_dict(cfg):
        cfg.data.name = "ner_sample"
    return cfg


@pytest.fixture(scope="module")
def ner_run(tmp_path_factory) -> tuple[Path, dict]:
    tmp_path = tmp_path_factory.mktemp("ner")
    run_dir = tmp_path / "run"
    return run_dir, run_experiment(run_config(_ner_cfg(tmp_path)), run_dir)


def test_checkpoints_hold_the_task_state_and_the_vocabulary(ner_run):
    run_dir, _ = ner_run
    for name in ("best.pt", "checkpoint.pt"):
        state = torch.load(run_dir / name, weights_only=True)
        labels = state["task"]["labels"]
        assert labels[0] == "O" and "B-PER" in labels and "I-PER" in labels
        vocab = state["extra"]["vocab"]
        assert vocab[:2] == ["@@PADDING@@", "@@UNKNOWN@@"]
        assert len(vocab) == state["model"]["embedder.glove.weight"].shape[0]


def test_evaluate_reproduces_the_results_json_metrics_exactly(ner_run):
    run_dir, results = ner_run
    assert results["metrics"]["dev"]["f1"] > 10 and results["metrics"]["test"]["f1"] > 10  # a model that tags
    again = evaluate_run_dir(run_dir, with_predictions=True)
    assert set(again["metrics"]) == {"dev", "test"}
    assert again["metrics"]["dev"] == results["metrics"]["dev"]  # exact, not approximate
    assert again["metrics"]["test"] == results["metrics"]["test"]
    for split in ("dev", "test"):
        assert again["predictions"][split] == json.loads((run_dir / f"predictions_{split}.json").read_text())
    assert again["epoch"] == results["epochs"]["best"] and again["device"] == "cpu"
    assert evaluate_run_dir(run_dir, "dev")["metrics"] == {"dev": results["metrics"]["dev"]}
    train = evaluate_run_dir(run_dir, "train")["metrics"]["train"]
    assert set(train) == set(results["metrics"]["dev"])


def test_evaluate_cli_prints_one_json_object(ner_run, capsys):
    run_dir, results = ner_run
    assert cli.main(["evaluate", str(run_dir), "--split", "test", "--device", "cpu"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    printed = json.loads(lines[0])
    assert printed["metrics"] == {"test": results["metrics"]["test"]} and printed["run"] == str(run_dir)


def test_evaluate_uses_the_saved_labels_not_refitted_ones(ner_run, tmp_path):
    """A checkpoint's label order is what the CRF was trained with: evaluate must decode with it."""
    run_dir, results = ner_run
    copy = tmp_path / "copy"
    shutil.copytree(run_dir, copy)
    best = torch.load(copy / "best.pt", weights_only=True)
    labels = best["task"]["labels"]
    best["task"]["labels"] = [labels[0], *reversed(labels[1:])]  # a different label order, same size
    checkpoints.save(copy / "best.pt", best)  # as the program writes it (a bare torch.save fails its integrity record)
    assert evaluate_run_dir(copy, "test")["metrics"]["test"] != results["metrics"]["test"]


def test_bad_split_and_missing_files_are_one_line_errors(ner_run, tmp_path, capsys):
    run_dir, _ = ner_run
    with pytest.raises(ConfigError, match=r"^--split 'valid': the run's data has the splits \['train', 'dev', 'test'\]$"):
        evaluate_run_dir(run_dir, "valid")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["evaluate", str(empty)]) == 2
    assert capsys.readouterr().err.strip() == f"error: {empty}: no run.json (expected a run directory written by run.py)"
    no_best = tmp_path / "no_best"
    no_best.mkdir()
    shutil.copy(run_dir / "run.json", no_best / "run.json")
    with pytest.raises(ConfigError, match="no best.pt"):
        evaluate_run_dir(no_best)


def test_evaluate_a_run_without_glove_and_without_the_cache(tmp_path, monkeypatch):
    monkeypatch.setitem(registered(), "tiny", TINY)
    run_dir = tmp_path / "run"
    results = run_experiment(run_config(compose_run(tmp_path, "embedder=elmo", "cache=false", "trainer.max_epochs=2")), run_dir)
    again = evaluate_run_dir(run_dir)
    assert again["metrics"] == results["metrics"]
