"""probe=pos reads its features from the activation cache a chunk at a time (issue 58, "Memory"): the lazy reader
(elmo_bench.probe.lib.features.StoredTokens / TokenColumn) gives the bits of the copy it replaces
(layer_features in the cache's dtype, its layer slices and its float32 mean over layers), on an entry's memory map
that lets go of its pages after each read, and the converged probe fitted from it equals the one fitted from the
copy."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from elmo_bench.encoders.cache_read import STORAGE, CachedLayers
from elmo_bench.probe.lib.features import StoredTokens, TokenColumn, layer_column, layer_features, split_tokens
from elmo_bench.probe.lib.ud_data import SPLITS
from elmo_bench.probe.pos.converged import probe_rows

LAYERS, DIM = 3, 5


def _entry(tmp_path, lengths, rows, seed=0):
    """A flat fp16 cache entry (meta.json, offsets.npy, rows.npy, layer file) of distinct sequences of ``lengths``;
    sequence i is distinct row ``rows[i]`` (duplicates share a row, as cache.deduplicate makes them)."""
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    data = (rng.normal(size=(int(offsets[-1]), LAYERS, DIM)) * 3 + 1).astype(np.float16)
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "meta.json").write_text(json.dumps({"num_layers": LAYERS, "dim": DIM, "dtype": "fp16"}))
    np.save(tmp_path / "offsets.npy", offsets)
    np.save(tmp_path / "rows.npy", np.asarray(rows, dtype=np.int64))
    data.tofile(tmp_path / STORAGE["fp16"][1])
    return CachedLayers(tmp_path)


class Counted:
    """A layer source that counts its releases (and has no map of its own)."""

    def __init__(self, source):
        self.source, self.released = source, 0

    def stored(self, index):
        return self.source.stored(index)

    def release(self):
        self.released += 1


def test_reads_equal_the_copy_bit_for_bit(tmp_path):
    """Every token range, every layer and the mean over layers: the values layer_features' fp16 copy holds (its
    layer slices, numpy's float32 mean over the layer axis), whatever the range and the mean's chunk."""
    entry = _entry(tmp_path, [4, 1, 7, 3, 6], [0, 1, 2, 1, 3, 4, 0])      # sequences 1/3 and 0/6 are duplicates
    count = len(entry)
    copy = layer_features(entry, count, None)
    tokens = StoredTokens(Counted(entry), count)
    assert copy.dtype == np.float16 and tokens.shape == copy.shape and tokens.dtype == copy.dtype
    for start, stop in [(0, len(copy)), (0, 1), (3, 9), (5, 6), (10, len(copy)), (7, 7)]:
        assert np.array_equal(tokens.read(start, stop), copy[start:stop])
        for layer in range(LAYERS):
            assert np.array_equal(tokens.read(start, stop, layer), copy[start:stop, layer])
    mean = copy.mean(axis=1, dtype=np.float32)
    for chunk in (1, 4, 4096):
        column = TokenColumn(tokens, None, average_chunk=chunk)
        assert column.dtype == np.float32 and column.shape == mean.shape
        assert np.array_equal(column[:], mean) and np.array_equal(column[3:11], mean[3:11])
    assert np.array_equal(np.asarray(TokenColumn(tokens, 2), dtype=np.float32), copy[:, 2].astype(np.float32))
    assert tokens.source.released > 0                     # every read lets the entry's pages go
    with pytest.raises(TypeError):
        TokenColumn(tokens, 0)[::2]


def test_an_entry_reads_the_same_after_letting_its_pages_go(tmp_path):
    """CachedLayers.release maps the file again: what is read afterwards is what was read before."""
    entry = _entry(tmp_path, [2, 5, 3], [0, 1, 2], seed=3)
    before = [np.array(entry.stored(i)) for i in range(len(entry))]
    old = entry.data
    entry.release()
    assert entry.data is not old
    assert all(np.array_equal(entry.stored(i), b) for i, b in enumerate(before))


def test_split_tokens_leaves_only_a_cache_entry_in_the_cache(tmp_path):
    """A cache entry is read lazily; a source without ``stored`` (cache=false's live layers) is copied once, as
    before; layer_column gives the same rows for both."""
    entry = _entry(tmp_path, [3, 4], [0, 1], seed=1)

    class Live:
        def get(self, index):
            return entry.get(index)

    lazy, copied = split_tokens(entry, 2), split_tokens(Live(), 2)
    assert isinstance(lazy, StoredTokens) and isinstance(copied, np.ndarray) and copied.dtype == np.float32
    for layer in (0, 2, None):
        assert np.array_equal(np.asarray(layer_column(lazy, layer), dtype=np.float32),
                              np.asarray(layer_column(copied, layer), dtype=np.float32))


def test_the_converged_probe_from_the_cache_equals_the_probe_from_the_copy(tmp_path):
    """probe_rows on lazy columns of cache entries (layers and their mean) against the same rows of the fp16 copy:
    the same L2 path, chosen L2, dev and test accuracies, bit for bit."""
    rng = np.random.default_rng(9)
    labels, entries = {}, {}
    for split, sentences in zip(SPLITS, (60, 30, 30)):
        lengths = rng.integers(2, 9, sentences)
        entries[split] = _entry(tmp_path / split, lengths, range(sentences), seed=len(split))
        labels[split] = torch.tensor(rng.integers(0, 3, int(lengths.sum())))
        data = np.asarray(entries[split].data)                       # plant the label in layer 1
        planted = data.copy()
        planted[:, 1, :3] += (15 * np.eye(3)[labels[split].numpy()]).astype(np.float16)
        planted.tofile(tmp_path / split / STORAGE["fp16"][1])
        entries[split] = CachedLayers(tmp_path / split)
    lazy = {s: split_tokens(entries[s], len(entries[s])) for s in SPLITS}
    copy = {s: layer_features(entries[s], len(entries[s]), None) for s in SPLITS}

    def rows(layers):
        return {**{f"layer_{k}": {s: layer_column(layers[s], k) for s in SPLITS} for k in range(LAYERS)},
                "average": {s: layer_column(layers[s], None) for s in SPLITS}}

    grid = [1e-1, 1e-3]
    found, expected = probe_rows(rows(lazy), labels, 3, grid, 500, 1e-4), probe_rows(rows(copy), labels, 3, grid, 500,
                                                                                    1e-4)
    for name, want in expected.items():
        assert found[name] == want
    assert found["layer_1"].test > 90
