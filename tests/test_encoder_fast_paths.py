"""The vectorised paths of the activation cache and encoder=transformers (issue 46 speed) give exactly what the
per-row code they replaced gives: picks of sentences that fit one window, the scattered fp16/fp32 store, the
one-pass value check, and forced-unknown counts reused from planning."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.cache_fill import store
from elmo_bench.encoders.protocol import check_values

SENTENCE = ["Peters", "trained", "a", "bidirectional", "model", "on", "Paris", "."]


def test_fit_picks_are_each_words_first_and_last_subword_by_hand():
    from elmo_bench.encoders.transformers.encoder import TransformersEncoder
    from elmo_bench.encoders.transformers.windows import fit_picks

    word_ids = [[None, 0, 0, 1, None], [None, 0, 1, 1, 1, 2, None], [None, 0, None]]
    picks = fit_picks([3, 7, 9], word_ids)
    assert picks.tolist() == [[3, 0, 0, 1, 2], [3, 1, 0, 3, 3],
                              [7, 0, 1, 1, 1], [7, 1, 1, 2, 4], [7, 2, 1, 5, 5],
                              [9, 0, 2, 1, 1]]
    per_window = [(row, w, k, a, b) for k, (row, ids) in enumerate(zip([3, 7, 9], word_ids))
                  for w, (a, b) in sorted(TransformersEncoder._spans(ids, 99).items())]
    assert [tuple(p) for p in picks.tolist()] == per_window
    assert fit_picks([], []).shape == (0, 5)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_store_writes_each_piece_where_a_row_by_row_copy_does(dtype):
    offsets = np.array([0, 3, 3, 7, 9], dtype=np.int64)  # four sequences of 3, 0, 4 and 2 tokens
    batch = [(3, 0, 2), (0, 0, 3), (2, 1, 4)]  # (sequence, start, end): pieces in length order, as compute_layers
    result = torch.full((3, 2, 3, 4), 7e4)  # (batch, layers, words, dim); padding beyond fp16, never written
    tie = 1 + 2 ** -11  # halfway between two fp16 values: rounds to the even one, 1.0
    values = torch.tensor([tie, 3 * 2 ** -25, -65504.0, 0.1], dtype=torch.float32)  # a subnormal, the fp16 edge
    for row, (_, a, b) in enumerate(batch):
        for t in range(b - a):
            result[row, :, t] = values + row + t
    out = np.zeros((9, 2, 4), dtype=dtype)
    store(out, result, batch, offsets)
    expected = np.zeros_like(out)
    layers = result.permute(0, 2, 1, 3).numpy()  # the row-by-row copy store replaced
    for row, (i, a, b) in enumerate(batch):
        expected[offsets[i] + a: offsets[i] + b] = layers[row, : b - a]
    assert out.tobytes() == expected.tobytes()
    assert out[7, 0, 0] == np.float32(tie).astype(dtype) and np.abs(out.astype(np.float32)).max() < 7e4


def test_one_pass_check_passes_fp16s_edge_and_names_the_layer_of_a_bad_value():
    class Enc:
        pass

    layers = torch.zeros(2, 3, 4, 5)
    layers[0, 1, 2, 3], layers[1, 2, 0, 0] = 65504.0, -65504.0
    check_values(Enc(), layers, 65504.0)  # exactly fp16's largest: stored
    check_values(Enc(), torch.zeros(0, 3, 0, 5), 65504.0)
    beyond = layers.clone()
    beyond[1, 2, 3, 4] = -65504.01
    with pytest.raises(ConfigError, match="layer 2 reaches 65504"):
        check_values(Enc(), beyond, 65504.0)
    check_values(Enc(), beyond)  # no limit: the fp32 cache takes it
    for bad in (float("nan"), float("-inf")):
        broken = layers.clone()
        broken[0, 1, 0, 0] = bad
        with pytest.raises(ConfigError, match="layer 1 of its output is not finite"):
            check_values(Enc(), broken)


def test_forced_unknown_counts_taken_from_planning_equal_a_fresh_count():
    pytest.importorskip("transformers")
    from elmo_bench.encoders.transformers.encoder import TransformersEncoder
    from tests.hf_tiny import tiny_models

    directory: Path = tiny_models()["bert"]
    planned = TransformersEncoder(str(directory), max_length=12)  # content 10: words of more than 5 subwords
    sentences = [SENTENCE, SENTENCE[:3], []]
    fresh = TransformersEncoder(str(directory), max_length=12).forced_unknown(sentences)
    planned.plan(sentences)
    assert len(planned._forced_seen) == 2
    assert planned.forced_unknown(sentences) == fresh == [1, 0, 0]
    assert planned._forced_seen == {}  # taken, and forgotten
    assert planned.forced_unknown(sentences) == fresh  # counted again when not planned


class _PaddedOnly:
    """The same encoder seen through the protocol's required members only (no ``packed_layers``): the cache then
    takes the padded path, the one every user encoder takes."""

    whole_sequences = True

    def __init__(self, inner):
        self.inner, self.num_layers, self.dim = inner, inner.num_layers, inner.dim

    def identity(self):
        return self.inner.identity()

    def layers(self, sentences):
        return self.inner.layers(sentences)


@pytest.mark.parametrize("kind, options", [("bert", {"max_length": 12, "layers": [0, 2]}),
                                           ("gpt2", {}), ("bert", {"pooling": "mean", "max_length": 12})])
def test_packed_layers_are_the_padded_layers_words_and_fill_the_cache_with_the_same_bytes(tmp_path, kind, options):
    """``packed_layers`` (no padding, the cache's row layout) gives each sentence's words in order exactly as
    ``layers`` gives them at the mask, long sentences' windows included; and a cache entry filled through it is
    byte-identical to one filled through ``layers`` (the padded gather), in fp16 and fp32."""
    pytest.importorskip("transformers")
    from elmo_bench.encoders.cache import ActivationCache
    from elmo_bench.encoders.protocol import packed
    from elmo_bench.encoders.transformers.encoder import TransformersEncoder
    from tests.hf_tiny import tiny_models

    encoder = TransformersEncoder(str(tiny_models()[kind]), **options)
    sentences = [SENTENCE * 3, [], SENTENCE[:2], ["Paris"], SENTENCE]  # the first spans several windows at 12
    rows = packed(encoder)(sentences)
    padded, mask = encoder.layers(sentences)
    assert rows.shape == (sum(map(len, sentences)), encoder.num_layers, encoder.dim) and rows.dtype == torch.float32
    assert torch.equal(rows, padded.transpose(1, 2)[mask])
    assert packed(_PaddedOnly(encoder)) is None
    for dtype in ("fp16", "fp32"):
        files = []
        for name, enc in (("packed", encoder), ("padded", _PaddedOnly(encoder))):
            cache = ActivationCache(tmp_path / dtype / name, enc, encoder_id="same", progress=False, dtype=dtype,
                                    batch_tokens=16)
            entry = cache.layers(sentences, name="split")
            files.append(np.asarray(entry.data).tobytes())
            assert np.array_equal(entry.get(0), padded[0, :, :len(sentences[0])].numpy().astype(
                np.float16 if dtype == "fp16" else np.float32).astype(np.float32))
        assert files[0] == files[1]


def test_a_user_encoders_packed_layers_of_another_shape_is_one_line(tmp_path):
    """An encoder's optional ``packed_layers`` is checked as ``layers`` is: a wrong shape is one ConfigError line
    naming the encoder and the expected (words, layers, dim), and no cache entry is left."""
    from elmo_bench.encoders.cache import ActivationCache

    class Packed:
        num_layers, dim, whole_sequences = 2, 3, True

        def identity(self):
            return {"kind": "packed-test"}

        def layers(self, sentences):
            longest = max(map(len, sentences))
            return torch.zeros(len(sentences), 2, longest, 3), torch.ones(len(sentences), longest, dtype=torch.bool)

        def packed_layers(self, sentences):
            return torch.zeros(sum(map(len, sentences)), 3, 2)         # layers and dim swapped

    with pytest.raises(ConfigError, match=r"encoder packed-test returned packed layers of shape \(3, 3, 2\), "
                                          r"expected \(words, layers, dim\) = \(3, 2, 3\)"):
        ActivationCache(tmp_path, Packed(), progress=False).layers([["a", "b"], ["c"]], name="split")
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and p.name != ".elmo_bench.lock"]
