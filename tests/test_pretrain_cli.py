"""`elmo-bench pretrain / perplexity / finetune-lm` entry points on invented tiny corpora."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from elmo_bench.base.errors import DataError
from elmo_bench.commands.pretrain import (
    REPO,
    compose_pretrain,
    finetune_main,
    perplexity_main,
    pretrain_main,
    run_perplexity,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pretrain_helpers import grammar_sentences, write_lines  # noqa: E402

SHIPPED = REPO / "elmo_bench" / "resources" / "bilm"


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


def test_compose_picks_the_file_applies_overrides_and_resolves_paths():
    cfg = compose_pretrain(["pretrain=tiny", "pretrain.max_tokens=96", "pretrain.out_dir=runs/x",
                            "pretrain.train_files=[a.txt]"])
    assert cfg.max_tokens == 96 and cfg.model.lstm_dim == 32
    assert cfg.out_dir == str(REPO / "runs/x") and cfg.train_files == (str(REPO / "a.txt"),)
    shipped = compose_pretrain([])
    assert shipped.model.projection_dim == 128 and shipped.optimizer == "adagrad" and shipped.lr == 0.2


def test_pretrain_perplexity_and_finetune_commands(tmp_path, capsys):
    train_file = write_lines(tmp_path / "train.txt", grammar_sentences(300, seed=0))
    task_text = write_lines(tmp_path / "task.txt", grammar_sentences(300, seed=2, swap=True))
    task_held = write_lines(tmp_path / "task_held.txt", grammar_sentences(30, seed=3, swap=True))
    export = tmp_path / "export"
    pretrain_main(["pretrain=tiny", f"pretrain.train_files=[{train_file}]", f"pretrain.out_dir={tmp_path / 'run'}",
                   f"pretrain.export_dir={export}", "pretrain.max_tokens=4800"])
    capsys.readouterr()
    model = ["--options", str(export / "options.json"), "--weights", str(export / "weights.hdf5"),
             "--vocab", str(export / "vocab.txt")]
    assert perplexity_main([*model, "--input", str(task_held)]) == 0
    before = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(before) == {"forward", "backward", "average", "unigram", "tokens"}

    tuned = tmp_path / "tuned"
    finetune_main([f"pretrain.init_dir={export}", f"pretrain.train_files=[{task_text}]",
                   f"pretrain.out_dir={tmp_path / 'ft'}", f"pretrain.export_dir={tuned}", "pretrain.batch_size=8",
                   "pretrain.unroll_steps=6", "pretrain.num_sampled=16", "pretrain.dropout=0.0", "pretrain.epochs=2",
                   "pretrain.optimizer=adam", "pretrain.lr=0.01"])
    after = run_perplexity(["--options", str(tuned / "options.json"), "--weights", str(tuned / "weights.hdf5"),
                             "--vocab", str(tuned / "vocab.txt"), "--input", str(task_held)])
    assert after["average"] < 0.8 * before["average"], (before, after)
    assert (tuned / "vocab.txt").read_text() == (export / "vocab.txt").read_text()


def test_finetune_without_text_is_a_clear_error(tmp_path):
    with pytest.raises(DataError, match="train_files is empty"):
        finetune_main([f"pretrain.out_dir={tmp_path}"])


@pytest.mark.skipif(not (SHIPPED / "weights.hdf5").exists(), reason="shipped biLM not exported yet")
def test_shipped_model_is_small_and_has_its_softmax(tmp_path, capsys):
    assert (SHIPPED / "weights.hdf5").stat().st_size <= 25 * 1024 * 1024
    sentences = ["The old man walked slowly to the river , and he sat down .", "It was a dark and stormy night .",
                 "\" I do not know , \" she said , looking at her sister .", "He had never seen the house before .",
                 "They went to the town in the morning .", "She smiled and took his hand ."]
    held = write_lines(tmp_path / "held.txt", sentences)
    result = run_perplexity(["--input", str(held)])
    assert result["tokens"] == sum(len(s.split()) + 1 for s in sentences)
    assert result["average"] < result["unigram"]
