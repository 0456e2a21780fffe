"""Activation cache: hit and miss, equality with the live biLM, atomicity of writes."""
from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.bilm.weights import bilm_identity, load_bilm
from elmo_bench.encoders.cache import ActivationCache
from elmo_bench.encoders.cache_fill import segments
from elmo_bench.encoders.cache_read import LiveLayers
from tests.conftest import FIXTURES, needs_fixtures

pytestmark = needs_fixtures
SENTENCES = [["The", "cat", "sat", "."], ["Dogs", "bark"], ["A", "much", "longer", "sentence", "here", "now", "."], []]


@pytest.fixture(scope="module")
def bilm():
    return load_bilm(FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5")


def _cache(tmp_path, bilm, **kw):
    ident = bilm_identity(FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5")
    return ActivationCache(tmp_path, bilm, ident, progress=False, **kw)


def test_miss_then_hit_and_values_match_live(tmp_path, bilm, caplog):
    caplog.set_level(logging.INFO, logger="elmo_bench.encoders.cache")
    first = _cache(tmp_path, bilm).layers(SENTENCES, name="x")
    assert "activation cache miss" in caplog.text
    caplog.clear()
    second = _cache(tmp_path, bilm).layers(SENTENCES, name="x")
    assert "activation cache hit" in caplog.text and "miss" not in caplog.text
    with torch.no_grad():
        for i, sentence in enumerate(SENTENCES[:3]):
            live = bilm(batch_to_ids([sentence])).layers[0].numpy()
            np.testing.assert_allclose(second.get(i), live, atol=2e-3, rtol=2e-3)  # fp16 storage
            assert first.get(i).shape == (3, len(sentence), 32)
    assert second.get(3).shape == (3, 0, 32)


def test_different_stream_is_a_different_entry(tmp_path, bilm):
    cache = _cache(tmp_path, bilm)
    cache.layers(SENTENCES[:2])
    cache.layers(SENTENCES[1:3])
    assert len([p for p in tmp_path.iterdir() if not p.name.startswith(".")]) == 2


def test_killed_write_leaves_nothing_that_is_read(tmp_path, bilm, monkeypatch):
    import elmo_bench.encoders.cache as cache_module

    def explode(*args, **kwargs):
        raise KeyboardInterrupt("killed half-way")

    monkeypatch.setattr(cache_module, "compute_layers", explode)
    with pytest.raises(KeyboardInterrupt):
        _cache(tmp_path, bilm).layers(SENTENCES)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    # a leftover temp dir from a hard kill (no cleanup ran) is never taken for an entry
    (tmp_path / ".stale.tmp").mkdir()
    result = _cache(tmp_path, bilm).layers(SENTENCES)
    assert result.get(0).shape == (3, 4, 32)


def test_long_sequences_go_in_segments_and_live_equals_cached(tmp_path, bilm):
    long = [[f"w{i}" for i in range(23)]]
    cached = _cache(tmp_path, bilm, max_segment=10).layers(long)
    live = LiveLayers(bilm, long, max_segment=10)
    np.testing.assert_allclose(cached.get(0), live.get(0), atol=2e-3, rtol=2e-3)
    assert segments(23, 10) == [(0, 10), (10, 20), (20, 23)]
    with torch.no_grad():  # the first segment equals the biLM on those 10 tokens alone
        alone = bilm(batch_to_ids([long[0][:10]])).layers[0].numpy()
    np.testing.assert_allclose(live.get(0)[:, :10], alone, atol=1e-5)


def test_repeated_sequences_are_computed_once(tmp_path, bilm):
    from elmo_bench.encoders.cache import deduplicate

    repeated = [SENTENCES[0], SENTENCES[1], SENTENCES[0], SENTENCES[0]]
    distinct, rows = deduplicate(repeated)
    assert distinct == [SENTENCES[0], SENTENCES[1]] and rows.tolist() == [0, 1, 0, 0]
    entry = _cache(tmp_path, bilm).layers(repeated)
    assert int(entry.offsets[-1]) == 6  # 4 + 2 tokens stored, not 14
    np.testing.assert_array_equal(entry.get(2), entry.get(0))
    assert len(entry) == 4
