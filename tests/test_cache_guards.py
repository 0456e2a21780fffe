"""Issue 34 item 3: the activation cache never serves what a correct run would not compute. An entry is written
only from a complete, finite computation; its key is compared on every hit; a missing file is a rebuild; a read-only
cache directory is one line; fp16 entries refuse layers beyond +-65504 unless ``encoder.cache_dtype=fp32``. Plus
the hdf5 / embed / user-encoder refusals that were tracebacks. Encoders here are small classes with known values."""
from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

import elmo_bench.encoders.cache as cache_module
from elmo_bench.base import integrity
from elmo_bench.base.errors import ConfigError, DataError
from elmo_bench.encoders.cache import ActivationCache, stream_hash
from elmo_bench.encoders.cache_read import LiveLayers
from tests.conftest import REPO
from tests.warm_python import run_python

SENTENCES = [["The", "cat", "sat", "."], ["Dogs", "bark"], ["The", "cat", "sat", "."]]
OTHER = [["Another", "stream"]]


class ValueEncoder:
    """Two layers of width 3: layer 0 = the word's length, layer 1 = ``value`` (known numbers, any magnitude)."""

    num_layers, dim, whole_sequences = 2, 3, True

    def __init__(self, value: float = 1.0, width: int = 3) -> None:
        self.value, self.width = value, width

    def identity(self) -> dict:
        return {"kind": "values", "name": f"v{self.value}"}

    def layers(self, sentences):
        longest = max(len(s) for s in sentences)
        out = torch.zeros(len(sentences), 2, longest, self.width)
        mask = torch.zeros(len(sentences), longest, dtype=torch.bool)
        for i, words in enumerate(sentences):
            out[i, 0, : len(words)] = torch.tensor([float(len(w)) for w in words])[:, None]
            out[i, 1, : len(words)] = self.value
            mask[i, : len(words)] = True
        return out, mask


def _entries(cache_dir: Path) -> list[Path]:
    return sorted(p for p in cache_dir.iterdir() if not p.name.startswith("."))


def _cache(cache_dir: Path, encoder=None, **kw) -> ActivationCache:
    return ActivationCache(cache_dir, encoder or ValueEncoder(), progress=False, **kw)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_layers_are_refused_with_and_without_the_cache(tmp_path, value):
    with pytest.raises(ConfigError, match=r"encoder values v(nan|inf): layer 1 of its output is not finite"):
        _cache(tmp_path / "cache", ValueEncoder(value)).layers(SENTENCES)
    assert _entries(tmp_path / "cache") == [] and list((tmp_path / "cache").iterdir()) == []  # nothing stored
    with pytest.raises(ConfigError, match=r"layer 1 of its output is not finite"):
        LiveLayers(ValueEncoder(value), SENTENCES).get(0)


def test_layers_beyond_fp16_are_refused_unless_the_cache_stores_fp32(tmp_path):
    big = ValueEncoder(1e5)
    with pytest.raises(ConfigError, match=r"encoder values v100000.0: layer 1 reaches 100000, beyond the fp16 "
                                          r"activation cache's range \(\+-65504\); set encoder.cache_dtype=fp32"):
        _cache(tmp_path / "cache", big).layers(SENTENCES)
    assert list((tmp_path / "cache").iterdir()) == []
    wide = _cache(tmp_path / "cache", big, dtype="fp32")
    layers = wide.layers(SENTENCES)
    assert layers.dtype == "fp32" and layers.meta["dtype"] == "fp32"
    np.testing.assert_array_equal(layers.get(1), [[[4.0] * 3, [4.0] * 3], [[1e5] * 3, [1e5] * 3]])
    # fp16 keeps the old key exactly (old entries still hit); fp32 has a key of its own
    plain = _cache(tmp_path / "cache").key(SENTENCES)
    assert plain == f"v2-{_cache(tmp_path, ValueEncoder()).bilm_id}-{stream_hash(SENTENCES)}-segall"
    assert wide.key(SENTENCES) == f"v2-{wide.bilm_id}-{stream_hash(SENTENCES)}-segall-fp32"
    assert (_entries(tmp_path / "cache")[0] / "layers.f32").is_file()
    with pytest.raises(ConfigError, match="encoder.cache_dtype expected one of fp16, fp32, found 'fp8'"):
        _cache(tmp_path / "cache", dtype="fp8")


