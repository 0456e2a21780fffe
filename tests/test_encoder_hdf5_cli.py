"""``embed``/``probe-pos``/``probe-wsd`` with ``--encoder``, and ``encoder=hdf5`` reading what ``embed --layers all``
wrote: the same results.json metrics as ``encoder=bilm`` with the same weights and seed."""
from __future__ import annotations

import json

import h5py
import numpy as np
import pytest
import torch

from elmo_bench.base.errors import DataError
from tests.conftest import FIXTURES, REPO, needs_fixtures

SAMPLES = REPO / "tasks" / "ner" / "samples"


def sample_sentences() -> list[list[str]]:
    """Every sentence of the bundled NER sample (train, dev, test), as the NER reader tokenises them."""
    from elmo_bench.data.conll2003 import read_conll

    return [example["tokens"] for split in ("train", "dev", "test")
            for example in read_conll(SAMPLES / f"sample.{split}")]


def _embed(tmp_path, sentences, *args: str):
    from elmo_bench.commands.main import main

    text = tmp_path / "sentences.txt"
    text.write_text("".join(" ".join(s) + "\n" for s in sentences))
    out = tmp_path / "layers.hdf5"
    assert main(["embed", "--input", str(text), "--output", str(out), "--layers", "all", "--device", "cpu",
                 *args]) == 0
    return out


@needs_fixtures
def test_hdf5_of_embed_gives_the_same_metrics_as_the_bilm_with_the_same_weights_and_seed(tmp_path):
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.experiment import run_experiment
    from tests.test_engine import _cfg

    path = _embed(tmp_path, sample_sentences(), "--options", str(FIXTURES / "options.json"), "--weights",
                  str(FIXTURES / "lm_weights.hdf5"))
    bilm = run_experiment(run_config(_cfg(tmp_path, "trainer.max_epochs=2", "embedder=glove_elmo")), tmp_path / "bilm")
    hdf5 = run_experiment(run_config(_cfg(tmp_path, "trainer.max_epochs=2", "embedder=glove_elmo", "encoder=hdf5",
                               f"encoder.path={path}")), tmp_path / "hdf5")
    assert hdf5["encoder"]["kind"] == "hdf5" and bilm["encoder"]["kind"] == "bilm"
    assert hdf5["encoder"]["layers"] == bilm["encoder"]["layers"] == 3
    assert hdf5["metrics"] == bilm["metrics"]
    assert [h["dev_metric"] for h in hdf5["history"]] == [h["dev_metric"] for h in bilm["history"]]


@needs_fixtures
def test_bilm_encoder_identity_is_the_old_cache_key(tmp_path):
    from elmo_bench.bilm.weights import bilm_identity
    from elmo_bench.encoders.bilm.encoder import load_bilm_encoder
    from elmo_bench.encoders.cache import ActivationCache

    options, weights = FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5"
    encoder = load_bilm_encoder(options, weights)
    old_key_part = bilm_identity(options, weights)
    assert encoder.identity() == {"kind": "bilm", "hash": old_key_part}
    key = ActivationCache(tmp_path, encoder).key([["a", "b"]])
    assert key.startswith(f"v2-{old_key_part}-") and key.endswith("-seg256")


def test_a_missing_sentence_or_another_token_count_is_one_line_naming_it(tmp_path):
    from elmo_bench.encoders.hdf5 import Hdf5Encoder

    path = tmp_path / "made.hdf5"
    with h5py.File(path, "w") as out:
        out.create_dataset("0", data=np.ones((2, 3, 4), dtype=np.float32))
        out.create_dataset("1", data=np.full((2, 2, 4), 2.0, dtype=np.float32))
        index = out.create_dataset("sentence_to_index", (1,), dtype=h5py.string_dtype())
        index[0] = json.dumps({"a b c": "0", "x y z": "1"})
    encoder = Hdf5Encoder(path)
    assert (encoder.num_layers, encoder.dim) == (2, 4)
    layers, mask = encoder.layers([["a", "b", "c"], ["a", "b", "c"]])
    assert layers.shape == (2, 2, 3, 4) and bool(torch.all(layers == 1)) and bool(mask.all())
    with pytest.raises(DataError, match=r"sentence 'q r' is not in sentence_to_index") as missing:
        encoder.layers([["q", "r"]])
    with pytest.raises(DataError, match=r"sentence 'x y z' has shape \(2, 2, 4\), expected \(2, 3, 4\)") as count:
        encoder.layers([["x", "y", "z"]])
    for error in (missing, count):
        assert "\n" not in str(error.value) and str(path) in str(error.value)


