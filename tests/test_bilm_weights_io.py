"""bilm-tf weight files: exact round trip and one-line errors for bad files."""
from __future__ import annotations

import json
import shutil

import h5py
import numpy as np
import pytest
import torch

from elmo_bench.base.errors import DataError
from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.bilm.weights import load_bilm, save_bilm
from tests.conftest import FIXTURES, needs_fixtures

pytestmark = needs_fixtures


def _all_datasets(path) -> dict[str, np.ndarray]:
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[...]) if isinstance(obj, h5py.Dataset) else None)
    return out


def test_save_load_round_trip_is_exact(tmp_path):
    model = load_bilm(FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5")
    save_bilm(model, tmp_path / "options.json", tmp_path / "weights.hdf5")
    original, saved = _all_datasets(FIXTURES / "lm_weights.hdf5"), _all_datasets(tmp_path / "weights.hdf5")
    assert original.keys() == saved.keys()
    for name in original:
        assert np.array_equal(original[name], saved[name]), name
    assert json.loads((tmp_path / "options.json").read_text()) == json.loads((FIXTURES / "options.json").read_text())
    reloaded = load_bilm(tmp_path / "options.json", tmp_path / "weights.hdf5")
    ids = batch_to_ids([["A", "round", "trip", "."]])
    with torch.no_grad():
        assert torch.equal(model(ids).layers, reloaded(ids).layers)
    assert not list(tmp_path.glob(".*tmp"))


def _copy_weights(tmp_path, edit) -> str:
    target = tmp_path / "w.hdf5"
    shutil.copy(FIXTURES / "lm_weights.hdf5", target)
    target.chmod(0o644)
    with h5py.File(target, "r+") as f:
        edit(f)
    return str(target)


def test_missing_dataset_is_named(tmp_path):
    path = _copy_weights(tmp_path, lambda f: f.__delitem__("CNN_proj/W_proj"))
    with pytest.raises(DataError, match=r"missing dataset 'CNN_proj/W_proj' \(expected shape \(124, 16\)\)"):
        load_bilm(FIXTURES / "options.json", path)


def test_shape_mismatch_names_expected_and_found(tmp_path):
    def edit(f):
        del f["CNN/b_cnn_2"]
        f.create_dataset("CNN/b_cnn_2", data=np.zeros(5, dtype=np.float32))

    path = _copy_weights(tmp_path, edit)
    with pytest.raises(DataError, match=r"dataset 'CNN/b_cnn_2' expected shape \(16,\), found \(5,\)"):
        load_bilm(FIXTURES / "options.json", path)


def test_bad_options_key(tmp_path):
    options = json.loads((FIXTURES / "options.json").read_text())
    options["lstm"]["n_layers"] = "two"
    (tmp_path / "o.json").write_text(json.dumps(options))
    with pytest.raises(DataError, match=r"key 'lstm.n_layers' expected int, found 'two'"):
        load_bilm(tmp_path / "o.json", FIXTURES / "lm_weights.hdf5")
    del options["lstm"]["n_layers"]
    (tmp_path / "o.json").write_text(json.dumps(options))
    with pytest.raises(DataError, match=r"missing key 'lstm.n_layers'"):
        load_bilm(tmp_path / "o.json", FIXTURES / "lm_weights.hdf5")


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(DataError, match="weights file not found"):
        load_bilm(FIXTURES / "options.json", tmp_path / "nope.hdf5")
    (tmp_path / "bad.hdf5").write_bytes(b"not hdf5")
    with pytest.raises(DataError, match="not a readable hdf5 file"):
        load_bilm(FIXTURES / "options.json", tmp_path / "bad.hdf5")
    (tmp_path / "bad.json").write_text("{\n oops")
    with pytest.raises(DataError, match=r"line 2: not valid JSON"):
        load_bilm(tmp_path / "bad.json", FIXTURES / "lm_weights.hdf5")
