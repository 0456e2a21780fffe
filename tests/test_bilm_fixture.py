"""Our biLM against the activations bilm-tf computed for its own fixture model."""
from __future__ import annotations

import json

import h5py
import numpy as np
import torch

from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.bilm.weights import load_bilm
from tests.conftest import FIXTURES, needs_fixtures

pytestmark = needs_fixtures
ATOL = 1e-5


def _fixture_model(stateful: bool = False):
    return load_bilm(FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5", stateful=stateful)


def _batches() -> list[list[list[str]]]:
    lists = json.loads((FIXTURES / "sentences.json").read_text())
    return [[lists[k][b].split() for k in range(3)] for b in range(10)]


def _expected(k: int, b: int) -> np.ndarray:
    with h5py.File(FIXTURES / f"lm_embeddings_{k}.hdf5", "r") as f:
        return f[str(b)][...]


def _top_as_fixture(layers: torch.Tensor, row: int, n: int) -> np.ndarray:
    top = layers[row, -1, :n].numpy()
    half = top.shape[-1] // 2
    return np.stack([top[:, :half], top[:, half:]])


def test_token_layer_matches_bilm_tf():
    model = _fixture_model()
    vocab = (FIXTURES / "vocab_test.txt").read_text(encoding="utf-8").splitlines()
    with h5py.File(FIXTURES / "elmo_token_embeddings.hdf5", "r") as f:
        expected = f["embedding"][...]
    with torch.no_grad():
        got = model.token_encoder(batch_to_ids([[w] for w in vocab]))[:, 0].numpy()
    assert got.shape == expected.shape == (458, 16)
    np.testing.assert_allclose(got, expected, atol=ATOL, rtol=0)


def test_stateful_top_layer_matches_all_ten_batches():
    model = _fixture_model(stateful=True)
    for b, batch in enumerate(_batches()):
        with torch.no_grad():
            out = model(batch_to_ids(batch))
        for k, sentence in enumerate(batch):
            np.testing.assert_allclose(_top_as_fixture(out.layers, k, len(sentence)), _expected(k, b), atol=ATOL, rtol=0)


def test_stateless_matches_first_batch_and_is_batch_independent():
    model = _fixture_model()
    batches = _batches()
    with torch.no_grad():
        first = model(batch_to_ids(batches[0]))
        for k, sentence in enumerate(batches[0]):
            np.testing.assert_allclose(_top_as_fixture(first.layers, k, len(sentence)), _expected(k, 0), atol=ATOL, rtol=0)
        # a later batch is not influenced by earlier ones (stateless) …
        again = model(batch_to_ids(batches[0]))
        assert torch.equal(first.layers, again.layers)
        # … nor by its batch mates: each sentence alone, and in a batch with different mates, gives the same layers
        mixed = [batches[0][1], batches[5][0], batches[3][2], batches[0][0]]
        together = model(batch_to_ids(mixed))
        for row, sentence in enumerate(mixed):
            alone = model(batch_to_ids([sentence]))
            n = len(sentence)
            torch.testing.assert_close(together.layers[row, :, :n], alone.layers[0, :, :n], atol=1e-6, rtol=0)
            assert together.mask[row].sum() == n
            assert torch.all(together.layers[row, :, n:] == 0)


def test_stateful_differs_after_first_batch_and_reset_restores():
    model = _fixture_model(stateful=True)
    batches = _batches()
    with torch.no_grad():
        first = model(batch_to_ids(batches[0])).layers
        second = model(batch_to_ids(batches[0])).layers
        assert not torch.allclose(first, second)
        model.reset_states()
        assert torch.equal(model(batch_to_ids(batches[0])).layers, first)


def test_layer_zero_is_token_layer_twice_and_shapes():
    model = _fixture_model()
    with torch.no_grad():
        out = model(batch_to_ids([["Hello", "world", "."], ["A"]]))
        bounded = model(batch_to_ids([["Hello", "world", "."], ["A"]]), keep_boundaries=True)
    assert out.layers.shape == (2, 3, 3, 32)
    assert bounded.layers.shape == (2, 3, 5, 32)
    assert out.mask.tolist() == [[True, True, True], [True, False, False]]
    assert bounded.mask.tolist() == [[True] * 5, [True, True, True, False, False]]
    torch.testing.assert_close(out.layers[:, 0, :, :16], out.layers[:, 0, :, 16:])
    torch.testing.assert_close(bounded.layers[:, :, 1:4] * out.mask[:, None, :, None], out.layers)


def test_type_cache_gives_the_same_vectors():
    model = _fixture_model()
    ids = batch_to_ids([["the", "cat", "the", "dog"], ["cat", "zebra"]])
    with torch.no_grad():
        cached_first = model.token_encoder(ids)
        cached_again = model.token_encoder(ids)
    direct = model.token_encoder.encode_words(ids.view(-1, 50)).view(2, 4, -1).detach()
    mask = (ids[:, :, 0] > 0).unsqueeze(-1)
    torch.testing.assert_close(cached_first, direct * mask)
    torch.testing.assert_close(cached_again, cached_first)
    assert len(model.token_encoder._type_cache) == 4
