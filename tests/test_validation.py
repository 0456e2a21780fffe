"""Issue 12, validation at the door: options range-checked, biLM weights checked at load, NaN loss stops training."""
from __future__ import annotations

import json
import shutil

import h5py
import numpy as np
import pytest
import torch

from elmo_bench.base.errors import ConfigError, DataError, TrainingError
from elmo_bench.bilm.checksums import CHECKSUM_FILE, read_checksums, sha256
from elmo_bench.bilm.default import SHIPPED_DIR
from elmo_bench.bilm.weights import load_bilm
from elmo_bench.engine.collate import Collator
from elmo_bench.engine.loop import TaskModel, TrainerConfig, fit
from elmo_bench.engine.run_config import check_run
from elmo_bench.modules.token_embedders import TaskEmbedder
from elmo_bench.records.elmo_settings import ElmoSettings
from tests.conftest import FIXTURES, REPO, needs_fixtures
from tests.tiny_task.task import TinyTask, read_tsv
from tests.warm_python import run_python

GOOD = {"seed": 1, "cache": True, "data": {"fraction": 1.0}, "trainer": {"max_scaled_epochs": 50}, "mix": {"mode": "learned"},
        "task": {"elmo": {"dropout": 0.5, "lambda": 0.1}, "head": {"dropout": 0.5}}}
TRAINER = {"optimizer": "adam", "lr": 1e-3, "batch_size": 32, "eval_batch_size": 64, "max_epochs": 10, "patience": 3,
           "grad_clip": 5.0, "weight_decay": 0.0}


@pytest.mark.parametrize("where, key, value, message", [
    ("trainer", "batch_size", 0, "trainer.batch_size expected an integer >= 1, found 0"),
    ("trainer", "batch_size", -1, "trainer.batch_size expected an integer >= 1, found -1"),
    ("trainer", "eval_batch_size", 0, "trainer.eval_batch_size expected an integer >= 1"),
    ("trainer", "max_epochs", -3, "trainer.max_epochs expected an integer >= 1, found -3"),
    ("trainer", "patience", -1, "trainer.patience expected an integer >= 0"),
    ("trainer", "lr", "abc", "trainer.lr expected a number > 0, found 'abc'"),
    ("trainer", "lr", 0.0, "trainer.lr expected a number > 0"),
    ("trainer", "lr", float("nan"), "trainer.lr expected a number > 0"),
    ("trainer", "grad_clip", -1.0, "trainer.grad_clip expected a number > 0 or null"),
    ("trainer", "optimizer", "adamw", "trainer.optimizer expected one of"),
    ("cfg", "seed", "abc", "seed expected an integer >= 0, found 'abc'"),
    ("cfg", "seed", 1.5, "seed expected an integer >= 0"),
    ("cfg", "max_segment", 0, "max_segment expected an integer >= 1"),
    ("data", "fraction", 0.0, "data.fraction expected a number > 0 and <= 1"),
    ("data", "fraction", 2, "data.fraction expected a number > 0 and <= 1, found 2"),
    ("mix", "dropout", 1.0, "mix.dropout expected a number >= 0 and < 1"),
    ("mix", "lambda", -0.1, "mix.lambda expected a number >= 0"),
    ("head", "dropout", 1.5, "task.head.dropout expected a number >= 0 and < 1"),
])
def test_every_numeric_option_is_range_checked(where, key, value, message):
    cfg = json.loads(json.dumps(GOOD))
    trainer = dict(TRAINER)
    target = {"trainer": trainer, "cfg": cfg, "data": cfg["data"], "mix": cfg["mix"], "head": cfg["task"]["head"]}[where]
    target[key] = value
    check_run(GOOD, TRAINER)  # the unchanged config passes
    with pytest.raises(ConfigError, match="config: " + message.replace("(", r"\(").replace(")", r"\)")):
        check_run(cfg, trainer)