transformers = pytest.importorskip("transformers", reason="transformers is not installed (pip install -e '.[dev]')")


@pytest.mark.parametrize("kind", ["bert", "roberta", "gpt2"])
def test_embed_with_a_transformer_writes_every_hidden_state(tmp_path, kind):
    from elmo_bench.encoders.transformers.encoder import TransformersEncoder
    from tests.hf_tiny import tiny_models

    model = tiny_models()[kind]
    sentences = [["Paris", "is", "big", "."], ["A", "model"]]
    path = _embed(tmp_path, sentences, "--encoder", "transformers", "--model", str(model), "--pooling", "mean")
    expected, _ = TransformersEncoder(str(model), pooling="mean").layers(sentences)
    with h5py.File(path, "r") as stored:
        index = json.loads(stored["sentence_to_index"][0])
        for i, sentence in enumerate(sentences):
            data = stored[index[" ".join(sentence)]][()]
            assert data.shape == (3, len(sentence), 32)
            np.testing.assert_allclose(data, expected[i, :, : len(sentence)].numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["bert", "roberta", "gpt2"])
def test_probe_pos_takes_the_encoder_options(tmp_path, capsys, kind):
    from elmo_bench.commands.main import main
    from tests.hf_tiny import tiny_models
    from tests.test_pos_probe_cli import DEV, TEST, TRAIN, conllu

    data = tmp_path / "ewt"
    data.mkdir()
    for split, sentences in (("train", TRAIN), ("dev", DEV), ("test", TEST)):
        (data / f"en_ewt-ud-{split}.conllu").write_text(conllu(sentences))
    argv = ["probe-pos", "--encoder", "transformers", "--model", str(tiny_models()[kind]), "--pooling", "last",
            "--data-dir", str(data), "--cache-dir", str(tmp_path / "cache"), "--l2-grid", "1e-2", "--no-glove",
            "--no-progress", "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(printed["test"]) == {"layer_0", "layer_1", "layer_2", "average", "most_frequent_tag"}
    assert printed["encoder"].startswith("transformers-") and "bilm" not in printed   # issue 56: no "bilm" key
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["encoder"]["kind"] == "transformers" and results["encoder"]["pooling"] == "last"
    assert results["bilm"] is None


@pytest.mark.parametrize("kind", ["bert", "roberta", "gpt2"])
def test_probe_wsd_takes_the_encoder_options(tmp_path, capsys, monkeypatch, kind):
    nltk = pytest.importorskip("nltk", reason="nltk is a dependency of the WSD probe (pip install nltk)")
    from elmo_bench.commands.main import main
    from tests.hf_tiny import tiny_models
    from tests.test_wsd_probe import SEMCOR, XML

    monkeypatch.setattr(nltk.data, "path", list(nltk.data.path))
    (tmp_path / "semcor").mkdir()
    (tmp_path / "semcor" / "brown1_br-z01").write_text(SEMCOR)
    (tmp_path / "eval" / "toy").mkdir(parents=True)
    (tmp_path / "eval" / "toy" / "toy.data.xml").write_text(XML)
    (tmp_path / "eval" / "toy" / "toy.gold.key.txt").write_text(
        "d000.s000.t000 bank%1:17:01::\nd000.s000.t001 river%1:17:00::\nd000.s000.t002 otter%1:05:00::\n")
    code = main(["probe-wsd", "--encoder", "transformers", "--model", str(tiny_models()[kind]),
                 "--semcor", str(tmp_path / "semcor"), "--eval-root", str(tmp_path / "eval"), "--sets", "toy",
                 "--cache-dir", str(tmp_path / "cache"), "--no-wordnet", "--no-progress",
                 "--out", str(tmp_path / "out")])
    assert code == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {"layer_0_f1", "layer_1_f1", "layer_2_f1", "average_f1"} <= set(results["metrics"]["toy"])
    assert results["encoder"]["kind"] == "transformers" and results["main_metric"] == "layer_2_f1"
    # river has one training sense: every layer gets it right
    assert results["data"]["answered_by"]["toy"]["1nn"] == 2
