"""``encoder=python encoder._target_=...``: a user class from tests/ through Hydra's instantiate, end to end."""
from __future__ import annotations

import json
import os

import pytest
import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.build import build_encoder
from tests.conftest import REPO
from tests.user_encoder.hashing import HashingEncoder
from tests.warm_python import run_python

TARGET = "tests.user_encoder.hashing.HashingEncoder"


def test_instantiate_passes_the_other_keys_and_keeps_the_class_layers():
    encoder = build_encoder({"kind": "python", "_target_": TARGET, "dim": 8, "seed": 3})
    sentences = [["a", "b", "c"], ["b"]]
    layers, mask = encoder.layers(sentences)
    expected, _ = HashingEncoder(dim=8, seed=3).layers(sentences)
    assert torch.equal(layers, expected) and encoder.num_layers == 2 and encoder.dim == 8
    assert encoder.identity() == {"kind": "python", "target": TARGET, "dim": 8, "seed": 3, "class_kind": "hashing"}
    # layer 1 of "b" in "a b c" is the mean of its neighbours' layer 0, as the class says
    torch.testing.assert_close(layers[0, 1, 1], (layers[0, 0, 0] + layers[0, 0, 2]) / 2)


def test_a_class_that_is_no_encoder_or_does_not_import_is_one_line():
    with pytest.raises(ConfigError, match="is not an Encoder: it lacks identity, layers, num_layers, dim"):
        build_encoder({"kind": "python", "_target_": "collections.OrderedDict"})
    with pytest.raises(ConfigError, match="encoder._target_=no.such.Class could not be built"):
        build_encoder({"kind": "python", "_target_": "no.such.Class"})


def test_run_py_with_a_user_class_trains_and_records_its_identity(tmp_path):
    done = run_python(["run.py", "task=ner", "data=ner_sample", "embedder=glove_elmo",
                       "encoder=python", f"encoder._target_={TARGET}", "+encoder.dim=8", "logger=disabled",
                       "progress=false", "trainer.max_epochs=1", "task.head.lstm_hidden=[8,8]",
                       "task.head.char_filters=4", f"paths.results_dir={tmp_path / 'results'}",
                       f"paths.cache_dir={tmp_path / 'cache'}", f"hydra.run.dir={tmp_path / 'run'}"],
                      cwd=REPO, timeout=600,
                      env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["encoder"] == {"kind": "python", "target": TARGET, "dim": 8, "seed": 0, "class_kind": "hashing",
                                  "layers": 2, "layer_precision": "fp16"}  # the fp16 cache's layers reach the head
    assert len(results["mixes"]["input"]["weights"]) == 2


def test_elmo_mixes_any_encoder_with_its_own_number_of_layers():
    from elmo_bench.modules.elmo import Elmo

    encoder = HashingEncoder(dim=6)
    elmo = Elmo(encoder, num_mixes=2, dropout=0.0, mode="average")
    sentences = [["a", "b", "c"], ["d"]]
    mixes, mask = elmo(sentences)
    layers, _ = encoder.layers(sentences)
    assert len(elmo.mixes[0].scalars) == 2 and mask.tolist() == [[True] * 3, [True, False, False]]
    for mixed in mixes:  # average mode: gamma (1) times the mean of the two layers
        torch.testing.assert_close(mixed, layers.mean(dim=1))