def test_an_entry_copied_under_another_key_is_rebuilt_not_served(tmp_path, caplog):
    cache_dir = tmp_path / "cache"
    _cache(cache_dir).layers(OTHER)
    (source,) = _entries(cache_dir)
    wanted = _cache(cache_dir).key(SENTENCES)
    shutil.copytree(source, cache_dir / wanted)  # a whole, self-consistent entry, but of another token stream
    integrity._HASHED.clear()
    caplog.set_level(logging.INFO, logger="elmo_bench.encoders.cache")
    layers = _cache(cache_dir).layers(SENTENCES)
    assert "its meta.json names key" in caplog.text and "activation cache miss" in caplog.text
    assert len(layers) == 3 and layers.get(1).shape == (2, 2, 3) and layers.meta["key"] == wanted
    np.testing.assert_array_equal(layers.get(1)[0, :, 0], [4.0, 4.0])  # "Dogs", "bark"


@pytest.mark.parametrize("name", ["meta.json", "rows.npy", "integrity.sha256"])
def test_a_missing_file_in_an_entry_means_a_rebuild(tmp_path, caplog, name):
    cache_dir = tmp_path / "cache"
    _cache(cache_dir).layers(SENTENCES)
    (entry,) = _entries(cache_dir)
    (entry / name).unlink()
    integrity._HASHED.clear()
    caplog.set_level(logging.INFO, logger="elmo_bench.encoders.cache")
    layers = _cache(cache_dir).layers(SENTENCES)  # before: "could not be replaced (permissions?)" for meta.json
    assert "rebuilding it" in caplog.text and "activation cache stored" in caplog.text
    assert (entry / name).is_file() and layers.get(0).shape == (2, 4, 3)


def _read_only(monkeypatch) -> None:
    """What a read-only cache directory does (the tests run as root, whom chmod does not stop)."""
    def refuse(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(cache_module, "owned_temp_dir", refuse)
    monkeypatch.setattr(cache_module, "mark_as_temporary", refuse)


@pytest.mark.parametrize("corrupt", [False, True])
def test_a_read_only_cache_directory_is_one_line(tmp_path, monkeypatch, corrupt):
    cache_dir = tmp_path / "cache"
    if corrupt:
        _cache(cache_dir).layers(SENTENCES)
        (entry,) = _entries(cache_dir)
        (entry / "meta.json").write_text("{")
        integrity._HASHED.clear()
    else:
        cache_dir.mkdir()
    _read_only(monkeypatch)
    with pytest.raises(ConfigError, match=rf"activation cache directory {cache_dir}: cannot write the entry v2-\S+ "
                                          r"\(Permission denied\); make it writable"):
        _cache(cache_dir).layers(SENTENCES)


def test_a_user_encoder_of_the_wrong_width_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match=r"encoder values v1.0 returned layers of shape \(2, 2, 4, 5\), expected "
                                          r"\(batch, layers, words, dim\) = \(2, 2, 4, 3\)"):  # 2 distinct
        _cache(tmp_path / "cache", ValueEncoder(width=5)).layers(SENTENCES)


def test_an_hdf5_file_whose_sentence_to_index_is_not_json_is_one_line(tmp_path):
    from elmo_bench.encoders.hdf5 import Hdf5Encoder

    path = tmp_path / "layers.hdf5"
    for raw in ("{not json", "[1, 2]"):
        with h5py.File(path, "w") as out:
            out.create_dataset("0", data=np.zeros((2, 3, 4), dtype=np.float32))
            out.create_dataset("sentence_to_index", (1,), dtype=h5py.string_dtype())[0] = raw
        with pytest.raises(DataError, match=rf"{path}: sentence_to_index is not a JSON"):
            Hdf5Encoder(path)


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="needs a directory nobody may write (/sys)")
def test_embed_into_a_directory_that_cannot_be_written_is_one_line(tmp_path):
    source = tmp_path / "s.txt"
    source.write_text("The cat sat .\n")
    unwritable = "/sys/elmo_bench_embed.hdf5" if os.geteuid() == 0 else str(tmp_path / "ro" / "out.hdf5")
    if os.geteuid() != 0:
        (tmp_path / "ro").mkdir(mode=0o555)
    done = run_python(["-m", "elmo_bench", "embed", "--encoder", "python", "--model",
                       "tests.user_encoder.hashing.HashingEncoder", "--input", str(source), "--output",
                       unwritable], cwd=REPO, timeout=300,
                      env={**os.environ, "PYTHONPATH": str(REPO)})
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-2000:]
    assert lines[0].startswith(f"error: --output {unwritable}: its directory") and "cannot be written" in lines[0]


def test_embed_refuses_non_finite_layers_and_writes_nothing(tmp_path):
    from elmo_bench.commands.embed import embed_file

    source = tmp_path / "s.txt"
    source.write_text("The cat sat .\nDogs bark\n")
    with pytest.raises(ConfigError, match=r"encoder values vnan: layer 1 of its output is not finite"):
        embed_file(ValueEncoder(float("nan")), source, tmp_path / "out.hdf5", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.txt"]
    assert embed_file(ValueEncoder(2.0), source, tmp_path / "out.hdf5", progress=False) == 2
