"""encoder=manylangs against the ELMoForManyLangs package itself: a model built with random weights by the package
(its Model, EmbeddingLayer and initialisers), saved in its directory layout, embedded by its own Embedder, and read
by our encoder from the files alone. The package is a test-only extra (pip install --no-deps elmoformanylangs
overrides==3.1.0): these tests skip with that reason when it is absent."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from elmo_bench.base.errors import DataError
from elmo_bench.encoders.manylangs import ManyLangsEncoder, read_dictionary

SENTENCES = [["The", "cat", "sat", "."], ["Überraschungsmomentgeschichte", "in", "北京", "!"], ["dog"],
             ["a", "b", "c", "d", "e", "f", "g"]]
WORDS = ["The", "cat", "sat", ".", "in", "dog", "a", "b"]


def _lexicon(symbols: list[str]) -> dict[str, int]:
    return {s: i for i, s in enumerate(symbols)}


def build_with_package(directory: Path, word_dim: int, seed: int = 0) -> None:
    """The package's own model with random weights, saved as a released model directory is laid out."""
    pytest.importorskip("elmoformanylangs", reason="the ELMoForManyLangs package is not installed (test-only: "
                                                   "pip install --no-deps elmoformanylangs overrides==3.1.0)")
    from elmoformanylangs.frontend import Model
    from elmoformanylangs.modules.embedding_layer import EmbeddingLayer

    config = {"encoder": {"name": "elmo", "projection_dim": 6, "cell_clip": 3, "proj_clip": 3, "dim": 10,
                          "n_layers": 2},
              "token_embedder": {"name": "cnn", "activation": "relu", "filters": [[1, 4], [2, 4], [3, 6]],
                                 "n_highway": 2, "word_dim": word_dim, "char_dim": 5,
                                 "max_characters_per_token": 12},
              "classifier": {"name": "sampled_softmax", "n_samples": 10}, "dropout": 0.1}
    torch.manual_seed(seed)
    chars = _lexicon(["<oov>", "<pad>", "<bos>", "<eos>", "<bow>", "<eow>", "\u3000",
                      *sorted({c for s in SENTENCES[:1] for w in s for c in w} | set("abcdefgin"))])
    char_layer = EmbeddingLayer(5, dict(chars), fix_emb=False, embs=None)
    word_layer = EmbeddingLayer(word_dim, _lexicon(["<oov>", "<pad>", "<bos>", "<eos>", *WORDS]), fix_emb=False,
                                embs=None) if word_dim else None
    model = Model(config, word_layer, char_layer, use_cuda=False)
    with torch.no_grad():  # move every parameter off its initialiser's special values (zero biases, ...)
        for parameter in model.parameters():
            parameter.add_(0.3 * torch.randn_like(parameter))
    directory.mkdir(parents=True)
    torch.save(model.token_embedder.state_dict(), directory / "token_embedder.pkl")
    torch.save(model.encoder.state_dict(), directory / "encoder.pkl")
    (directory / "model.json").write_text(json.dumps(config))
    (directory / "config.json").write_text(json.dumps({"config_path": "model.json"}))
    (directory / "char.dic").write_text("".join(f"{s}\t{i}\n" for s, i in chars.items()), encoding="utf-8")
    if word_dim:
        words = _lexicon(["<oov>", "<pad>", "<bos>", "<eos>", *WORDS])
        (directory / "word.dic").write_text("".join(f"{s}\t{i}\n" for s, i in words.items()), encoding="utf-8")


@pytest.mark.parametrize("word_dim", [0, 7])
def test_layers_equal_the_package_sents2elmo_on_a_model_it_built(tmp_path, word_dim):
    build_with_package(tmp_path / "model", word_dim)
    from elmoformanylangs import Embedder

    expected = Embedder(str(tmp_path / "model"), batch_size=64).sents2elmo(SENTENCES, output_layer=-2)
    encoder = ManyLangsEncoder(tmp_path / "model")
    assert (encoder.num_layers, encoder.dim) == (3, 12)
    layers, mask = encoder.layers(SENTENCES)
    assert mask.sum(dim=1).tolist() == [len(s) for s in SENTENCES]
    for i, sentence in enumerate(SENTENCES):
        assert expected[i].shape == (3, len(sentence), 12)
        np.testing.assert_allclose(layers[i, :, : len(sentence)].numpy(), expected[i], rtol=1e-5, atol=1e-5)
        assert torch.all(layers[i, :, len(sentence):] == 0)
    # each sentence alone gives the same layers (stateless, batch-independent)
    alone, _ = encoder.layers([SENTENCES[1]])
    torch.testing.assert_close(alone[0], layers[1, :, : len(SENTENCES[1])], rtol=1e-5, atol=1e-6)


def test_the_ideographic_space_line_and_a_bad_directory(tmp_path):
    (tmp_path / "char.dic").write_text("a\t0\n\t1\n<pad>\t2\n", encoding="utf-8")
    assert read_dictionary(tmp_path / "char.dic") == {"a": 0, "\u3000": 1, "<pad>": 2}
    with pytest.raises(DataError, match="config.json: not found"):
        ManyLangsEncoder(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"config_path": "/elsewhere/cnn_50_100_512_4096_sample.json"}))
    with pytest.raises(DataError, match="config_path '/elsewhere/cnn_50_100_512_4096_sample.json' is neither in"):
        ManyLangsEncoder(tmp_path)


def test_run_trains_ner_with_a_manylangs_model(tmp_path):
    build_with_package(tmp_path / "model", 7)
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.experiment import run_experiment
    from tests.test_engine import _cfg

    results = run_experiment(run_config(_cfg(tmp_path, "trainer.max_epochs=1", "embedder=glove_elmo", "encoder=manylangs",
                                  f"encoder.path={tmp_path / 'model'}")), tmp_path / "run")
    assert results["encoder"]["kind"] == "manylangs" and results["encoder"]["layers"] == 3
    assert len(results["mixes"]["input"]["weights"]) == 3


def test_embed_with_a_manylangs_model_writes_its_layers(tmp_path):
    import h5py

    from elmo_bench.commands.main import main

    build_with_package(tmp_path / "model", 7)
    text = tmp_path / "in.txt"
    text.write_text("".join(" ".join(s) + "\n" for s in SENTENCES))
    assert main(["embed", "--encoder", "manylangs", "--model", str(tmp_path / "model"), "--input", str(text),
                 "--output", str(tmp_path / "out.hdf5"), "--device", "cpu"]) == 0
    expected, _ = ManyLangsEncoder(tmp_path / "model").layers(SENTENCES)
    with h5py.File(tmp_path / "out.hdf5", "r") as stored:
        for i, sentence in enumerate(SENTENCES):
            np.testing.assert_allclose(stored[str(i)][()], expected[i, :, : len(sentence)].numpy(), rtol=1e-5,
                                       atol=1e-6)