def test_run_py_refuses_negative_epochs_in_one_line_before_reading_anything(tmp_path):
    done = run_python(["run.py", "task=ner", "data=ner_sample", "trainer.max_epochs=-3",
                       "logger=disabled", f"paths.results_dir={tmp_path}"], cwd=REPO, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip() == "error: config: trainer.max_epochs expected an integer >= 1, found -3"


def _copy_model(tmp_path, source=SHIPPED_DIR, files=("options.json", "weights.hdf5", CHECKSUM_FILE)):
    out = tmp_path / "model"
    out.mkdir()
    for name in files:
        if (source / name).exists():
            shutil.copy(source / name, out / name)
            (out / name).chmod(0o644)
    return out


def test_the_shipped_model_matches_its_weights_sha256():
    known = read_checksums(SHIPPED_DIR / CHECKSUM_FILE)
    assert set(known) >= {"options.json", "weights.hdf5"}
    assert sha256(SHIPPED_DIR / "weights.hdf5") == known["weights.hdf5"]


def test_garbage_written_mid_file_is_refused_by_the_sha256(tmp_path):
    model = _copy_model(tmp_path)
    weights = model / "weights.hdf5"
    with open(weights, "r+b") as handle:
        handle.seek(weights.stat().st_size // 2)
        handle.write(np.random.default_rng(0).bytes(4096))
    with pytest.raises(DataError, match=r"weights.hdf5: sha256 .* differs from .* recorded in .*weights.sha256"):
        load_bilm(model / "options.json", weights)


@needs_fixtures
def test_nan_weights_are_refused_naming_the_dataset(tmp_path):
    model = _copy_model(tmp_path, FIXTURES, ("options.json", "lm_weights.hdf5"))
    with h5py.File(model / "lm_weights.hdf5", "r+") as handle:
        data = handle["CNN_proj/W_proj"][...]
        data[0, 0] = np.nan
        handle["CNN_proj/W_proj"][...] = data
    with pytest.raises(DataError, match="dataset 'CNN_proj/W_proj' holds 1 NaN or infinite values"):
        load_bilm(model / "options.json", model / "lm_weights.hdf5")


@needs_fixtures
@pytest.mark.parametrize("n_layers, message", [(1, "biLM datasets are not used by the options \\(n_layers=1"),
                                              (0, "key 'lstm.n_layers' expected an integer >= 1, found 0")])
def test_options_that_do_not_fit_the_weights_are_refused(tmp_path, n_layers, message):
    model = _copy_model(tmp_path, FIXTURES, ("options.json", "lm_weights.hdf5"))
    options = json.loads((model / "options.json").read_text())
    assert options["lstm"]["n_layers"] == 2
    options["lstm"]["n_layers"] = n_layers
    (model / "options.json").write_text(json.dumps(options))
    with pytest.raises(DataError, match=message):
        load_bilm(model / "options.json", model / "lm_weights.hdf5")


class NanAt:
    """A biLM layer source (as the activation cache gives) whose example ``bad`` holds a NaN: corrupt activations."""

    def __init__(self, examples, bad: int) -> None:
        rng = np.random.default_rng(0)
        self.arrays = [rng.normal(size=(3, len(e["tokens"]), 4)).astype(np.float32) for e in examples]
        self.arrays[bad][1, 0, 2] = np.nan

    def get(self, index: int) -> np.ndarray:
        return self.arrays[index]


def test_a_nan_loss_stops_training_naming_the_epoch_and_step(tmp_path):
    torch.manual_seed(0)
    task = TinyTask()
    train = read_tsv(REPO / "tests/tiny_task/samples/train.tsv")
    for i, e in enumerate(train):
        e["_index"] = i
    embedder = TaskEmbedder(None, False, ElmoSettings(dropout=0.0), 3, 4)
    model = TaskModel(embedder, task.build_head({}, {"tokens": embedder.input_dim}, 0))
    collator = Collator(task, None, {"tokens": NanAt(train, bad=len(train) - 1)})
    cfg = TrainerConfig(batch_size=len(train), max_epochs=2, progress=False)  # one batch an epoch: step 0
    with pytest.raises(TrainingError, match=r"loss is nan at epoch 0, step 0"):
        fit(model, task, train, train, collator, collator, cfg, tmp_path, seed=1)


def test_perplexity_refuses_a_nan_softmax_in_one_line(tmp_path, capsys):
    from elmo_bench.commands.main import main

    model = _copy_model(tmp_path, files=("options.json", "weights.hdf5", "vocab.txt"))  # no weights.sha256
    with h5py.File(model / "weights.hdf5", "r+") as handle:
        handle["softmax/b"][3] = np.nan
    (tmp_path / "held.txt").write_text("the cat sat .\n")
    code = main(["perplexity", "--options", str(model / "options.json"), "--weights", str(model / "weights.hdf5"),
                 "--vocab", str(model / "vocab.txt"), "--input", str(tmp_path / "held.txt")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "dataset 'softmax/b' holds 1 NaN or infinite values" in err[0]
